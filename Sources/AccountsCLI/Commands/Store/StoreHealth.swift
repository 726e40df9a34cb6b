import AccountsCore
import ArgumentParser

extension AccountsCommand.StoreCommand {
  /// `accounts store health [--json] [thresholds]`.
  struct Health: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "health",
      abstract: "Tell whether a PostgreSQL store and its hosts are well, for a person or a check.",
      discussion: """
        For an administrator (or the store's owner): whether the server answers, the schema \
        against this program's, when the fleet's roles got their rights, each host's last \
        contact and last sync and whether it is behind, the syncs that could not reach the \
        server (once a later sync reported them), the failed logins of the last hour. \
        Changes nothing. Exit 0 healthy, 1 degraded (the first line says, then one sentence a \
        problem), 3 unreachable (one sentence, after at most the connect timeout). With \
        --json, one object with every key always present: healthy, problems, location, \
        schema {store, program, state}, rolesAppliedAt, generation, failedLoginsLastHour, \
        hosts [{name, keepsRecords, lastContact, lastSync, applied, release, failures, \
        lastFailure, unreached, unreachedFirst, unreachedLast, unreachedReason, \
        unreachedReportedAt, problems}].
        """)

    @Option(
      name: .customLong("silent-minutes"),
      help: "A host that keeps records unheard from this long is degraded (default 15).")
    var silentMinutes = 15

    @Option(
      name: .customLong("behind-minutes"),
      help: "A host behind the store whose last sync is this old is degraded (default 10).")
    var behindMinutes = 10

    @Option(
      name: .customLong("failures"),
      help: "This many failed syncs in a row make a host degraded (default 1).")
    var failures = 1

    @Option(
      name: .customLong("failed-logins"),
      help: "This many failed logins in the last hour make the store degraded (default: never).")
    var failedLogins: Int?

    @Option(
      name: .customLong("unreached-hours"),
      help: "Unreached syncs reported within this many hours make a host degraded (default 24).")
    var unreachedHours = 24

    @Flag(name: .customLong("json"), help: "Print one JSON object.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func validate() throws {
      _ = try AccountsCommand.StoreCommand.postgresURI(
        global, refusal: Messages.healthNeedsPostgres)
      for (flag, value) in [
        ("--silent-minutes", silentMinutes), ("--behind-minutes", behindMinutes),
        ("--failures", failures), ("--failed-logins", failedLogins ?? 1),
        ("--unreached-hours", unreachedHours),
      ] where !(0...100_000).contains(value) || (flag.hasPrefix("--fail") && value == 0) {
        throw ValidationError(Messages.healthThreshold(flag, value))
      }
    }

    func run(_ context: CommandContext) throws {
      let store = try AccountsCommand.StoreCommand.postgresStore(
        global, refusal: Messages.healthNeedsPostgres, context: context)
      let facts = try store.healthFacts()
      let limits = HealthThresholds(
        silentMinutes: silentMinutes, behindMinutes: behindMinutes, failures: failures,
        failedLogins: failedLogins, unreachedHours: unreachedHours)
      let problems = StoreHealth.problems(facts, limits)
      if json {
        context.console.output(
          HealthPresentation.json(facts, problems: problems, location: store.location))
      } else {
        HealthPresentation.lines(facts, problems: problems, location: store.location)
          .forEach(context.console.output)
      }
      let status = StoreHealth.status(problems)
      if status != .success { throw SilentExit(status: status) }
    }
  }
}
