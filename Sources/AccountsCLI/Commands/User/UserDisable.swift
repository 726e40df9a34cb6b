import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts user disable NAME`.
  struct UserDisable: UserRecordChangingCommand {
    static let configuration = CommandConfiguration(
      commandName: "disable",
      abstract: "Stop an account from logging in (it is told only Invalid user name or password!).")

    @Argument(help: "The user name.")
    var username: String

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      try UserStateFlow.run(context.environment, username: username, disabled: true)
    }
  }
}
