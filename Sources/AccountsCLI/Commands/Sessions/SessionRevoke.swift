import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts session revoke`.
  struct SessionRevoke: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "revoke",
      abstract: "End one session (by its ID) or every session of an account (--user).",
      discussion: "An unknown or ended session, or an unknown account, exits 5.")

    @Argument(help: "The session's ID (from accounts session list).")
    var id: Int64?

    @Option(name: .customLong("user"), help: "End every session of this account.")
    var user: String?

    @OptionGroup var global: GlobalOptions

    func validate() throws {
      if (id == nil) == (user == nil) { throw ValidationError(Messages.revokeNeedsOneTarget) }
    }

    func run(_ context: CommandContext) throws {
      if let id {
        try SessionAdminFlow.revoke(context.environment, id: id)
      } else if let user {
        try SessionAdminFlow.revoke(context.environment, username: user)
      }
    }
  }
}
