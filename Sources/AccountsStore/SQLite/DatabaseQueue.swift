import CSQLite

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How a `DatabaseQueue` opens its connection (the part of GRDB's `Configuration` the store
/// sets).
struct Configuration {
  /// Opened `SQLITE_OPEN_READONLY`; otherwise read-write, the file created if missing.
  var readonly = false
  /// How long a statement waits for another connection's lock, in seconds (0: not at all).
  var busyTimeout: Double = 0
  /// `PRAGMA foreign_keys = ON` (SQLite's default is off).
  var foreignKeysEnabled = true
  /// Run on the new connection before it is used (the writer's pragmas).
  var prepareDatabase: ((Database) throws -> Void)?
}

/// One connection shared across threads, one access at a time (GRDB's `DatabaseQueue`): reads
/// in a deferred transaction with the connection kept from writing, writes in an IMMEDIATE
/// transaction, which waits up to the busy timeout for another writer.
final class DatabaseQueue: @unchecked Sendable {
  private let db: Database
  /// How the connection was opened.
  let configuration: Configuration
  /// One access at a time (every access goes through `locked`).
  private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

  /// Opens `path` (`:memory:` for a private in-memory database) as `configuration` says, as
  /// GRDB did: the busy timeout, double-quoted strings refused, foreign keys on,
  /// `prepareDatabase`, then one read of the schema, so that a file that is no database fails
  /// here.
  init(path: String, configuration: Configuration = Configuration()) throws {
    let flags =
      configuration.readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
    let db = try Database(path: path, flags: flags, busyTimeout: configuration.busyTimeout)
    accounts_sqlite3_refuse_double_quoted_strings(db.handle)
    if configuration.foreignKeysEnabled { try db.execute(sql: "PRAGMA foreign_keys = ON") }
    try configuration.prepareDatabase?(db)
    _ = try Row.fetchOne(db, sql: "SELECT * FROM sqlite_master LIMIT 1")
    self.db = db
    self.configuration = configuration
    pthread_mutex_init(mutex, nil)
  }

  /// A private in-memory database.
  convenience init() throws { try self.init(path: ":memory:") }

  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deallocate()
  }

  /// Closes the connection; the queue must not be used after.
  func close() throws { try locked { db in db.close() } }

  private func locked<T>(_ body: (Database) throws -> T) throws -> T {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return try body(db)
  }

  /// Runs `body` in one deferred transaction, the connection kept from writing meanwhile
  /// (`PRAGMA query_only`).
  func read<T>(_ body: (Database) throws -> T) throws -> T {
    try locked { db in
      if !db.isReadOnly { try db.execute(sql: "PRAGMA query_only = 1") }
      defer { if !db.isReadOnly { try? db.execute(sql: "PRAGMA query_only = 0") } }
      return try db.transaction(.deferred) { try body(db) }
    }
  }

  /// Runs `body` in one IMMEDIATE transaction: committed when it returns, rolled back when it
  /// throws.
  func write<T>(_ body: (Database) throws -> T) throws -> T {
    try locked { db in try db.transaction(.immediate) { try body(db) } }
  }

  /// Runs `body` outside any transaction (it begins its own, or runs what cannot run in one:
  /// the journal mode, a checkpoint).
  func writeWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T {
    try locked(body)
  }
}

/// Numbered schema steps, each run once per file in its own IMMEDIATE transaction and recorded
/// in the table `grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)` (the table and the way
/// GRDB's `DatabaseMigrator` ran them, so a file either one made is read by the other).
///
/// A step runs with foreign keys off (SQLite's way to rebuild a table), and
/// `PRAGMA foreign_key_check` must find nothing before its commit.
struct DatabaseMigrator {
  private var migrations: [(identifier: String, migrate: (Database) throws -> Void)] = []

  /// Appends the step `identifier`.
  mutating func registerMigration(
    _ identifier: String, migrate: @escaping (Database) throws -> Void
  ) {
    migrations.append((identifier, migrate))
  }

  /// Runs the steps not yet recorded, up to `target` included (every step when nil).
  func migrate(_ queue: DatabaseQueue, upTo target: String? = nil) throws {
    try queue.writeWithoutTransaction { db in try migrate(db, upTo: target) }
  }

  /// See `migrate(_:upTo:)`; `db` is outside any transaction.
  func migrate(_ db: Database, upTo target: String? = nil) throws {
    var last = migrations.count - 1
    if let target {
      guard let index = migrations.firstIndex(where: { $0.identifier == target }) else {
        throw DatabaseError(resultCode: .SQLITE_ERROR, message: "no migration \(target)")
      }
      last = index
    }
    try db.execute(
      sql: "CREATE TABLE IF NOT EXISTS grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
    let applied = Set(try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations"))
    for migration in migrations[...last] where !applied.contains(migration.identifier) {
      try run(migration, db)
    }
  }

  private func run(
    _ migration: (identifier: String, migrate: (Database) throws -> Void), _ db: Database
  ) throws {
    let foreignKeys = try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") ?? false
    if foreignKeys { try db.execute(sql: "PRAGMA foreign_keys = OFF") }
    do {
      try db.inTransaction(.immediate) {
        try migration.migrate(db)
        try db.execute(
          sql: "INSERT INTO grdb_migrations (identifier) VALUES (?)",
          arguments: [migration.identifier])
        if foreignKeys, try Row.fetchOne(db, sql: "PRAGMA foreign_key_check") != nil {
          throw DatabaseError(
            resultCode: .SQLITE_CONSTRAINT_FOREIGNKEY, message: "FOREIGN KEY constraint failed")
        }
        return .commit
      }
    } catch {
      if foreignKeys { try? db.execute(sql: "PRAGMA foreign_keys = ON") }
      throw error
    }
    if foreignKeys { try db.execute(sql: "PRAGMA foreign_keys = ON") }
  }
}
