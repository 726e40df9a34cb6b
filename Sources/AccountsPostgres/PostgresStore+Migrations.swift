import AccountsCore
import FoundationEssentials

/// The schema's migrations: an absent schema made whole by the first write, an existing one
/// upgraded by `accounts store upgrade` alone (its owner), one transaction under the migration
/// lock either way.
extension PostgresStore {
  /// Upgrades the store: every migration it lacks, but, without `contract`, this release's
  /// contract steps and those after them, which wait until every host runs this release.
  ///
  /// Run by the schema's owner. A store already current gets nothing (the same answer each
  /// time); an absent one is no upgrade (the first write makes it).
  public func upgrade(contract: Bool) throws(AccountsError) -> StoreUpgrade {
    try storing { () throws(StoreError) in
      let db = try connected()
      let contents = try inspect(db)
      if let refusal = contents.refusal(location: location, schema: "accounts") { throw refusal }
      if contents == .absent {
        throw .failure(location: location, reason: "it holds no accounts store")
      }
      return try migrate(db, upgrading: contract)
    }
  }

  /// True when `recorded` is a store this program uses as it is.
  func isCurrent(_ recorded: RecordedMigrations) -> Bool {
    migrations.contents(of: recorded, release: release) { () -> Bool in true } == .current
  }

  /// What the database holds; a schema that looks foreign is looked at again once no
  /// migration is running.
  ///
  /// Another process creating the schema at this moment can make it look foreign for an
  /// instant: its tables found by one look at the catalog, its migration table not yet by
  /// another (12 first writes racing on a new database showed it). Waiting for the migration
  /// lock, then looking in a new statement, sees its migration whole.
  func inspect(_ db: PGConnection) throws(StoreError) -> SchemaContents {
    let first = try look(db).contents
    guard first == .foreign else { return first }
    return try underMigrationLock(db) { () throws(StoreError) in
      let contents = try look(db).contents
      do {
        try db.run("COMMIT")
      } catch {
        throw translate(error)
      }
      return contents
    }
  }

  /// Runs `body` in a new transaction that holds the migration lock (`body` ends it).
  ///
  /// The lock is the transaction's (`pg_advisory_xact_lock`), never the session's: behind
  /// a pooler in transaction mode a session lock could be taken on one server connection and
  /// released on another, and stay held for good. The transaction is READ COMMITTED, so each
  /// statement after the lock sees what any migration that held it committed.
  private func underMigrationLock<T>(
    _ db: PGConnection, _ body: () throws(StoreError) -> T
  ) throws(StoreError) -> T {
    do {
      try db.run(
        """
        BEGIN ISOLATION LEVEL READ COMMITTED; \(Self.pinnedPath)
        SELECT pg_catalog.pg_advisory_xact_lock(\(Self.migrationLock))
        """)
      return try body()
    } catch {
      if db.isAlive && db.inTransaction { _ = try? db.run("ROLLBACK") }
      if let error = error as? StoreError { throw error }
      throw translate(error)
    }
  }

  /// One look at the catalog (both questions answered from the same snapshot of `pg_class`),
  /// then at the migrations recorded: nil where there is no migration table.
  private func look(_ db: PGConnection) throws(StoreError) -> (
    contents: SchemaContents, recorded: RecordedMigrations?
  ) {
    do {
      let rows = try db.run(
        """
        SELECT coalesce(bool_or(c.relname = 'schema_migration' AND c.relkind = 'r'), false),
               count(*) > 0,
               coalesce(bool_or(c.relname = 'schema_expansion' AND c.relkind = 'r'), false)
        FROM pg_catalog.pg_class AS c
        JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
        WHERE n.nspname = 'accounts' AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
        """)
      var recorded: RecordedMigrations?
      if rows.flag(0, 0) {
        // The release beside each step came with the table of expansions ("v18").
        let expanded = rows.flag(0, 2)
        let steps = try db.run(
          "SELECT identifier, \(expanded ? "release" : "NULL") FROM accounts.schema_migration")
        var expansions = Set<String>()
        if expanded {
          let found = try db.run("SELECT identifier FROM accounts.schema_expansion")
          expansions = Set((0..<found.count).compactMap { found.text($0, 0) })
        }
        recorded = RecordedMigrations(
          steps: Dictionary(
            (0..<steps.count).compactMap { row in
              steps.text(row, 0).map { ($0, steps.text(row, 1)) }
            }, uniquingKeysWith: { a, _ in a }),
          expansions: expansions)
      }
      let contents = migrations.contents(of: recorded, release: release) { rows.flag(0, 1) }
      return (contents, recorded)
    } catch {
      throw translate(error)
    }
  }

