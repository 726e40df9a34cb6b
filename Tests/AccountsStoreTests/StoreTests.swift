import AccountsCore
import AccountsTestSupport
import Foundation
import Testing

@testable import AccountsStore

/// A fresh temporary folder, removed by the caller.
func temporaryFolder() throws -> URL {
  let url = FileManager.default.temporaryDirectory.appendingPathComponent(
    "accounts-store-tests-\(UUID().uuidString)")
  try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  return url
}

let alice = NewAccount(
  username: "Alice", usernameKey: "alice", fullName: "Alice Liddell", email: "alice@example.org",
  passwordHash:
    "pbkdf2_sha256$1000$UnicodeSaltXyz9876543$g4MD6bb2teH3Xo/srajDalClWyx/3E2EdVR8qdZ64U0=")
let noon = Date(timeIntervalSince1970: 1_800_000_000)

@Suite("Schema")
struct SchemaTests {
  /// The schema the migrations make is exactly `schema.sql` at the top of the repository (its
  /// tables, indexes, triggers and audit kinds; SQLite quotes a renamed table's name).
  @Test func matchesSchemaFile() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
    let schemaFile = try String(
      contentsOf: root.appendingPathComponent("schema.sql"), encoding: .utf8)
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("a.sqlite3").path
    _ = try SQLiteStore.open(path: path, access: .readWrite)

    let query = """
      SELECT type, name, tbl_name, sql FROM sqlite_master
      WHERE name NOT LIKE 'sqlite_%' AND name NOT LIKE 'grdb_%' ORDER BY type, name
      """
    let kinds = "SELECT name FROM audit_kind ORDER BY name"
    func picture(_ db: Database) throws -> [String] {
      try Row.fetchAll(db, sql: query).map { row in
        let (type, name, sql): (String, String, String) = (
          try row["type"], try row["name"], try row["sql"]
        )
        return "\(type) \(name) \(sql.replacingOccurrences(of: "\"", with: ""))"
      } + String.fetchAll(db, sql: kinds)
    }
    let created = try DatabaseQueue(path: path).read(picture)
    let reference = try DatabaseQueue()
    try reference.write { try $0.execute(sql: schemaFile) }
    let expected = try reference.read(picture)
    #expect(created.count == 39 + AuditEventKind.known.count)
    #expect(created == expected)
  }

  /// The list reads check against is exactly what migrating a new file records.
  @Test func knownMigrationsAreWhatMigratingRecords() throws {
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("a.sqlite3").path
    _ = try SQLiteStore.open(path: path, access: .readWrite)
    let recorded = try DatabaseQueue(path: path).read {
      try String.fetchAll($0, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid")
    }
    #expect(recorded == SQLiteStore.knownMigrations)
    #expect(
      recorded == [
        "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v12", "v13", "v14",
      ])
  }

  /// Every table is STRICT: a wrong type is refused, not converted.
  @Test func tablesAreStrict() throws {
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("a.sqlite3").path
    _ = try SQLiteStore.open(path: path, access: .readWrite)
    let strict = try DatabaseQueue(path: path).read {
      try Row.fetchAll($0, sql: "PRAGMA table_list").filter { row in
        let name: String = (try? row["name"]) ?? ""
        return [
          "account", "activation", "login_throttle", "audit_event", "audit_kind",
          "account_group", "group_member",
        ].contains(name)
      }.map { row -> Int in try row["strict"] }
    }
    #expect(strict == [1, 1, 1, 1, 1, 1, 1])
  }
}

@Suite("Constraints make contradictions impossible")
struct ConstraintTests {
  func rawDatabase() throws -> (DatabaseQueue, URL) {
    let folder = try temporaryFolder()
    let path = folder.appendingPathComponent("a.sqlite3").path
    _ = try SQLiteStore.open(path: path, access: .readWrite)
    return (try DatabaseQueue(path: path), folder)
  }

