import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts 2fa recovery-codes`.
  struct TwoFactorRecoveryCodes: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "recovery-codes",
      abstract: "Make ten new recovery codes; the old ones stop working (asks password and code).")

    @OptionGroup var credentials: CredentialOptions

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      try SecondFactorFlow.newRecoveryCodes(
        context.environment, username: credentials.username)
    }
  }
}
