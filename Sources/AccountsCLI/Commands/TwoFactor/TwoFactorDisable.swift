import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts 2fa disable`.
  struct TwoFactorDisable: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "disable",
      abstract: "Turn the second factor off (asks the password and a code).",
      discussion: "Other sessions of the account end. Not on: exit 1.")

    @OptionGroup var credentials: CredentialOptions

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      try SecondFactorFlow.disable(context.environment, username: credentials.username)
    }
  }
}
