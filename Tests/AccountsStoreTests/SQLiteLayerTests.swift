import AccountsCore
import CSQLite
import Foundation
import Testing

@testable import AccountsStore

/// The store's door to libsqlite3: values read by type, statements kept per connection, one
/// transaction helper, SQLite's result codes mapped to store errors.
@Suite("SQLite layer")
struct SQLiteLayerTests {
  /// A NULL where a value is required, or a value of another storage class, is an unreadable
  /// value in one sentence that names the column, never the value.
  @Test func wrongTypeOrNullIsUnreadable() throws {
    let queue = try DatabaseQueue()
    let row = try #require(
      try queue.read { try Row.fetchOne($0, sql: "SELECT NULL, 'secret', 7, x'00'") })
    #expect(throws: Never.self) { let _: String? = try row[0] }
    let failures: [(String, () throws -> Void)] = [
      ("column 1 is empty where text is required", { let _: String = try row[0] }),
      ("column 2 is not a whole number", { let _: Int64 = try row[1] }),
      ("column 3 is not text", { let _: String = try row[2] }),
      ("column 4 is not true or false", { let _: Bool = try row[3] }),
      ("the result has no column named missing", { let _: Int = try row["missing"] }),
    ]
    for (reason, read) in failures {
      do {
        try read()
        Issue.record("no error for: \(reason)")
      } catch {
        #expect(
          StoreError.translating(error, path: "/db", busyTimeout: 5)
            == .unreadableValue(location: "/db", reason: reason))
      }
    }
    #expect(try row[1] as String == "secret")
    #expect(try row[2] as Int == 7)
    #expect(try row[3] as [UInt8] == [0])
  }

  /// Values bound by type come back as they went in: NULL, empty text and empty bytes apart.
  @Test func valuesRoundTrip() throws {
    let queue = try DatabaseQueue()
    let row = try queue.write { db in
      try db.execute(sql: "CREATE TABLE t (a ANY, b ANY, c ANY, d ANY, e ANY, f ANY) STRICT")
      try db.execute(
        sql: "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)",
        arguments: ["", [UInt8](), nil, Int64.min, true, "naïve ✓"])
      return try #require(try Row.fetchOne(db, sql: "SELECT * FROM t"))
    }
    #expect(
      row.values == [.text(""), .blob([]), .null, .integer(.min), .integer(1), .text("naïve ✓")])
  }

  /// A statement is prepared once per connection; one still stepping through rows is not
  /// handed out again (a second use gets its own).
  @Test func statementsAreKeptAndNotShared() throws {
    let queue = try DatabaseQueue()
    try queue.writeWithoutTransaction { db in
      let sql = "SELECT 1"
      let first = try db.cachedStatement(sql: sql)
      #expect(try db.cachedStatement(sql: sql) === first)
      let cursor = try Int.fetchCursor(db, sql: "SELECT 1 UNION ALL SELECT 2")
      #expect(try cursor.next() == 1)
      #expect(try Int.fetchAll(db, sql: "SELECT 1 UNION ALL SELECT 2") == [1, 2])
      #expect(try cursor.next() == 2)
      #expect(try cursor.next() == nil)
    }
  }

  /// A connection that keeps no statements prepares each use anew, and still runs them.
  @Test func aConnectionMayKeepNoStatements() throws {
    let db = try Database(
      path: ":memory:", flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, busyTimeout: 0,
      keepsStatements: false)
    let sql = "SELECT 1"
    let first = try db.cachedStatement(sql: sql)
    #expect(try db.cachedStatement(sql: sql) !== first)
    try db.execute(sql: "CREATE TABLE t (x INTEGER) STRICT")
    try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [7])
    #expect(try Int.fetchAll(db, sql: "SELECT x FROM t") == [7])
  }

  /// A write that throws leaves nothing; a read cannot write.
  @Test func transactions() throws {
    let queue = try DatabaseQueue()
    try queue.write { try $0.execute(sql: "CREATE TABLE t (x INTEGER) STRICT") }
    struct Stop: Error {}
    #expect(throws: Stop.self) {
      try queue.write { db in
        try db.execute(sql: "INSERT INTO t VALUES (1)")
        throw Stop()
      }
    }
    #expect(try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM t") } == 0)
    #expect(throws: DatabaseError.self) {
      try queue.read { try $0.execute(sql: "INSERT INTO t VALUES (1)") }
    }
    try queue.write { try $0.execute(sql: "INSERT INTO t VALUES (?)", arguments: [2]) }
    #expect(try queue.read { try Int.fetchAll($0, sql: "SELECT x FROM t") } == [2])
  }

  /// Extended result codes map as their primary code does; a unique constraint is told apart.
  @Test func resultCodesMapToStoreErrors() throws {
    let busySnapshot = ResultCode(rawValue: 517)
    #expect(
      StoreError.translating(
        DatabaseError(resultCode: busySnapshot), path: "/db", busyTimeout: 5)
        == .busy(location: "/db", seconds: 5))
    #expect(
      StoreError.translating(
        DatabaseError(resultCode: .SQLITE_CONSTRAINT_UNIQUE), path: "/db", busyTimeout: 5)
        == .inconsistent(location: "/db"))
    #expect(
      StoreError.translating(
        DatabaseError(resultCode: .SQLITE_CANTOPEN_SYMLINK), path: "/db", busyTimeout: 5)
        == .symlink(location: "/db", file: "/db"))
    let queue = try DatabaseQueue()
    do {
      try queue.write { db in
        try db.execute(sql: "CREATE TABLE t (x TEXT UNIQUE) STRICT; INSERT INTO t VALUES ('a')")
        try db.execute(sql: "INSERT INTO t VALUES ('a')")
      }
      Issue.record("no error")
    } catch let error as DatabaseError {
      #expect(error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE)
      #expect(error.resultCode == .SQLITE_CONSTRAINT)
    }
  }

  /// The migrator records each step once in `grdb_migrations`, runs only what is missing, and
  /// refuses a step that leaves a broken foreign key.
  @Test func migratorRecordsEachStepOnce() throws {
    let queue = try DatabaseQueue()
    var migrator = DatabaseMigrator()
    migrator.registerMigration("a") {
      try $0.execute(sql: "CREATE TABLE p (id INTEGER PRIMARY KEY)")
    }
    migrator.registerMigration("b") {
      try $0.execute(sql: "CREATE TABLE c (p INTEGER REFERENCES p (id))")
    }
    try migrator.migrate(queue, upTo: "a")
    try migrator.migrate(queue)
    try migrator.migrate(queue)
    #expect(
      try queue.read { try String.fetchAll($0, sql: "SELECT identifier FROM grdb_migrations") }
        == ["a", "b"])
    migrator.registerMigration("c") { try $0.execute(sql: "INSERT INTO c VALUES (9)") }
    #expect(
      throws: DatabaseError(
        resultCode: .SQLITE_CONSTRAINT_FOREIGNKEY, message: "FOREIGN KEY constraint failed")
    ) { try migrator.migrate(queue) }
    #expect(try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM c") } == 0)
    #expect(try queue.read { try Bool.fetchOne($0, sql: "PRAGMA foreign_keys") } == true)
  }
}
