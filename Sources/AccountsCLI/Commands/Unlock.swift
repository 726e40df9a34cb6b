import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts unlock NAME`: clear a user name's failed logins and lock (administrator).
  struct Unlock: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "unlock",
      abstract: "Clear the failed-login count and lock of a user name.")

    @Argument(help: "The user name to unlock.")
    var username: String

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      try UnlockFlow.run(context.environment, username: username)
    }
  }
}