  /// Activated with no owner, or an owner that is no account, is refused by the schema.
  @Test func activatedNeedsOwner() throws {
    let (db, folder) = try rawDatabase()
    defer { try? FileManager.default.removeItem(at: folder) }
    #expect(throws: DatabaseError.self) {
      try db.write { try $0.execute(sql: "UPDATE activation SET state = 'Activated'") }
    }
    #expect(throws: DatabaseError.self) {
      try db.write {
        try $0.execute(sql: "UPDATE activation SET state = 'Activated', owner_id = 7")
      }
    }
  }

  /// Accounts join an Activated device only; a Public device keeps none; the owner cannot be
  /// deleted while the activation names it; user names are unique.
  @Test func accountRules() throws {
    let (db, folder) = try rawDatabase()
    defer { try? FileManager.default.removeItem(at: folder) }
    let insert =
      "INSERT INTO account (id, username, username_key, full_name, email, "
      + "password_hash, created_at, updated_at, password_changed_at) VALUES "
    #expect(throws: DatabaseError.self) {
      try db.write {
        try $0.execute(
          sql: insert + "(1, 'a', 'a', 'A', 'a@b.c', 'pbkdf2_sha256$1$s$k', 'x', 'x', 'x')")
      }
    }
    try db.write {
      try $0.execute(
        sql: """
          UPDATE activation SET state = 'Activated', owner_id = 1;
          \(insert) (1, 'a', 'a', 'A', 'a@b.c', 'pbkdf2_sha256$1$s$k', 'x', 'x', 'x');
          \(insert) (2, 'b', 'b', 'B', 'b@b.c', 'pbkdf2_sha256$1$s$k', 'x', 'x', 'x');
          """)
    }
    #expect(throws: DatabaseError.self) {
      try db.write {
        try $0.execute(
          sql: insert + "(3, 'B', 'b', 'B', 'b@b.c', 'pbkdf2_sha256$1$s$k', 'x', 'x', 'x')")
      }
    }
    #expect(throws: DatabaseError.self) {
      try db.write { try $0.execute(sql: "DELETE FROM account WHERE id = 1") }
    }
    #expect(throws: DatabaseError.self) {
      try db.write {
        try $0.execute(sql: "UPDATE activation SET state = 'Public', owner_id = NULL")
      }
    }
    try db.write { try $0.execute(sql: "DELETE FROM account WHERE id = 2") }
    #expect(throws: DatabaseError.self) {
      try db.write {
        try $0.execute(
          sql: "INSERT INTO audit_event (occurred_at, kind) VALUES ('x', 'no_such_kind')")
      }
    }
  }

  /// Empty names and malformed hashes are refused by CHECK constraints.
  @Test func fieldChecks() throws {
    let (db, folder) = try rawDatabase()
    defer { try? FileManager.default.removeItem(at: folder) }
    #expect(throws: DatabaseError.self) {
      try db.write {
        try $0.execute(
          sql:
            "UPDATE activation SET state = 'Activated', owner_id = 1; INSERT INTO account (id, username, username_key, full_name, email, password_hash, created_at, updated_at, password_changed_at) VALUES (1, 'a', 'a', '  ', 'a@b.c', 'pbkdf2_sha256$1$s$k', 'x', 'x', 'x')"
        )
      }
    }
    #expect(throws: DatabaseError.self) {
      try db.write {
        try $0.execute(
          sql:
            "UPDATE activation SET state = 'Activated', owner_id = 1; INSERT INTO account (id, username, username_key, full_name, email, password_hash, created_at, updated_at, password_changed_at) VALUES (1, 'a', 'a', 'A', 'a@b.c', 'plaintext', 'x', 'x', 'x')"
        )
      }
    }
  }
}

@Suite("Store writes and reads")
struct StoreBehaviourTests {
  /// Activation stores the user and the state together; a second one is refused.
  @Test func activateOnce() throws {
    // Given a new store
    let store = try SQLiteStore.inMemory()
    #expect(try store.status().state == .publicState)
    // When it is activated
    try store.activate(alice, at: noon)
    // Then it is Activated with the user, and a second activation is refused
    #expect(try store.status() == DeviceStatus(state: .activated, changedAt: noon))
    #expect(try store.user()?.fullName == "Alice Liddell")
    #expect(throws: AccountsError.alreadyActivated) { try store.activate(alice, at: noon) }
    #expect(try store.consistencyProblems() == [])
  }

