import AccountsCore
import FoundationEssentials

/// `accounts store hosts`: fleet hosts that each log in with a role of their own (migration
/// "v15"), run by an administrator role with CREATEROLE. A role is made, granted and recorded in
/// one transaction, with the caller's own rights (never the schema owner's): a role that may
/// not make roles changes nothing.
extension PostgresStore {
  /// Makes the login role `role` for the host `name`, a member of the fleet's host role, and
  /// records it; returns the host role.
  ///
  /// The role has no password: the server's pg_hba.conf decides how it authenticates. Both
  /// names must be usable (`FleetHost.isUsableName`, `PostgresRoles.isUsable`).
  public func addFleetHost(named name: String, role: String, at now: Date)
    throws(AccountsError) -> String
  {
    try fleetTransaction { db, caller throws(AccountsError) -> String in
      guard let hostRole = try recordedHostRole(db) else { throw .fleetRolesUnknown }
      let taken = try fleetStep(
        db, "SELECT name = $1 FROM accounts.fleet_host WHERE name = $1 OR role_name = $2",
        [.text(name), .text(role)])
      if (0..<taken.count).contains(where: { taken.flag($0, 0) }) { throw .fleetHostTaken(name) }
      if taken.count > 0 { throw .fleetRoleTaken(role) }
      // The record first: a role that may not write it is told so as any other write is.
      try fleetStep(
        db,
        "INSERT INTO accounts.fleet_host (name, role_name, made_at) VALUES ($1, $2, $3::timestamptz)",
        [.text(name), .text(role), PGValue(now)])
      try fleetStep(
        db, "CREATE ROLE \(PostgresRoles.identifier(role)) LOGIN", caller: caller, role: role)
      try fleetStep(
        db,
        "GRANT \(PostgresRoles.identifier(hostRole)) TO \(PostgresRoles.identifier(role))",
        caller: caller, role: role)
      try logged(db, .fleetHostAdded, host: name, role: role, at: now)
      return hostRole
    }
  }

  /// Every host with a role of its own, by name, with its newest event's time.
  public func fleetHosts() throws(AccountsError) -> [FleetHost] {
    try read { reader throws(AccountsError) -> [FleetHost] in
      guard let access = reader as? PostgresAccess else { return [] }
      let rows = try access.query(
        """
        SELECT h.name, h.role_name, accounts.stamp(h.made_at),
          (SELECT accounts.stamp(e.occurred_at) FROM accounts.audit_event AS e
           WHERE e.host = h.name ORDER BY e.id DESC LIMIT 1)
        FROM accounts.fleet_host AS h ORDER BY h.name
        """)
      return try access.decoded { () throws(PGUnreadableValue) in
        try (0..<rows.count).map { (row: Int) throws(PGUnreadableValue) -> FleetHost in
          FleetHost(
            name: try rows.decode(String.self, row, 0),
            role: try rows.decode(String.self, row, 1),
            madeAt: try rows.decode(Date.self, row, 2),
            lastEventAt: try rows.decode(Date?.self, row, 3))
        }
      }
    }
  }

  /// Forgets the host `name` and withdraws its role; returns the role.
  ///
  /// The role leaves the host role and is dropped (or, when something else of the server's
  /// still names it, kept but no longer able to log in). Its events stay.
  public func removeFleetHost(named name: String, at now: Date) throws(AccountsError) -> String {
    try fleetTransaction { db, caller throws(AccountsError) -> String in
      guard
        let role = try fleetStep(
          db, "DELETE FROM accounts.fleet_host WHERE name = $1 RETURNING role_name",
          [.text(name)]
        ).text(0, 0)
      else { throw .noSuchFleetHost(name) }
      let quoted = PostgresRoles.identifier(role)
      try fleetStep(db, "ALTER ROLE \(quoted) NOLOGIN", caller: caller, role: role)
      if let hostRole = try recordedHostRole(db) {
        try fleetStep(
          db, "REVOKE \(PostgresRoles.identifier(hostRole)) FROM \(quoted)", caller: caller,
          role: role)
      }
      try fleetStep(db, "SAVEPOINT drop_host_role")
      do throws(PGFailure) {
        try db.run("DROP ROLE \(quoted)")
      } catch  where error.sqlState == "2BP01" {
        // Rights of its own elsewhere (a database's CONNECT): it stays, unable to log in.
        try fleetStep(db, "ROLLBACK TO SAVEPOINT drop_host_role")
      } catch {
        throw .storage(translate(error))
      }
      try fleetStep(db, "RELEASE SAVEPOINT drop_host_role")
      try logged(db, .fleetHostRemoved, host: name, role: role, at: now)
      return role
    }
  }

  /// Appends the event of a host's role made or withdrawn, in the same transaction, as every
  /// write appends its own (`PostgresAccess.append`).
  private func logged(
    _ db: PGConnection, _ kind: AuditEventKind, host: String, role: String, at now: Date
  ) throws(AccountsError) {
    try PostgresAccess(db: db, store: self).append(
      AuditRecord(kind, at: now, detail: Messages.detailFleetHost(host, role: role)))
  }

  /// The host role `store roles --apply` recorded; nil before it ran (or when what is recorded
  /// could not have been given to it).
  private func recordedHostRole(_ db: PGConnection) throws(AccountsError) -> String? {
    let role = try fleetStep(db, "SELECT host_role FROM accounts.fleet_role WHERE id = 1")
      .text(0, 0)
    return role.flatMap { PostgresRoles.isUsable($0) ? $0 : nil }
  }

  /// Runs `body` in one transaction (the schema made or brought up to date first), with the
  /// name of the role the connection runs as.
  private func fleetTransaction<T>(
    _ body: (PGConnection, String) throws(AccountsError) -> T
  ) throws(AccountsError) -> T {
    guard try storing({ () throws(StoreError) in try opened(for: .readWrite) }) != nil else {
      throw .storage(.failure(location: location, reason: "it holds no accounts store"))
    }
    let db = try storing { () throws(StoreError) in try connected() }
    try execute(db, "BEGIN; \(Self.pinnedPath)")
    do {
      let caller = try fleetStep(db, "SELECT current_user").text(0, 0) ?? ""
      let result = try body(db, caller)
      try execute(db, "COMMIT")
      return result
    } catch {
      if db.isAlive && db.inTransaction { _ = try? db.run("ROLLBACK") }
      throw error
    }
  }

  /// One statement of a `store hosts` step; with `role`, a change of roles, whose refusal for
  /// want of rights, or because the role exists, is said in those words.
  @discardableResult
  private func fleetStep(
    _ db: PGConnection, _ sql: String, _ parameters: [PGValue] = [], caller: String? = nil,
    role: String? = nil
  ) throws(AccountsError) -> PGRows {
    do {
      return try db.run(sql, parameters)
    } catch {
      if let caller, let role {
        switch error.sqlState {
        case "42501": throw .cannotManageRoles(role: caller)
        case "42710": throw .fleetRoleTaken(role)
        default: break
        }
      }
      throw .storage(translate(error))
    }
  }
}
