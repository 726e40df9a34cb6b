import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts userdb enable [--folder DIR] [--uids FIRST-LAST]`.
  struct UserdbEnable: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "enable",
      abstract: "Keep user records of this store on this host, and write them now.",
      discussion: """
        --folder (default /etc/userdb; libnss-systemd also reads /run/userdb) is created mode \
        0755 when missing, and removed again by disable. --uids sets the store's range for \
        every host (default 20000-29999; any range from 1000 to 2147483647 outside the ones \
        systemd and Debian reserve, such as 200000-399999; the administrator's role only): \
        once any host keeps records, accounts and groups get the next free number of it when \
        they are made, wherever that runs (those made before, at this enable or a sync), \
        never one the system making them knows nor one given before (not even to a removed \
        account). Without --uids a fleet host's role may run it. Run as root.
        """)

    @Option(
      name: .customLong("folder"),
      help: ArgumentHelp("Where this host keeps the records.", valueName: "dir"))
    var folder: String?

    @Option(
      name: .customLong("uids"),
      help: ArgumentHelp("The range uids and gids are given from.", valueName: "first-last"))
    var uids: String?

    @OptionGroup var global: GlobalOptions

    func validate() throws {
      if let uids, let refusal = PosixIDRange.refusal(uids) { throw ValidationError(refusal) }
    }

    func run(_ context: CommandContext) throws {
      let outcome = try UserdbFlow.enable(
        context.environment, folder: folder, range: uids.flatMap(PosixIDRange.init(parsing:)))
      HostReporting.synced(context.environment, outcome, release: AccountsCommand.version)
      UserdbOutput.show(outcome, context)
    }
  }
}
