import AccountsCore
import AccountsTestSupport
import Foundation
import Testing

@testable import AccountsPostgres
@testable import AccountsStore

/// The migrations that add groups and expiry (SQLite "v5", PostgreSQL "v2"), accounts as Linux
/// users (SQLite "v6", PostgreSQL "v3"), the host of events and sessions (SQLite "v7",
/// PostgreSQL "v4") and the offline id of events (SQLite "v14") keep every row of a store that
/// holds something in every table.
@Suite("Upgrade to groups and expiry")
struct UpgradeToGroupsTests {
  /// Rows for every table of the schema before the migration, in plain SQL both stores take
  /// (times as UTC text, bytes as the store's literal).
  static func rows(bytes: (String) -> String) -> [String] {
    let hash = "pbkdf2_sha256$1000$salt$key"
    let time = "2026-11-20T10:00:00.000Z"
    return [
      """
      UPDATE activation SET state = 'Activated', owner_id = 1, changed_at = '\(time)'
      WHERE id = 1
      """,
      """
      INSERT INTO account (id, username, username_key, full_name, email, password_hash,
        must_change_password, disabled_at, created_at, updated_at, password_changed_at,
        last_login_at)
      VALUES (1, 'Alice', 'alice', 'Alice L', 'a@example.org', '\(hash)', false, NULL,
              '\(time)', '\(time)', '\(time)', '\(time)'),
             (4, 'bob', 'bob', 'Bob B', 'b@example.org', '\(hash)', true, '\(time)', '\(time)',
              '\(time)', '\(time)', NULL)
      """,
      """
      INSERT INTO login_throttle (username_key, failures, lockouts, locked_until, updated_at)
      VALUES ('mallory', 3, 1, '\(time)', '\(time)')
      """,
      """
      INSERT INTO audit_event (id, occurred_at, kind, username, username_key, detail)
      VALUES (7, '\(time)', 'activation', 'Alice', 'alice', NULL),
             (9, '\(time)', 'accounts_imported', NULL, NULL, '2 accounts')
      """,
      """
      INSERT INTO session (id, token_hash, account_id, created_at, last_seen_at, expires_at,
        idle_seconds, idle_until, second_factor)
      VALUES (3, \(bytes(String(repeating: "ab", count: 32))), 4, '\(time)', '\(time)',
              '2026-11-21T10:00:00.000Z', 3600, '2026-11-20T11:00:00.000Z', false)
      """,
      """
      INSERT INTO second_factor (account_id, sealed_secret, key_id, last_step, enabled_at)
      VALUES (1, \(bytes(String(repeating: "cd", count: 40))), '0123456789abcdef', 42,
              '\(time)')
      """,
      """
      INSERT INTO recovery_code (account_id, code_hash, used_at)
      VALUES (1, \(bytes(String(repeating: "ef", count: 32))), NULL),
             (1, \(bytes(String(repeating: "01", count: 32))), '\(time)')
      """,
    ]
  }

  /// The columns `table` had before the migrations.
  static func columns(_ table: String) -> String {
    switch table {
    case "account":
      return """
        id, username, username_key, full_name, email, password_hash, must_change_password,
        disabled_at, created_at, updated_at, password_changed_at, last_login_at
        """
    case "audit_event": return "id, occurred_at, kind, username, username_key, detail"
    // Without the server's own column (PostgreSQL's migration "v17"), empty for these rows.
    case "second_factor": return "account_id, sealed_secret, key_id, last_step, enabled_at"
    case "session":
      return """
        id, token_hash, account_id, created_at, last_seen_at, expires_at, idle_seconds,
        idle_until, second_factor
        """
    default: return "*"
    }
  }

  /// A total order of `table`'s rows.
  static func order(_ table: String) -> String { table == "audit_kind" ? "1" : "1, 2" }

  static let tables = [
    "account", "activation", "login_throttle", "audit_event", "audit_kind", "session",
    "second_factor", "recovery_code",
  ]

