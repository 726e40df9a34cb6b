import AccountsCore
import ArgumentParser

extension QRStyle: ExpressibleByArgument {}

extension AccountsCommand {
  /// `accounts 2fa enable`.
  struct TwoFactorEnable: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "enable",
      abstract: "Turn on a second factor: scan the QR code, type a code, keep the recovery codes.",
      discussion: """
        Asks for User name and Password, shows a QR code, the otpauth:// URI and the key, then \
        asks for a Verification code from the app: nothing is stored until one is right. \
        Prints ten recovery codes, shown only this once. Other sessions of the account end. \
        For scripts, in two steps: --begin checks the password and keeps a new secret pending \
        for 10 minutes (the QR code only on a terminal), printing the URI and the key; \
        --confirm reads the password, then a code of that secret, and turns it on.
        """)

    @OptionGroup var credentials: CredentialOptions

    @Option(name: .customLong("qr"), help: "How to show the QR code: terminal or none.")
    var qr: QRStyle?

    @Flag(
      name: .customLong("begin"),
      help: "Only keep a new secret pending (10 minutes) and show it; confirm with --confirm.")
    var begin = false

    @Flag(
      name: .customLong("confirm"),
      help: "Turn the pending secret on: reads the password, then a code of it.")
    var confirm = false

    @OptionGroup var global: GlobalOptions

    func validate() throws {
      if begin && confirm { throw ValidationError(Messages.enableStepsConflict) }
      if confirm && qr != nil { throw ValidationError(Messages.confirmShowsNoQR) }
    }

    func run(_ context: CommandContext) throws {
      let env = context.environment
      if begin {
        try SecondFactorFlow.begin(env, username: credentials.username, qr: qr ?? .terminal)
      } else if confirm {
        try SecondFactorFlow.confirm(env, username: credentials.username)
      } else {
        try SecondFactorFlow.enable(env, username: credentials.username, qr: qr ?? .terminal)
      }
    }
  }
}
