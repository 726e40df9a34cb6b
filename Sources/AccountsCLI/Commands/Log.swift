import AccountsCore
import ArgumentParser
import FoundationEssentials

extension AccountsCommand {
  /// `accounts log`: the audit log (administrator).
  struct Log: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "log",
      abstract: "Show what happened: activations, logins, lockouts, account changes, resets.",
      discussion: """
        Oldest first, times in UTC, each event with the host that wrote it (`on <host>`; none \
        for events from before hosts were recorded). Never shows a password or a hash. The log \
        survives reset. Filters combine. Event kinds: \
        \(AuditEventKind.known.map(\.rawValue).joined(separator: ", ")).
        """)

    @Option(name: .customLong("user"), help: "Only events about this user name.")
    var user: String?

    @Option(name: .customLong("event"), help: "Only events of this kind.")
    var event: String?

    @Option(
      name: .customLong("since"),
      help: ArgumentHelp(
        "Only events since a UTC date (2026-11-23), time (2026-11-23T10:00:00Z) or age (30m, 2h, 7d).",
        valueName: "time"))
    var since: String?

    @Option(
      name: .customLong("host"),
      help: ArgumentHelp("Only events written by this host (its exact name).", valueName: "name"))
    var host: String?

    @Option(name: .customLong("limit"), help: "Show only the newest N matching events.")
    var limit: Int?

    @Flag(name: .customLong("json"), help: "Print one JSON object per line.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func validate() throws {
      if let limit, limit < 1 { throw ValidationError(Messages.limitAtLeastOne) }
      if let event, !AuditEventKind.known.contains(AuditEventKind(rawValue: event)) {
        throw ValidationError(Messages.eventKinds)
      }
      if let since, AuditLogQuery.since(since, now: Date()) == nil {
        throw ValidationError(Messages.sinceForms)
      }
      if let user, user.isEmpty { throw ValidationError(Messages.userFilterEmpty) }
      if let host, host.isEmpty { throw ValidationError(Messages.hostFilterEmpty) }
    }

    func run(_ context: CommandContext) throws {
      let env = context.environment
      let query = try AuditLogQuery.query(
        user: user, event: event, since: since, host: host, limit: limit, now: env.now())
      try AuditLogQuery.run(env, query: query) { event in
        context.bulk.line(json ? AuditPresentation.json(event) : AuditPresentation.line(event))
      }
    }
  }
}