  /// A v7 SQLite file whose accounts have uids keeps every row at its upgrade, and each such
  /// account's home (its own, or the default) is recorded as given and pinned, so that a
  /// rename no longer moves it; the oldest uid keeps a home two accounts shared.
  @Test func sqliteV7ToLatestRecordsTheHomesGiven() throws {
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("v7.sqlite3").path
    let queue = try DatabaseQueue(path: path)
    try SQLiteStore.migrator.migrate(queue, upTo: "v7")
    let time = "2026-11-20T10:00:00.000Z"
    try queue.write { db in
      for sql in Self.rows(bytes: { "x'\($0)'" }) {
        try db.execute(sql: sql.replacingOccurrences(of: "false", with: "0"))
      }
      for (number, name) in [(20001, "Alice"), (20002, "bob")] {
        try db.execute(
          sql: "INSERT INTO posix_id (number, kind, name, given_at) VALUES (?, 'user', ?, ?)",
          arguments: [number, name, time])
      }
      try db.execute(sql: "UPDATE account SET uid = 20001 WHERE id = 1")
      try db.execute(sql: "UPDATE account SET uid = 20002, home = '/home/Alice' WHERE id = 4")
    }
    let before = try queue.read { try Row.fetchAll($0, sql: "SELECT id, uid FROM account") }
    try queue.close()
    chmod(path, 0o600)

    let store = try #require(try SQLiteStore.open(path: path, access: .readWrite))
    let homes = try store.writer.read {
      try Row.fetchAll($0, sql: "SELECT path, uid FROM home_path ORDER BY path")
        .map { "\(try $0["path"] as String) \(try $0["uid"] as Int64)" }
    }
    #expect(homes == ["/home/Alice 20001"])
    let after = try store.writer.read { try Row.fetchAll($0, sql: "SELECT id, uid FROM account") }
    #expect(after == before)
    try store.read { reader throws(AccountsError) in
      #expect(try reader.account(key: "alice")?.home == "/home/Alice")
      #expect(try reader.account(key: "bob")?.home == "/home/Alice")
      #expect(try reader.homeOwner("/home/Alice") == 20001)
    }
  }

