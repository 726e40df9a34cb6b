import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts user list`.
  struct UserList: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "list",
      abstract: "List every account: user name, full name, e-mail, status, last login.",
      discussion: """
        STATUS holds owner, disabled, expired, locked and must-change as they apply. With \
        --json, one object per line with every key always present: username, fullName, email, \
        owner, disabled, locked, lockedUntil, mustChangePassword, failures, createdAt, \
        lastLogin, expiresAt, expired, groups.
        """)

    @Flag(name: .customLong("json"), help: "Print one JSON object per line.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      let now = context.environment.now()
      var first = true
      try AccountQuery.list(context.environment) { listing in
        if json {
          context.bulk.escapedLine { AccountPresentation.json(listing, now: now, into: &$0) }
        } else {
          if first { context.bulk.line(AccountPresentation.header) }
          context.bulk.line(AccountPresentation.line(listing, now: now))
        }
        first = false
      }
    }
  }
}
