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
}