  /// Reset removes the user and the tallies, keeps the log, and is idempotent.
  @Test func resetKeepsLog() throws {
    let store = try SQLiteStore.inMemory()
    try store.activate(alice, at: noon)
    _ = try store.recordLoginFailure(
      username: "alice", usernameKey: "alice", at: noon, policy: .standard)
    #expect(try store.reset(at: noon))
    #expect(try store.status().state == .publicState)
    #expect(try store.user() == nil)
    #expect(try store.loginRecord(usernameKey: "alice").tally == .clear)
    #expect(try !store.reset(at: noon))
    #expect(
      try store.auditEvents(limit: nil).map(\.kind) == [.activation, .loginFailure, .reset])
    #expect(try store.consistencyProblems() == [])
  }

  /// Five failures lock for one minute; the next lock lasts two; success clears the count.
  @Test func lockoutDoubles() throws {
    let store = try SQLiteStore.inMemory()
    try store.activate(alice, at: noon)
    func fail(at date: Date) throws -> LoginFailureOutcome {
      try store.recordLoginFailure(
        username: "alice", usernameKey: "alice", at: date, policy: .standard)
    }
    for attempt in 1...4 { #expect(try fail(at: noon) == .counted(failures: attempt)) }
    #expect(try fail(at: noon) == .lockedNow(until: noon.addingTimeInterval(60)))
    #expect(try fail(at: noon.addingTimeInterval(59)) == .alreadyLocked(until: noon + 60))
    let later = noon.addingTimeInterval(61)
    for attempt in 1...4 { #expect(try fail(at: later) == .counted(failures: attempt)) }
    #expect(try fail(at: later) == .lockedNow(until: later.addingTimeInterval(120)))
    let afterwards = later.addingTimeInterval(121)
    let success = try store.recordLoginSuccess(
      username: "alice", usernameKey: "alice", at: afterwards)
    #expect(
      success
        == .loggedIn(HomeScreen(fullName: "Alice Liddell", previousLogin: nil, failuresSince: 11)))
    #expect(try store.loginRecord(usernameKey: "alice").tally == .clear)
  }

  /// Locks grow 1, 2, 4, … minutes up to one hour.
  @Test func lockDurations() {
    let policy = LockoutPolicy.standard
    #expect((1...8).map(policy.duration(ofLock:)) == [60, 120, 240, 480, 960, 1920, 3600, 3600])
    #expect(policy.duration(ofLock: 1000) == 3600)
  }

  /// A success while another process has locked the name is refused.
  @Test func successWhileLocked() throws {
    let store = try SQLiteStore.inMemory()
    try store.activate(alice, at: noon)
    for _ in 1...5 {
      _ = try store.recordLoginFailure(
        username: "alice", usernameKey: "alice", at: noon, policy: .standard)
    }
    #expect(
      try store.recordLoginSuccess(username: "alice", usernameKey: "alice", at: noon + 1)
        == .locked(until: noon + 60))
  }

  /// The log is oldest first; a limit keeps the newest events.
  @Test func logOrderAndLimit() throws {
    let store = try SQLiteStore.inMemory()
    try store.activate(alice, at: noon)
    _ = try store.recordLoginSuccess(username: "alice", usernameKey: "alice", at: noon + 1)
    try store.unlock(username: "bob", usernameKey: "bob", at: noon + 2)
    #expect(
      try store.auditEvents(limit: nil).map(\.kind) == [.activation, .loginSuccess, .unlock])
    let newest = try store.auditEvents(limit: 2)
    #expect(newest.map(\.kind) == [.loginSuccess, .unlock])
    #expect(newest.map(\.occurredAt) == [noon + 1, noon + 2])
  }

  /// Timestamps are fixed-width UTC ISO-8601 with milliseconds, and parse back.
  @Test func timestamps() throws {
    let date = Date(timeIntervalSince1970: 1_795_000_000.123)
    #expect(Timestamp.string(from: date) == "2026-11-18T11:06:40.123Z")
    let parsed = try #require(Timestamp.date(from: "2026-11-18T11:06:40.123Z"))
    #expect(abs(parsed.timeIntervalSince1970 - 1_795_000_000.123) < 0.0005)
    #expect(Timestamp.date(from: "2026-11-18 09:46:40") == nil)
  }

  /// A tampered count at Int64.max neither traps nor switches the lockout off: the attempt is
  /// counted, the name is locked, and a tampered lock count gives the longest lock.
  @Test func tamperedCountersSaturate() throws {
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("a.sqlite3").path
    let store = try #require(try SQLiteStore.open(path: path, access: .readWrite))
    try store.activate(alice, at: noon)
    _ = try store.recordLoginFailure(
      username: "alice", usernameKey: "alice", at: noon, policy: .standard)
    try DatabaseQueue(path: path).write { db in
      try db.execute(
        sql: "UPDATE login_throttle SET failures = ?, lockouts = ?",
        arguments: [Int64.max, Int64.max])
    }
    let later = noon.addingTimeInterval(1)
    let outcome = try store.recordLoginFailure(
      username: "alice", usernameKey: "alice", at: later, policy: .standard)
    #expect(outcome == .lockedNow(until: later.addingTimeInterval(3600)))
    #expect(
      try store.auditEvents(limit: 2).map(\.kind) == [.loginFailure, .lockout])
  }

  /// Tallies are forgotten a day after their last failure, once no lock is in force, for every
  /// name alike (known or not, so that it reveals nothing); a lock in force is kept.
  @Test func oldTalliesExpire() throws {
    let store = try SQLiteStore.inMemory()
    try store.activate(alice, at: noon)
    for name in ["alice", "mallory"] {
      _ = try store.recordLoginFailure(
        username: name, usernameKey: name, at: noon, policy: .standard)
    }
    for _ in 1...5 {
      _ = try store.recordLoginFailure(
        username: "eve", usernameKey: "eve", at: noon,
        policy: LockoutPolicy(
          threshold: 5, firstLock: 172_800, longestLock: 172_800))
    }
    let nextDay = noon.addingTimeInterval(86_401)
    _ = try store.recordLoginFailure(
      username: "bob", usernameKey: "bob", at: nextDay, policy: .standard)
    #expect(try store.loginRecord(usernameKey: "alice").tally == .clear)
    #expect(try store.loginRecord(usernameKey: "mallory").tally == .clear)
    #expect(try store.loginRecord(usernameKey: "eve").tally.lock(at: nextDay) != nil)
    #expect(try store.loginRecord(usernameKey: "bob").tally.failures == 1)
  }
}

