import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts log`: the audit log (administrator).
  struct Log: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "log",
      abstract: "Show what happened: activations, logins, lockouts, unlocks, resets.",
      discussion: """
        Oldest first, times in UTC. Never shows a password or a hash. The log survives reset.
        """)

    @Option(name: .customLong("limit"), help: "Show only the newest N events.")
    var limit: Int?

    @Flag(name: .customLong("json"), help: "Print one JSON object per line.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func validate() throws {
      if let limit, limit < 1 { throw ValidationError("--limit must be at least 1.") }
    }

    func run() throws {
      let context = try global.makeContext()
      for event in try AuditLogQuery.run(context.environment, limit: limit) {
        context.console.output(json ? AuditLogQuery.json(event) : AuditLogQuery.line(event))
      }
    }
  }
}