  /// A v13 SQLite file with a row in every table keeps every row at its upgrade ("v14" adds a
  /// column only), its events online; the new column takes only an offline id's form, each id
  /// once.
  @Test func sqliteV13ToLatestKeepsEveryEventOnline() throws {
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("v13.sqlite3").path
    let queue = try DatabaseQueue(path: path)
    try SQLiteStore.migrator.migrate(queue, upTo: "v13")
    try queue.write { db in
      for sql in Self.rows(bytes: { "x'\($0)'" }) {
        try db.execute(sql: sql.replacingOccurrences(of: "false", with: "0"))
      }
    }
    func dump(_ db: Database) throws -> [String: [Row]] {
      var dump: [String: [Row]] = [:]
      for table in Self.tables {
        let columns = table == "audit_event" ? Self.columns(table) + ", host" : "*"
        dump[table] = try Row.fetchAll(
          db, sql: "SELECT \(columns) FROM \(table) ORDER BY \(Self.order(table))")
      }
      return dump
    }
    let before = try queue.read(dump)
    try queue.close()
    chmod(path, 0o600)

    let store = try #require(try SQLiteStore.open(path: path, access: .readWrite))
    #expect(try store.writer.read(dump) == before)
    let offline = try store.writer.read {
      try Int64.fetchOne($0, sql: "SELECT count(*) FROM audit_event WHERE offline_id IS NOT NULL")
    }
    #expect(offline == 0)
    #expect(try store.auditEvents().map(\.offline) == [false, false])
    for id in [
      "0123456789ABCDEF0123456789ABCDEF", "0123456789abcdef", "0123456789abcdef0123456789abcdeg",
    ] {
      #expect(throws: (any Error).self) {
        try store.writer.write { db in
          try db.execute(sql: "UPDATE audit_event SET offline_id = ? WHERE id = 7", arguments: [id])
        }
      }
    }
    let delivered = QueuedEvent(
      offlineID: "0123456789abcdef0123456789abcdef",
      record: AuditRecord(.loginSuccess, at: noon, username: "Alice", usernameKey: "alice"))
    #expect(try store.appendOfflineEvent(delivered))
    #expect(!(try store.appendOfflineEvent(delivered)))
    #expect(try store.auditEvents().map(\.offline) == [false, false, true])
  }

  /// A v4 SQLite file with a row in every table becomes v7 at its first write with every row
  /// as it was (accounts with no expiry, no uid, the default home and shell; events and
  /// sessions with no host), no group, no SSH key, the standard uid range, and the new audit
  /// kinds.
  @Test func sqliteV4ToLatestKeepsEveryRow() throws {
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("v4.sqlite3").path
    let queue = try DatabaseQueue(path: path)
    try SQLiteStore.migrator.migrate(queue, upTo: "v4")
    try queue.write { db in
      for sql in Self.rows(bytes: { "x'\($0)'" }) {
        try db.execute(sql: sql.replacingOccurrences(of: "false", with: "0"))
      }
      try db.execute(sql: "UPDATE account SET must_change_password = 1 WHERE id = 4")
    }
    func dump(_ db: Database) throws -> [String: [Row]] {
      var dump: [String: [Row]] = [:]
      for table in Self.tables {
        dump[table] = try Row.fetchAll(
          db, sql: "SELECT \(Self.columns(table)) FROM \(table) ORDER BY \(Self.order(table))")
      }
      return dump
    }
    let before = try queue.read(dump)
    try queue.close()
    chmod(path, 0o600)

    let store = try #require(try SQLiteStore.open(path: path, access: .readWrite))
    let after = try store.writer.read(dump)
    #expect(after.keys == before.keys)
    for table in Self.tables where table != "audit_kind" {
      #expect(after[table] == before[table], "\(table)")
    }
    let kinds = try store.writer.read {
      try String.fetchAll($0, sql: "SELECT name FROM audit_kind")
    }
    #expect(Set(kinds) == Set(AuditEventKind.known.map(\.rawValue)))
    try store.read { reader throws(AccountsError) in
      #expect(try reader.account(key: "bob")?.expiresAt == nil)
      #expect(try reader.groups(accountID: 4) == [])
      #expect(try reader.rowCount(.group) == 0)
      let bob = try reader.account(key: "bob")
      #expect(bob?.uid == nil)
      #expect(bob?.homeDirectory == "/home/bob")
      #expect(bob?.loginShell == "/bin/bash")
      #expect(try reader.rowCount(.sshKey) == 0)
      #expect(try reader.rowCount(.posixID) == 0)
      #expect(try reader.userdbSettings().range == .standard)
      var hosts: [String?] = []
      try reader.forEachEvent(AuditQuery()) { event throws(AccountsError) in
        hosts.append(event.host)
      }
      #expect(hosts == [nil, nil])
      #expect(try reader.session(id: 3)?.host == nil)
    }
    #expect(try store.consistencyProblems() == [])
  }

  /// A PostgreSQL store of migration v1 with a row in every table, upgraded by `store upgrade`
  /// to the latest, keeps every row as it was (events and sessions with no host).
  @Test func postgresV1ToLatestKeepsEveryRow() throws {
    let (uri, drop) = try temporaryPostgresDatabase()
    defer { drop() }
    let psql = "/usr/bin/psql"
    func run(_ sql: String) throws -> String {
      let file = NSTemporaryDirectory() + "upgrade-\(UUID().uuidString).sql"
      try sql.write(toFile: file, atomically: true, encoding: .utf8)
      defer { try? FileManager.default.removeItem(atPath: file) }
      let result = try runTool(
        "/bin/sh", ["-c", "\(psql) -qAt -v ON_ERROR_STOP=1 -d \"$0\" -f \"$1\" 2>&1", uri, file])
      #expect(result.status == 0, "\(result.output)")
      return result.output
    }
    let v1 = try #require(postgresMigrations.first)
    #expect(v1.identifier == "v1")
    _ = try run(v1.sql + "\nINSERT INTO accounts.schema_migration (identifier) VALUES ('v1');")
    var statements = Self.rows(bytes: { "'\\x\($0)'::bytea" })
    statements.insert("SET search_path = accounts", at: 0)
    _ = try run("BEGIN;\n" + statements.joined(separator: ";\n") + ";\nCOMMIT;")
    func dump() throws -> [String] {
      try Self.tables.map { table in
        try run(
          "SELECT \(Self.columns(table)) FROM accounts.\(table) ORDER BY \(Self.order(table))")
      }
    }
    let before = try dump()

    _ = try PostgresStore(uri: uri).upgrade(contract: false)
    let store = try #require(try PostgresStore(uri: uri).opened(for: .readWrite))
    _ = try store.write { writer throws(AccountsError) in
      try writer.insertGroup(named: "staff", at: Date(timeIntervalSince1970: 1_800_000_000))
    }
    let after = try dump()
    // The upgrade's own event is the one row added to the log.
    let upgraded = "|store_upgraded|"
    for (index, table) in Self.tables.enumerated() where table != "audit_kind" {
      let rows = after[index].split(separator: "\n").filter { !$0.contains(upgraded) }
      #expect(rows == before[index].split(separator: "\n"), "\(table)")
    }
    #expect(
      try run("SELECT count(*) FROM accounts.audit_event WHERE kind = 'store_upgraded'") == "1")
    #expect(
      try run("SELECT identifier FROM accounts.schema_migration ORDER BY 1")
        == "v1\nv10\nv11\nv12\nv13\nv14\nv15\nv16\nv17\nv2\nv3\nv4\nv5\nv6\nv7\nv8\nv9")
    #expect(
      try run("SELECT identifier FROM accounts.schema_expansion ORDER BY 1")
        == "v18\nv19\nv20\nv21\nv22\nv23"
    )
    #expect(
      try run(
        "SELECT count(*) FROM accounts.audit_event WHERE host IS NULL AND kind <> 'store_upgraded'")
        == "2")
    #expect(try run("SELECT count(*) FROM accounts.session WHERE host IS NULL") == "1")
    #expect(try run("SELECT count(*) FROM accounts.account WHERE expires_at IS NULL") == "2")
    #expect(
      try run(
        "SELECT count(*) FROM accounts.account WHERE uid IS NULL AND home IS NULL AND shell IS NULL"
      ) == "2")
    #expect(try run("SELECT first_uid, last_uid FROM accounts.userdb_setting") == "20000|29999")
    #expect(
      try run("SELECT count(*) FROM accounts.audit_kind") == String(AuditEventKind.known.count))
  }
}
