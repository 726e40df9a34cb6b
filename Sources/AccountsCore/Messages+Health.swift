import FoundationEssentials

/// The sentences of `store health`: a PostgreSQL store's state for a person and a monitoring
/// system.
extension Messages {
  /// `store health` on an SQLite store.
  public static let healthNeedsPostgres =
    "store health needs a PostgreSQL store (a postgresql:// URI in --database or "
    + "ACCOUNTS_DATABASE): an SQLite store has no server or hosts to watch."
  /// A `store health` threshold out of its range.
  public static func healthThreshold(_ flag: String, _ value: Int) -> String {
    "\(flag) \(value) is not valid: give a whole number from "
      + (flag.hasPrefix("--fail") ? "1" : "0") + " to 100000."
  }
  /// The first line: the verdict.
  public static func healthVerdict(_ problems: Int) -> String {
    switch problems {
    case 0: return "Store health: healthy."
    case 1: return "Store health: degraded (1 problem)."
    default: return "Store health: degraded (\(problems) problems)."
    }
  }
  /// The store's location, reached.
  public static func healthStore(_ location: String) -> String { "Store: \(location)" }
  /// The schema line.
  public static func healthSchema(store: Int, program: Int) -> String {
    "Schema: v\(store) (this program's: v\(program))"
  }
  /// The roles line: when `store roles --apply` last ran, or never.
  public static func healthRoles(_ appliedAt: Date?) -> String {
    guard let appliedAt else { return "Roles: never applied (one role owns the store)" }
    return "Roles: applied at \(Timestamp.string(from: appliedAt))"
  }
  /// The change counter line.
  public static func healthGeneration(_ generation: Int64) -> String {
    "Change counter: \(generation)"
  }
  /// The failed logins line.
  public static func healthFailedLogins(_ count: Int) -> String {
    "Failed logins in the last hour: \(count)"
  }
  /// No host is known.
  public static let healthNoHosts = "Hosts: none"

  /// One problem, in one sentence.
  public static func healthProblem(_ problem: HealthProblem) -> String {
    // A reason is a sentence of its own: it ends this one without its full stop.
    func clause(_ reason: String) -> String {
      reason.hasSuffix(".") ? String(reason.dropLast()) : reason
    }
    switch problem {
    case .schemaOlder(let store, let program):
      return "The store's schema v\(store) is older than this program's v\(program): the next "
        + "write by the schema's owner brings it up to date."
    case .schemaNewer(let store, let program):
      return "The store's schema v\(store) is newer than this program's v\(program): upgrade "
        + "accounts on this host."
    case .rolesBeforeMigration(let applied, let migrated):
      return "The fleet's roles got their rights at \(Timestamp.string(from: applied)), before "
        + "the migration of \(Timestamp.string(from: migrated)): run accounts store roles "
        + "--apply again."
    case .silent(let host, nil):
      return "\(host) keeps user records but was never heard from."
    case .silent(let host, let last?):
      return "\(host) was last heard from at \(Timestamp.string(from: last))."
    case .behind(let host, nil, let generation, _):
      return "\(host) never reported a sync (the store's change counter is \(generation))."
    case .behind(let host, let applied?, let generation, let lastSync):
      let since = lastSync.map { " since \(Timestamp.string(from: $0))" } ?? ""
      return "\(host) is behind: its records hold change \(applied) of \(generation), "
        + "unsynced\(since)."
    case .failing(let host, let failures, let reason):
      let syncs = failures == 1 ? "last sync failed" : "last \(failures) syncs failed"
      let why = reason.map { ": " + clause($0) } ?? ""
      return "\(host)'s \(syncs)\(why)."
    case .unreached(let host, let count, let first, let last, let reason):
      let times =
        count == 1
        ? "once, at \(Timestamp.string(from: first))"
        : "\(count) times between \(Timestamp.string(from: first)) and "
          + Timestamp.string(from: last)
      return "\(host) could not reach the server \(times), last: \(clause(reason))."
    case .failedLogins(let count):
      return count == 1
        ? "1 failed login in the last hour." : "\(count) failed logins in the last hour."
    }
  }
}
