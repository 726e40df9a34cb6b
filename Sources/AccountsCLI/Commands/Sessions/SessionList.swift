import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts session list`.
  struct SessionList: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "list",
      abstract: "List the live sessions: id, user name, started, last seen, ends, 2FA, host.",
      discussion: """
        ENDS is the sooner of the absolute end and the idle end; HOST the host the session was \
        started on (- for a session from before hosts were recorded). With --json, one object \
        per line: session, username, startedAt, lastSeenAt, expiresAt, idleUntil, \
        secondFactor, host.
        """)

    @Option(name: .customLong("user"), help: "Only this account's sessions.")
    var user: String?

    @Flag(name: .customLong("json"), help: "Print one JSON object per line.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      // An unknown --user is refused before anything is printed.
      if let user { _ = try AccountQuery.show(context.environment, username: user) }
      // The header once the store answered: a store that refuses the read prints nothing.
      var headed = json
      try SessionAdminFlow.list(context.environment, username: user) { listing in
        if !headed {
          context.bulk.line(SessionPresentation.header)
          headed = true
        }
        if json {
          context.bulk.line(SessionPresentation.json(listing))
        } else {
          context.bulk.line(SessionPresentation.line(listing))
        }
      }
      if !headed { context.bulk.line(SessionPresentation.header) }
    }
  }
}
