import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts 2fa …`.
  struct TwoFactor: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "2fa",
      abstract: "A second factor after the password: TOTP codes from an authenticator app.",
      discussion: """
        Codes follow RFC 6238 (SHA-1, 6 digits, 30 seconds; one step of clock skew either \
        way), each accepted once. Ten recovery codes, each usable once, stand in for a code. \
        The secret is stored encrypted under the key file beside the database \
        (<database>.key): back it up apart from the database.
        """,
      subcommands: [
        TwoFactorEnable.self, TwoFactorDisable.self, TwoFactorStatus.self,
        TwoFactorRecoveryCodes.self,
      ])
  }
}
