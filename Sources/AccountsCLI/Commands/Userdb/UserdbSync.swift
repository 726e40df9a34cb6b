import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts userdb sync`.
  struct UserdbSync: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "sync",
      abstract: "Rebuild this host's user records from the store.",
      discussion: """
        Writes what differs, removes what the store no longer has, gives numbers to accounts \
        and groups without one (made before the store gave numbers; a fleet host's role may \
        not: it says so): the files of what changed since the folder was last written, or \
        with --full (and where the folder was changed by another hand) the whole folder. \
        Run as root, at boot and on a timer where hosts share a store. Each sync tells a \
        PostgreSQL store that this host was heard from, and whether it worked (store health); \
        one that cannot reach the server is kept on this host, beside the login cache, and \
        told by the next that does.
        """)

    @Flag(name: .customLong("full"), help: "Compare the whole folder with the store.")
    var full = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      let env = context.environment
      let outcome: UserdbFlow.Outcome
      do {
        outcome = try UserdbFlow.sync(env, full: full)
      } catch {
        HostReporting.failed(env, error, release: AccountsCommand.version)
        throw error
      }
      HostReporting.synced(env, outcome, release: AccountsCommand.version)
      UserdbOutput.show(outcome, context)
      // The server was reached: the login cache's offline events go to its log.
      OfflineEventDelivery.deliver(context.environment)
    }
  }
}