  /// Runs, in one transaction and one process at a time, the migrations this database lacks:
  /// with `upgrading` nil only into an absent schema (the first write makes it whole), else
  /// what `store upgrade` applies (`upgrading`: with its contract steps).
  ///
  /// The migration lock, then a second look under it, in a statement of its own: a look taken
  /// before the lock would see the catalog as it was before another process's migration
  /// committed, and create the tables a second time.
  @discardableResult
  func migrate(_ db: PGConnection, upgrading: Bool?) throws(StoreError) -> StoreUpgrade {
    try underMigrationLock(db) { () throws(StoreError) in
      let (contents, recorded) = try look(db)
      if let refusal = contents.refusal(location: location, schema: "accounts") { throw refusal }
      let (apply, wait): ([PostgresMigration], [PostgresMigration])
      if let recorded {
        // Made or upgraded by another process meanwhile: a write goes on only where it is
        // current; an upgrade applies what is left.
        guard let upgrading else {
          if contents != .current { throw StoreError.upgradeNeeded(location: location) }
          try commit(db)
          return StoreUpgrade(applied: [], waiting: [], release: release)
        }
        (apply, wait) = migrations.applying(
          migrations.pending(in: recorded), release: release, contract: upgrading)
      } else {
        (apply, wait) = (migrations, [])
      }
      // Expansions alone grant the fleet's roles what each adds, in itself: roles that had
      // every right before (`store roles --apply` after the newest migration) keep them.
      let expansionsOnly =
        upgrading != nil && !apply.isEmpty && apply.allSatisfy { $0.kind == .expand }
      let rolesKept = expansionsOnly ? try rolesCurrent(db) == true : false
      do {
        for migration in apply {
          try db.run(migration.sql)
          switch migration.kind {
          case .expand:
            try db.run(
              "INSERT INTO accounts.schema_expansion (identifier, release) VALUES ($1, $2)",
              [.text(migration.identifier), .text(migration.release)])
          case .contract:
            // The release beside it, where the store records releases ("v18" on).
            let releases = try db.run(
              "SELECT to_regclass('accounts.schema_expansion') IS NOT NULL"
            ).flag(0, 0)
            try db.run(
              releases
                ? "INSERT INTO accounts.schema_migration (identifier, release) VALUES ($1, $2)"
                : "INSERT INTO accounts.schema_migration (identifier) VALUES ($1)",
              [.text(migration.identifier)] + (releases ? [.text(migration.release)] : []))
          }
        }
        if rolesKept {
          try db.run("UPDATE accounts.fleet_role SET applied_at = pg_catalog.now() WHERE id = 1")
        }
        if upgrading != nil, !apply.isEmpty { try logUpgrade(db, applied: apply) }
      } catch {
        throw translate(error)
      }
      let rolesBehind = upgrading != nil ? try rolesCurrent(db) == false : false
      try commit(db)
      return StoreUpgrade(
        applied: apply.map(\.identifier), waiting: wait.map(\.identifier), release: release,
        rolesBehind: rolesBehind)
    }
  }

  private func commit(_ db: PGConnection) throws(StoreError) {
    do {
      try db.run("COMMIT")
    } catch {
      throw translate(error)
    }
  }

  /// Every step the schema records with when it ran, as a subquery (`applied_at`): the
  /// expansions too where the store has their table (`expanded`, "v18" on), for the newest may
  /// be one.
  static func appliedSteps(expanded: Bool) -> String {
    expanded
      ? """
      (SELECT m.applied_at FROM accounts.schema_migration AS m
       UNION ALL SELECT x.applied_at FROM accounts.schema_expansion AS x)
      """ : "accounts.schema_migration"
  }

  /// Whether the fleet's roles (recorded in `accounts.fleet_role` from "v15" on) got their
  /// rights after the store's newest migration, as `store health` judges it
  /// (`StoreHealth.rolesBehind`); nil where no roles were recorded.
  private func rolesCurrent(_ db: PGConnection) throws(StoreError) -> Bool? {
    let rows: PGRows
    do {
      let found = try db.run(
        """
        SELECT to_regclass('accounts.fleet_role') IS NOT NULL,
          to_regclass('accounts.schema_expansion') IS NOT NULL
        """)
      guard found.flag(0, 0) else { return nil }
      rows = try db.run(
        """
        SELECT accounts.stamp(r.applied_at),
          (SELECT accounts.stamp(max(m.applied_at))
           FROM \(Self.appliedSteps(expanded: found.flag(0, 1))) AS m)
        FROM accounts.fleet_role AS r WHERE r.id = 1
        """)
    } catch {
      throw translate(error)
    }
    guard rows.count == 1 else { return nil }
    return try decoding(location: location) { () throws(PGUnreadableValue) in
      !StoreHealth.rolesBehind(
        appliedAt: try rows.decode(Date?.self, 0, 0), migratedAt: try rows.decode(Date?.self, 0, 1))
    }
  }

  /// Appends the event of an upgrade that applied `applied`, in its transaction, once the store
  /// knows the kind (PostgreSQL's "v21" on).
  private func logUpgrade(_ db: PGConnection, applied: [PostgresMigration]) throws(PGFailure) {
    let kind = AuditEventKind.storeUpgraded.rawValue
    try db.run(
      """
      INSERT INTO accounts.audit_event (occurred_at, kind, detail, host)
      SELECT pg_catalog.date_trunc('milliseconds', pg_catalog.now()), $1, $2, $3
      WHERE EXISTS (SELECT 1 FROM accounts.audit_kind WHERE name = $1)
      """,
      [
        .text(kind),
        .text(Messages.detailStoreUpgraded(release: release, applied: applied.map(\.identifier))),
        writingHost.map(PGValue.text) ?? .null,
      ])
  }
}