@Suite("Files")
struct FileTests {
  /// A new database and the folders it needs are private: 0600 and 0700.
  @Test func privatePermissions() throws {
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("one/two/a.sqlite3").path
    let store = try #require(try SQLiteStore.open(path: path, access: .readWrite))
    try store.activate(alice, at: noon)
    func mode(_ path: String) throws -> Int {
      (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
    }
    #expect(try mode(path) == 0o600)
    #expect(try mode(folder.appendingPathComponent("one").path) == 0o700)
    #expect(try mode(folder.appendingPathComponent("one/two").path) == 0o700)
    for companion in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: path + companion)
    {
      #expect(try mode(path + companion) == 0o600)
    }
  }

  /// Reading a database that does not exist creates nothing.
  @Test func readOnlyDoesNotCreate() throws {
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("missing/a.sqlite3").path
    #expect(try SQLiteStore.open(path: path, access: .readOnly) == nil)
    #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("missing").path))
  }

  /// A directory, a file that is not a database, a parent that is a file, another program's
  /// database and a newer schema are refused, and the files are left byte for byte.
  @Test func brokenEnvironments() throws {
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let directory = folder.appendingPathComponent("dir").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
    #expect(throws: StoreError.isDirectory(location: directory)) {
      try SQLiteStore.open(path: directory, access: .readWrite)
    }

    let text = folder.appendingPathComponent("notes.txt").path
    let garbage = Data(repeating: 0x41, count: 5000)
    try garbage.write(to: URL(fileURLWithPath: text))
    chmod(text, 0o600)
    #expect(throws: StoreError.notADatabase(location: text)) {
      try SQLiteStore.open(path: text, access: .readWrite)
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: text)) == garbage)

    let underFile = text + "/a.sqlite3"
    #expect(throws: StoreError.self) { try SQLiteStore.open(path: underFile, access: .readWrite) }

    let foreign = folder.appendingPathComponent("foreign.sqlite3").path
    try DatabaseQueue(path: foreign).write { try $0.execute(sql: "CREATE TABLE t (x)") }
    chmod(foreign, 0o600)
    let foreignBytes = try Data(contentsOf: URL(fileURLWithPath: foreign))
    #expect(throws: StoreError.foreignDatabase(location: foreign)) {
      try SQLiteStore.open(path: foreign, access: .readWrite)
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: foreign)) == foreignBytes)

    let newer = folder.appendingPathComponent("newer.sqlite3").path
    _ = try SQLiteStore.open(path: newer, access: .readWrite)
    try DatabaseQueue(path: newer).write {
      try $0.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99-from-the-future')")
    }
    let newerBytes = try Data(contentsOf: URL(fileURLWithPath: newer))
    #expect(throws: StoreError.newerSchema(location: newer)) {
      try SQLiteStore.open(path: newer, access: .readWrite)
    }
    #expect(throws: StoreError.newerSchema(location: newer)) {
      try SQLiteStore.open(path: newer, access: .readOnly)
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: newer)) == newerBytes)
  }

  /// Every writing connection overwrites deleted content, whatever SQLite's build defaults to:
  /// a connection with `secure_delete` off has it on after the store's preparation.
  @Test func secureDeleteIsSetNotInherited() throws {
    let queue = try DatabaseQueue()
    try queue.writeWithoutTransaction { db in
      try db.execute(sql: "PRAGMA secure_delete = OFF")
      #expect(try Int.fetchOne(db, sql: "PRAGMA secure_delete") == 0)
      try SQLiteStore.prepareWriter(db)
      #expect(try Int.fetchOne(db, sql: "PRAGMA secure_delete") == 1)
      #expect(try Int.fetchOne(db, sql: "PRAGMA synchronous") == 2)
    }
  }
}

/// The path helpers answer as `dirname` and `basename` do.
@Suite("Paths")
struct PathTests {
  @Test(arguments: [
    ("/a/b/c", "/a/b", "c"), ("/a/b/", "/a", "b"), ("/a", "/", "a"), ("/", "/", "/"),
    ("a", ".", "a"), ("a/b", "a", "b"), ("//a//b//", "//a", "b"), ("/a/é é/x", "/a/é é", "x"),
  ])
  func dirnameAndBasename(_ path: String, _ folder: String, _ name: String) {
    #expect(FileSystem.folder(of: path) == folder)
    #expect(FileSystem.name(of: path) == name)
  }
}
