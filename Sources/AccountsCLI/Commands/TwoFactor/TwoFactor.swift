import AccountsCore
import ArgumentParser

extension QRStyle: ExpressibleByArgument {}

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

  /// The user name and password options of the `2fa` commands.
  struct CredentialOptions: ParsableArguments {
    @Option(name: .customLong("username"), help: "The user name (skips its prompt).")
    var username: String?

    @Flag(
      name: .customLong("password-stdin"),
      help: "Read the password, then the code, as lines of standard input.")
    var passwordStdin = false
  }

  /// `accounts 2fa enable`.
  struct TwoFactorEnable: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "enable",
      abstract: "Turn on a second factor: scan the QR code, type a code, keep the recovery codes.",
      discussion: """
        Asks for User name and Password, shows a QR code, the otpauth:// URI and the key, then \
        asks for a Verification code from the app: nothing is stored until one is right. \
        Prints ten recovery codes, shown only this once. Other sessions of the account end.
        """)

    @OptionGroup var credentials: CredentialOptions

    @Option(name: .customLong("qr"), help: "How to show the QR code: terminal or none.")
    var qr: QRStyle = .terminal

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      try SecondFactorFlow.enable(context.environment, username: credentials.username, qr: qr)
    }
  }

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

  /// `accounts 2fa status`.
  struct TwoFactorStatus: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "status",
      abstract: "Whether the second factor is on, and how many recovery codes are left.",
      discussion: """
        Of the logged-in account, or of --user (anyone who can read the database). With --json \
        one object: username, enabled, enabledAt, recoveryCodesLeft.
        """)

    @Option(name: .customLong("user"), help: "The account (default: the logged-in one).")
    var user: String?

    @Flag(name: .customLong("json"), help: "Print one JSON object.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      let status = try SecondFactorFlow.status(context.environment, username: user)
      context.console.output(
        json
          ? SessionPresentation.secondFactorJSON(status)
          : SessionPresentation.secondFactor(status))
    }
  }
}
