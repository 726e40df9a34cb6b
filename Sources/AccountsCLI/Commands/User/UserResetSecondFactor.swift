import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts user reset-2fa NAME`.
  struct UserResetSecondFactor: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "reset-2fa",
      abstract: "Turn off an account's second factor (a lost phone); its sessions end.",
      discussion: """
        The person logs in with the password alone until they run accounts 2fa enable again. \
        Not on: exit 1.
        """)

    @Argument(help: "The user name.")
    var username: String

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      try SecondFactorFlow.reset(context.environment, username: username)
    }
  }
}
