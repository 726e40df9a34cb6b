import AccountsCore
import ArgumentParser

extension AccountsCommand.StoreCommand.Cache {
  /// `accounts store cache disable`.
  struct Disable: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "disable",
      abstract: "Remove this host's login cache.",
      discussion: """
        Its entries and any offline events not yet delivered are gone with it: run a command \
        that reaches the server first (accounts userdb sync, a login) to deliver them.
        """)

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      let path = try LoginCacheFlow.disable(context.environment)
      context.console.output(Messages.loginCacheDisabled(path))
    }
  }
}
