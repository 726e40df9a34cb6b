import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts 2fa status`.
  struct TwoFactorStatus: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "status",
      abstract: "Whether the second factor is on, and how many recovery codes are left.",
      discussion: """
        Of the logged-in account, or of --user (anyone who can read the database), and until \
        when a new secret from 2fa enable --begin waits for its code. With --json one object: \
        username, enabled, enabledAt, recoveryCodesLeft.
        """)

    @Option(name: .customLong("user"), help: "The account (default: the logged-in one).")
    var user: String?

    @Flag(name: .customLong("json"), help: "Print one JSON object.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      let status = try SecondFactorFlow.status(context.environment, username: user)
      guard !json else {
        context.console.output(SessionPresentation.secondFactorJSON(status))
        return
      }
      context.console.output(SessionPresentation.secondFactor(status))
      if let pending = SessionPresentation.pendingSecondFactor(status) {
        context.console.output(pending)
      }
    }
  }
}
