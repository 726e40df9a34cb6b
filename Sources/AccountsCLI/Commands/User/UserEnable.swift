import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts user enable NAME`.
  struct UserEnable: UserRecordChangingCommand {
    static let configuration = CommandConfiguration(
      commandName: "enable", abstract: "Let a disabled account log in again.")

    @Argument(help: "The user name.")
    var username: String

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      try UserStateFlow.run(context.environment, username: username, disabled: false)
    }
  }
}
