import FoundationEssentials

/// How `store health` prints a store's health: lines for a person, one JSON object for a
/// monitoring system.
public enum HealthPresentation {
  /// The text form: the verdict, each problem, the store's facts, then a table of its hosts.
  public static func lines(
    _ facts: StoreHealthFacts, problems: [HealthProblem], location: String
  ) -> [String] {
    var lines = [Messages.healthVerdict(problems.count)]
    lines += problems.map(Messages.healthProblem)
    lines += [
      Messages.healthStore(location),
      Messages.healthSchema(store: facts.storeSchema, program: facts.programSchema),
      Messages.healthRoles(facts.rolesAppliedAt),
      Messages.healthGeneration(facts.generation),
      Messages.healthFailedLogins(facts.failedLogins),
    ]
    guard !facts.hosts.isEmpty else { return lines + [Messages.healthNoHosts] }
    lines.append(
      row("HOST", "RECORDS", "LAST CONTACT", "LAST SYNC", "APPLIED", "FAILED", "RELEASE"))
    for host in facts.hosts {
      lines.append(
        row(
          host.name, host.keepsRecords ? "yes" : "no", time(host.lastContact),
          time(host.lastSync), host.applied.map(String.init) ?? "-", String(host.failures),
          host.release ?? "-"))
    }
    return lines
  }

  /// The JSON form, every key always present: healthy, problems (sentences), location,
  /// schema {store, program, state}, rolesAppliedAt, generation, failedLoginsLastHour, and
  /// hosts (name, keepsRecords, lastContact, lastSync, applied, release, failures,
  /// lastFailure, unreached, unreachedFirst, unreachedLast, unreachedReason,
  /// unreachedReportedAt, problems).
  public static func json(
    _ facts: StoreHealthFacts, problems: [HealthProblem], location: String
  ) -> String {
    let hosts = facts.hosts.map { host in
      JSON.object([
        "name": JSON.string(host.name),
        "keepsRecords": JSON.bool(host.keepsRecords),
        "lastContact": date(host.lastContact),
        "lastSync": date(host.lastSync),
        "applied": host.applied.map(String.init) ?? "null",
        "release": JSON.string(host.release),
        "failures": String(host.failures),
        "lastFailure": JSON.string(host.lastFailure),
        "unreached": String(host.unreached?.count ?? 0),
        "unreachedFirst": date(host.unreached?.first),
        "unreachedLast": date(host.unreached?.last),
        "unreachedReason": JSON.string(host.unreached?.reason),
        "unreachedReportedAt": date(host.unreached?.reportedAt),
        "problems": array(problems.filter { $0.host == host.name }),
      ])
    }
    return JSON.object([
      "healthy": JSON.bool(problems.isEmpty),
      "problems": array(problems),
      "location": JSON.string(location),
      "schema": JSON.object([
        "store": String(facts.storeSchema),
        "program": String(facts.programSchema),
        "state": JSON.string(state(facts.schema)),
      ]),
      "rolesAppliedAt": date(facts.rolesAppliedAt),
      "generation": String(facts.generation),
      "failedLoginsLastHour": String(facts.failedLogins),
      "hosts": "[" + hosts.joined(separator: ",") + "]",
    ])
  }

  private static func array(_ problems: [HealthProblem]) -> String {
    "[" + problems.map { JSON.string(Messages.healthProblem($0)) }.joined(separator: ",") + "]"
  }

  private static func state(_ schema: SchemaContents) -> String {
    switch schema {
    case .older: return "older"
    case .newer, .needsRelease: return "newer"
    case .absent, .foreign, .current: return "current"
    }
  }

  private static func date(_ date: Date?) -> String {
    date.map { JSON.string(Timestamp.string(from: $0)) } ?? "null"
  }

  private static func time(_ date: Date?) -> String {
    date.map { Timestamp.string(from: $0) } ?? "never"
  }

  private static func row(_ columns: String...) -> String {
    let widths = [20, 7, 24, 24, 8, 6]
    return zip(columns, widths).map { AccountPresentation.pad($0, $1) }.joined(separator: "  ")
      + "  " + (columns.last ?? "")
  }
}

extension HealthProblem {
  /// The host a problem is about; nil for the store's own.
  public var host: String? {
    switch self {
    case .silent(let host, _), .behind(let host, _, _, _), .failing(let host, _, _),
      .unreached(let host, _, _, _, _):
      return host
    case .schemaOlder, .schemaNewer, .rolesBeforeMigration, .failedLogins: return nil
    }
  }
}
