import AccountsCore
import FoundationEssentials

/// `store health`'s reads and the hosts' reports (migrations "v19" and "v23").
extension PostgresStore {
  public func reportHost(_ report: HostReport) throws(AccountsError) {
    let values: [PGValue] = [
      .text(report.host), report.applied.map(PGValue.init) ?? .null, .text(report.release),
      PGValue(report.failure),
    ]
    // One statement outside any transaction: the only one a sync with nothing behind adds.
    guard let unreached = report.unreached else {
      _ = try statement(
        "SELECT accounts.host_report_sync($1, $2::bigint, $3, $4)", values, for: .readWrite)
      return
    }
    _ = try statement(
      """
      SELECT accounts.host_report_sync($1, $2::bigint, $3, $4, $5::integer, $6::timestamptz,
        $7::timestamptz, $8)
      """,
      values + [
        PGValue(unreached.count), PGValue(unreached.first), PGValue(unreached.last),
        .text(unreached.reason),
      ], for: .readWrite)
  }

  /// What `store health` judges, in one read-only snapshot, without migrating anything: an
  /// older schema is reported, not upgraded.
  ///
  /// A role that may not read the audit log (a host's) is refused as its `log` is.
  public func healthFacts() throws(AccountsError) -> StoreHealthFacts {
    let db = try storing { () throws(StoreError) in try connected() }
    try execute(db, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; \(Self.pinnedPath)")
    do {
      let facts = try healthFacts(db)
      _ = try? db.run("COMMIT")
      return facts
    } catch {
      if db.isAlive && db.inTransaction { _ = try? db.run("ROLLBACK") }
      guard case .storage(.permissionDenied(let location, let reason)) = error else { throw error }
      throw .storage(.readDenied(location: location, reason: reason))
    }
  }

  private func healthFacts(_ db: PGConnection) throws(AccountsError) -> StoreHealthFacts {
    let found = try healthStep(
      db,
      """
      SELECT to_regclass('accounts.schema_migration') IS NOT NULL,
        to_regclass('accounts.host_report') IS NOT NULL,
        to_regclass('accounts.schema_expansion') IS NOT NULL,
        EXISTS (SELECT FROM pg_catalog.pg_attribute AS a
          WHERE a.attrelid = to_regclass('accounts.host_report') AND a.attname = 'unreached'
            AND NOT a.attisdropped)
      """)
    guard found.flag(0, 0) else {
      throw .storage(.failure(location: location, reason: "it holds no accounts store"))
    }
    let steps = Self.appliedSteps(expanded: found.flag(0, 2))
    let store = try healthStep(
      db,
      """
      SELECT accounts.stamp(pg_catalog.now()),
        (SELECT string_agg(m.identifier, ',') FROM accounts.schema_migration AS m),
        (SELECT accounts.stamp(max(m.applied_at)) FROM \(steps) AS m),
        (SELECT accounts.stamp(r.applied_at) FROM accounts.fleet_role AS r WHERE r.id = 1),
        (SELECT g.generation FROM accounts.userdb_generation AS g WHERE g.id = 1),
        (SELECT count(*) FROM accounts.audit_event AS e
         WHERE e.kind = 'login_failure' AND e.occurred_at > pg_catalog.now() - interval '1 hour'),
        \(found.flag(0, 2)
          ? "(SELECT string_agg(x.identifier, ',') FROM accounts.schema_expansion AS x)"
          : "NULL::text")
      """)
    // A store an earlier release made has no reports yet: its hosts are listed all the same.
    let reports =
      found.flag(0, 1)
      ? "accounts.host_report"
      : """
      (SELECT NULL::text AS host, NULL::timestamptz AS contact_at,
        NULL::timestamptz AS synced_at, NULL::bigint AS applied_generation, NULL::text AS release,
        0 AS failures, NULL::text AS last_failure WHERE false)
      """
    // A store before "v23" holds no unreached syncs.
    let unreached =
      found.flag(0, 3)
      ? """
      r.unreached, accounts.stamp(r.unreached_first), accounts.stamp(r.unreached_last),
        r.unreached_reason, accounts.stamp(r.unreached_reported_at)
      """ : "NULL::integer, NULL::text, NULL::text, NULL::text, NULL::text"
    let hosts = try healthStep(
      db,
      """
      WITH known AS (
        SELECT u.host FROM accounts.userdb_host AS u
        UNION SELECT f.name FROM accounts.fleet_host AS f
        UNION SELECT r.host FROM \(reports) AS r)
      SELECT k.host, u.host IS NOT NULL,
        accounts.stamp(greatest(r.contact_at,
          (SELECT e.occurred_at FROM accounts.audit_event AS e
           WHERE e.host = k.host ORDER BY e.id DESC LIMIT 1))),
        accounts.stamp(r.synced_at), r.applied_generation, r.release,
        coalesce(r.failures, 0), r.last_failure, \(unreached)
      FROM known AS k
      LEFT JOIN accounts.userdb_host AS u ON u.host = k.host
      LEFT JOIN \(reports) AS r ON r.host = k.host
      ORDER BY k.host
      """)
    let recorded = RecordedMigrations(steps: store.text(0, 1), expansions: store.text(0, 6))
    let schema = migrations.contents(of: recorded, release: release) { () -> Bool in true }
    let identifiers = Array(recorded.steps.keys) + recorded.expansions
    return try storing { () throws(StoreError) in
      try decoding(location: location) { () throws(PGUnreadableValue) in
        StoreHealthFacts(
          now: try store.decode(Date.self, 0, 0), schema: schema,
          storeSchema: Self.newest(identifiers),
          programSchema: Self.newest(migrations.map(\.identifier)),
          rolesAppliedAt: try store.decode(Date?.self, 0, 3),
          migratedAt: try store.decode(Date?.self, 0, 2),
          generation: try store.decode(Int64?.self, 0, 4) ?? 0,
          failedLogins: try store.decode(Int.self, 0, 5),
          hosts: try (0..<hosts.count).map { (row: Int) throws(PGUnreadableValue) in
            HostHealthFacts(
              name: try hosts.decode(String.self, row, 0),
              keepsRecords: try hosts.decode(Bool.self, row, 1),
              lastContact: try hosts.decode(Date?.self, row, 2),
              lastSync: try hosts.decode(Date?.self, row, 3),
              applied: try hosts.decode(Int64?.self, row, 4),
              release: try hosts.decode(String?.self, row, 5),
              failures: try hosts.decode(Int.self, row, 6),
              lastFailure: try hosts.decode(String?.self, row, 7),
              unreached: try Self.unreachedReport(hosts, row))
          })
      }
    }
  }

  /// The unreached syncs of `row` (columns 8 to 12); nil when it reported none.
  private static func unreachedReport(_ rows: PGRows, _ row: Int) throws(PGUnreadableValue)
    -> UnreachedReport?
  {
    guard let count = try rows.decode(Int?.self, row, 8),
      let first = try rows.decode(Date?.self, row, 9),
      let last = try rows.decode(Date?.self, row, 10),
      let reportedAt = try rows.decode(Date?.self, row, 12)
    else { return nil }
    return UnreachedReport(
      count: count, first: first, last: last,
      reason: try rows.decode(String?.self, row, 11) ?? "", reportedAt: reportedAt)
  }

  /// The highest N of the migrations `identifiers` ("vN") names.
  static func newest<S: Sequence<String>>(_ identifiers: S) -> Int {
    identifiers.compactMap { Int($0.dropFirst()) }.max() ?? 0
  }

  private func healthStep(_ db: PGConnection, _ sql: String) throws(AccountsError) -> PGRows {
    do {
      return try db.run(sql)
    } catch {
      throw .storage(translate(error))
    }
  }
}
