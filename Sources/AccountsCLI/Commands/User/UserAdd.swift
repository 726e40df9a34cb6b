import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts user add`.
  struct UserAdd: UserRecordChangingCommand {
    static let configuration = CommandConfiguration(
      commandName: "add",
      abstract: "Add an account (the Activation Form's fields and rules).",
      discussion: """
        Asks for User name, Full name, E-mail address, Password and Password again; a flag \
        skips its prompt. Refused on a Public device (activate it first). Each --group must \
        exist (exit 5 otherwise, nothing asked or written). --expires takes a date \
        (2026-12-31: the account expires at 00:00 UTC of that day, as shadow's expire field \
        counts UTC days), an RFC 3339 time with its zone (2026-12-31T18:00:00Z) or never. \
        --home (default /home/NAME) and --shell (default /bin/bash) are what its user record \
        says (accounts userdb): absolute paths without ':' (exit 2 otherwise). Where this host \
        keeps user records, a name the system already has (getent passwd) is refused (exit 1).
        """)

    @OptionGroup var form: AccountFormOptions

    @Option(
      name: .customLong("group"),
      help: ArgumentHelp("A group the account joins (repeatable).", valueName: "group"))
    var groups: [String] = []

    @Option(
      name: .customLong("expires"),
      help: ArgumentHelp(
        "When the account expires: a date (00:00 UTC), an RFC 3339 time, or never.",
        valueName: "date"))
    var expires: String?

    @OptionGroup var linux: LinuxUserOptions

    @OptionGroup var global: GlobalOptions

    func validate() throws {
      if let expires, AccountExpiry(parsing: expires) == nil {
        throw ValidationError(Messages.expiresForms)
      }
      try linux.validate()
    }

    func run(_ context: CommandContext) throws {
      try UserAddFlow.run(
        context.environment, options: form.options, groups: groups,
        expiry: expires.flatMap(AccountExpiry.init(parsing:)) ?? .never, home: linux.home,
        shell: linux.shell)
    }
  }
}
