import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The device's SQLite database: its activation state, its user, login tallies and the audit log.
///
/// Every write is one IMMEDIATE transaction, so that several processes can share the file
/// (WAL mode, a busy timeout) and a crash leaves it as it was before or after the write.
public final class AccountStore: Sendable {
  /// How the file is opened.
  public enum Access: Sendable {
    /// Reading only; a missing file is not created.
    case readOnly
    /// Reading and writing; a missing file (and its folder) is created, private to its owner.
    case readWrite
  }

  /// The database file's path, or `:memory:`.
  public let path: String
  /// How long a write waits for another process before failing, in seconds.
  public let busyTimeout: Double
  /// The file itself, its folder resolved (what SQLite opens and `flock` locks).
  private let lockPath: String
  private let writer: DatabaseQueue

  private init(path: String, lockPath: String, busyTimeout: Double, writer: DatabaseQueue) {
    self.path = path
    self.lockPath = lockPath
    self.busyTimeout = busyTimeout
    self.writer = writer
  }

  /// The migrations, in order: the one list both the GRDB migrator and the plain status reader
  /// (`StatusReader`) read their identifiers from.
  ///
  /// Never edit one once shipped: append a new one.
  static let migrations: [(identifier: String, migrate: @Sendable (Database) throws -> Void)] = [
    (
      "v1",
      { db in
        try db.execute(sql: schemaV1)
        try db.execute(
          sql:
            "INSERT INTO activation (id, state, user_id, changed_at) VALUES (1, 'Public', NULL, ?)",
          arguments: [Timestamp.string(from: Date())])
      }
    )
  ]

  /// The identifiers of the migrations this build knows, in order.
  ///
  /// Reads compare the file's `grdb_migrations` rows against this list with one query, instead of
  /// GRDB's checks, which load its schema cache.
  static let knownMigrations = migrations.map(\.identifier)

  /// The refusal a file's schema calls for, if any, decided the same way by every reader.
  ///
  /// Migrations this build does not know (a newer `accounts` wrote it), or tables with no
  /// migration record (another program's database). `recorded` is nil when the file has no
  /// migration table; `hasTables` is asked only then.
  static func schemaRefusal<Failure: Error>(
    path: String, recorded: Set<String>?, hasTables: () throws(Failure) -> Bool
  ) throws(Failure) -> StoreError? {
    guard let recorded else { return try hasTables() ? .foreignDatabase(path: path) : nil }
    return recorded.isSubset(of: knownMigrations) ? nil : .newerSchema(path: path)
  }

  /// True when `recorded` holds every migration this build knows.
  static func isMigrated(_ recorded: Set<String>?) -> Bool {
    Set(knownMigrations).isSubset(of: recorded ?? [])
  }

  /// GRDB's migrator over `migrations`.
  static var migrator: DatabaseMigrator {
    var migrator = DatabaseMigrator()
    for migration in migrations {
      migrator.registerMigration(migration.identifier, migrate: migration.migrate)
    }
    return migrator
  }

  /// Opens the database at `path` (absolute).
  ///
  /// With `.readOnly` access a missing file gives nil (nothing was ever stored). With `.readWrite`
  /// a missing folder is created mode 0700 and a missing file mode 0600, and migrations run; if
  /// opening then fails, what this call created is removed again. A file written by a newer
  /// version, that is not an `accounts` database, or that is not safely ours (see `FileSafety`)
  /// is left untouched. The path is never taken as an SQLite URI.
  public static func open(path: String, access: Access, busyTimeout: Double = 5) throws(StoreError)
    -> AccountStore?
  {
    guard NoFollowVFS.isInstalled else {
      throw .failure(path: path, reason: "SQLite has no file layer to open it with")
    }
    guard let located = try locate(path: path, access: access) else { return nil }
    let (real, exists, createdFolders) = (located.real, located.exists, located.createdFolders)
    var createdFile = false
    do {
      if !exists { createdFile = try FileSystem.createPrivateFile(at: real) }
      try FileSafety.checkFiles(database: real, reportedAs: path, mayFix: access == .readWrite)
      let store = try openChecked(
        path: path, real: real, access: access, busyTimeout: busyTimeout)
      // SQLite made or opened the -wal and -shm files meanwhile: they must be ours too (in a
      // sticky shared folder another user could have raced to make them first).
      try FileSafety.checkFiles(database: real, reportedAs: path, mayFix: false)
      return store
    } catch {
      if createdFile {
        // Only what this process made: a companion planted by someone else stays as evidence.
        for file in [real] + FileSafety.companionSuffixes.map({ real + $0 })
        where FileSystem.info(file)?.owner == geteuid() {
          unlink(file)
        }
        for folder in createdFolders.reversed() { rmdir(folder) }
      }
      throw error
    }
  }

  /// Where a database path leads, once checked: the file itself (folders resolved), whether it
  /// exists, and the folders this call created for it.
  struct Located {
    var real: String
    var exists: Bool
    var createdFolders: [String]
  }

  /// The checks before any open, shared by every way of opening: an absolute path, what is
  /// there (nil for a missing file when reading), a missing folder created when writing, the
  /// folders resolved and safe (`FileSafety.checkFolders`).
  static func locate(path: String, access: Access) throws(StoreError) -> Located? {
    guard path.hasPrefix("/") else {
      throw .cannotOpen(path: path, reason: "it is not an absolute path")
    }
    var createdFolders: [String] = []
    let exists = FileSystem.info(path) != nil
    if !exists {
      switch errno {
      case ENOENT:
        guard access == .readWrite else { return nil }
        createdFolders = try FileSystem.createPrivateFolder(for: path)
      case ENOTDIR:
        let blocker = FileSystem.blockingAncestor(of: path) ?? FileSystem.folder(of: path)
        throw .cannotOpen(path: path, reason: "\(blocker) is not a folder")
      case EACCES:
        throw .cannotOpen(path: path, reason: "permission to reach it is denied")
      default:
        throw .cannotOpen(path: path, reason: String(cString: strerror(errno)))
      }
    }
    do throws(StoreError) {
      guard let real = FileSystem.canonical(path) else {
        throw StoreError.cannotOpen(path: path, reason: "its folder cannot be resolved")
      }
      try FileSafety.checkFolders(of: FileSystem.folder(of: real), database: path)
      return Located(real: real, exists: exists, createdFolders: createdFolders)
    } catch {
      for folder in createdFolders.reversed() { rmdir(folder) }
      throw error
    }
  }

  /// Opens a file that passed the safety checks: as immutable where it cannot be written.
  private static func openChecked(path: String, real: String, access: Access, busyTimeout: Double)
    throws(StoreError) -> AccountStore
  {
    guard access == .readOnly else {
      // Where we cannot write, writing commands stop before touching anything.
      guard isWritable(real) else { throw .readOnly(path: path) }
      return try connect(
        path: path, real: real, access: access, immutable: false, busyTimeout: busyTimeout)
    }
    return try reading(real) { immutable throws(StoreError) in
      try connect(
        path: path, real: real, access: access, immutable: immutable, busyTimeout: busyTimeout)
    }
  }

  /// True when this process may write the database `real` and the folder its -wal and -shm go in.
  static func isWritable(_ real: String) -> Bool {
    FileSystem.isWritable(real) && FileSystem.isWritable(FileSystem.folder(of: real))
  }

  /// Reads through `body`, telling it to open the file as immutable (no locks, no -wal or -shm)
  /// where it cannot be written, and again as immutable when a full disk leaves no room for the
  /// -shm file; shared by every reader.
  static func reading<T>(_ real: String, _ body: (_ immutable: Bool) throws(StoreError) -> T)
    throws(StoreError) -> T
  {
    // SQLite in WAL mode writes -wal and -shm files beside the database, even to read.
    let writable = isWritable(real)
    do {
      return try body(!writable)
    } catch let error where writable && error.isDiskFullOrIO {
      return try body(true)
    }
  }

  private static func connect(
    path: String, real: String, access: Access, immutable: Bool, busyTimeout: Double
  ) throws(StoreError) -> AccountStore {
    do {
      var config = Configuration()
      config.readonly = access == .readOnly
      config.busyMode = .timeout(busyTimeout)
      config.label = "accounts"
      config.prepareDatabase { db in
        if !db.configuration.readonly { try prepareWriter(db) }
      }
      let openPath = immutable ? FileSystem.immutableURI(for: real) : real
      let queue = try DatabaseQueue(path: openPath, configuration: config)
      let store = AccountStore(
        path: path, lockPath: real, busyTimeout: busyTimeout, writer: queue)
      try store.checkOwnership()
      if access == .readWrite {
        try store.prepareForWriting()
      }
      return store
    } catch {
      throw StoreError.translating(error, path: path, busyTimeout: busyTimeout)
    }
  }

  /// A private in-memory database, migrated, for tests.
  public static func inMemory() throws(StoreError) -> AccountStore {
    do {
      let queue = try DatabaseQueue()
      try migrator.migrate(queue)
      return AccountStore(path: ":memory:", lockPath: ":memory:", busyTimeout: 0, writer: queue)
    } catch {
      throw StoreError.translating(error, path: ":memory:", busyTimeout: 0)
    }
  }

  /// Settings of every writing connection: durable commits, and deleted rows (a reset user's
  /// hash) overwritten rather than left in free pages, whatever SQLite's build defaults to.
  static func prepareWriter(_ db: Database) throws {
    try db.execute(sql: "PRAGMA synchronous = FULL")
    try db.execute(sql: "PRAGMA secure_delete = ON")
  }

  /// Refuses a file written by a newer version, or an SQLite database that is not ours.
  private func checkOwnership() throws {
    try writer.read { db in
      let refusal = try Self.schemaRefusal(path: path, recorded: Self.recordedMigrations(db)) {
        try Bool.fetchOne(
          db, sql: "SELECT 1 FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' LIMIT 1") ?? false
      }
      if let refusal { throw refusal }
    }
  }

  /// Puts the file in WAL mode and runs pending migrations, one process at a time.
  private func prepareForWriting() throws {
    let ready = try writer.read { db in
      try String.fetchOne(db, sql: "PRAGMA journal_mode") == "wal" && Self.isMigrated(db)
    }
    if ready { return }
    // A new file: switch it to WAL and create the tables. An advisory lock on the file keeps two
    // `accounts` processes from doing it at once; switching the journal mode needs SQLite's
    // exclusive lock, which the busy timeout does not wait for, so it is retried until then.
    try FileSystem.withExclusiveLock(on: lockPath) {
      try switchToWAL()
      try Self.migrator.migrate(writer)
    }
  }

  private func switchToWAL() throws {
    let deadline = Date().addingTimeInterval(busyTimeout)
    while true {
      do {
        let mode = try writer.writeWithoutTransaction { db in
          try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
        }
        guard mode == "wal" else {
          throw StoreError.failure(path: path, reason: "it cannot be put in WAL mode")
        }
        return
      } catch let error as DatabaseError
        where [.SQLITE_BUSY, .SQLITE_LOCKED].contains(error.resultCode) && Date() < deadline
      {
        usleep(20_000)
      }
    }
  }

  /// Runs `body` in one IMMEDIATE write transaction, translating errors.
  private func write<T>(_ body: (Database) throws -> T) throws(StoreError) -> T {
    do {
      return try writer.writeWithoutTransaction { db in
        var result: T?
        try db.inTransaction(.immediate) {
          result = try body(db)
          return .commit
        }
        guard let result else { throw StoreError.failure(path: path, reason: "no result") }
        return result
      }
    } catch {
      throw StoreError.translating(error, path: path, busyTimeout: busyTimeout)
    }
  }

  /// Runs `body` in a read transaction, translating errors.
  private func read<T>(_ body: (Database) throws -> T) throws(StoreError) -> T {
    do {
      return try writer.read { db in
        // A file created but never migrated (a read-only open of a new file) reads as empty.
        try body(db)
      }
    } catch {
      throw StoreError.translating(error, path: path, busyTimeout: busyTimeout)
    }
  }

  /// True when GRDB's migration table exists (a plain query: GRDB's `tableExists` loads its
  /// schema cache, which costs more than the rest of a `status`).
  private static func hasMigrationTable(_ db: Database) throws -> Bool {
    try Bool.fetchOne(
      db, sql: "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'grdb_migrations'")
      ?? false
  }

  /// The migrations recorded in the file; nil when it has no migration table (a new file).
  private static func recordedMigrations(_ db: Database) throws -> Set<String>? {
    guard try hasMigrationTable(db) else { return nil }
    return Set(try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations"))
  }

  /// True when every migration this build knows has been applied.
  private static func isMigrated(_ db: Database) throws -> Bool {
    try isMigrated(recordedMigrations(db))
  }

  private static func insertEvent(
    _ db: Database, _ kind: AuditEventKind, at date: Date, username: String?,
    usernameKey: String?, detail: String? = nil
  ) throws {
    try db.execute(
      sql: """
        INSERT INTO audit_event (occurred_at, kind, username, username_key, detail)
        VALUES (?, ?, ?, ?, ?)
        """,
      arguments: [Timestamp.string(from: date), kind.rawValue, username, usernameKey, detail])
  }

  /// Logs a refused attempt and returns the lock's end when `tally` is locked at `date`.
  private static func refuseIfLocked(
    _ db: Database, _ tally: ThrottleState, _ username: String, _ key: String, at date: Date
  ) throws -> Date? {
    guard let until = tally.lock(at: date) else { return nil }
    try insertEvent(
      db, .loginFailure, at: date, username: username, usernameKey: key, detail: "locked")
    return until
  }

  private static func throttle(_ db: Database, key: String) throws -> ThrottleState {
    guard
      let row = try Row.fetchOne(
        db,
        sql: "SELECT failures, lockouts, locked_until FROM login_throttle WHERE username_key = ?",
        arguments: [key])
    else { return .clear }
    let lockedUntil: String? = row["locked_until"]
    return ThrottleState(
      failures: row["failures"], lockouts: row["lockouts"],
      lockedUntil: lockedUntil.flatMap(Timestamp.date(from:)))
  }

  private static func storedUser(_ db: Database, key: String?) throws -> StoredUser? {
    var sql = """
      SELECT username, username_key, full_name, email, password_hash, created_at, last_login_at
      FROM user JOIN activation ON activation.user_id = user.id
      WHERE activation.state = 'Activated'
      """
    var arguments = StatementArguments()
    if let key {
      sql += " AND user.username_key = ?"
      arguments = [key]
    }
    guard let row = try Row.fetchOne(db, sql: sql, arguments: arguments) else { return nil }
    let createdAt: String = row["created_at"]
    let lastLoginAt: String? = row["last_login_at"]
    return StoredUser(
      username: row["username"], usernameKey: row["username_key"], fullName: row["full_name"],
      email: row["email"], passwordHash: row["password_hash"],
      createdAt: Timestamp.date(from: createdAt) ?? Date(timeIntervalSince1970: 0),
      lastLoginAt: lastLoginAt.flatMap(Timestamp.date(from:)))
  }

  // MARK: - Writes

  /// Stores `user` and sets the state to Activated, in one transaction.
  ///
  /// Throws `.alreadyActivated` when the device is already activated; nothing is written then.
  public func activate(_ user: NewUser, at date: Date) throws(StoreError) {
    try write { db in
      let state = try String.fetchOne(db, sql: "SELECT state FROM activation WHERE id = 1")
      // The row is made by the first migration; without it the file is damaged.
      guard let state else { throw StoreError.corrupt(path: path) }
      guard state == ActivationState.publicState.rawValue else {
        throw StoreError.alreadyActivated
      }
      let now = Timestamp.string(from: date)
      try db.execute(
        sql: """
          INSERT INTO user (id, username, username_key, full_name, email, password_hash,
                            created_at, updated_at, last_login_at)
          VALUES (1, ?, ?, ?, ?, ?, ?, ?, NULL)
          """,
        arguments: [
          user.username, user.usernameKey, user.fullName, user.email, user.passwordHash, now, now,
        ])
      try db.execute(
        sql: "UPDATE activation SET state = 'Activated', user_id = 1, changed_at = ? WHERE id = 1",
        arguments: [now])
      try db.execute(
        sql: "DELETE FROM login_throttle WHERE username_key = ?", arguments: [user.usernameKey])
      try Self.insertEvent(
        db, .activation, at: date, username: user.username, usernameKey: user.usernameKey)
    }
  }

  /// Returns the device to Public and deletes its user and all login tallies, in one transaction.
  ///
  /// Returns false (and records nothing) when the device was already Public.
  @discardableResult
  public func reset(at date: Date) throws(StoreError) -> Bool {
    try write { db in
      let user = try Self.storedUser(db, key: nil)
      let state = try String.fetchOne(db, sql: "SELECT state FROM activation WHERE id = 1")
      guard state == ActivationState.activated.rawValue else { return false }
      try db.execute(sql: "DELETE FROM user")
      try db.execute(
        sql: "UPDATE activation SET state = 'Public', user_id = NULL, changed_at = ? WHERE id = 1",
        arguments: [Timestamp.string(from: date)])
      try db.execute(sql: "DELETE FROM login_throttle")
      try Self.insertEvent(
        db, .reset, at: date, username: user?.username, usernameKey: user?.usernameKey)
      return true
    }
  }

  /// Counts a failed login for `usernameKey`, locking it when the policy says so; `detail`
  /// says why in the audit log (never a secret).
  ///
  /// A name already locked is not counted again; the attempt is logged as refused. Tallies of
  /// every name that have seen no failure for `policy.forgetAfter`, and hold no lock, are
  /// forgotten first.
  public func recordLoginFailure(
    username: String, usernameKey: String, at date: Date, policy: LockoutPolicy,
    detail: String = "invalid user name or password"
  ) throws(StoreError) -> LoginFailureOutcome {
    try write { db in
      try Self.forgetOldTallies(db, at: date, policy: policy)
      let tally = try Self.throttle(db, key: usernameKey)
      if let until = try Self.refuseIfLocked(db, tally, username, usernameKey, at: date) {
        return .alreadyLocked(until: until)
      }
      let (next, lockedUntil) = policy.tally(afterFailure: tally, at: date)
      try Self.insertEvent(
        db, .loginFailure, at: date, username: username, usernameKey: usernameKey,
        detail: detail)
      var outcome = LoginFailureOutcome.counted(failures: next.failures)
      if let until = lockedUntil {
        outcome = .lockedNow(until: until)
        try Self.insertEvent(
          db, .lockout, at: date, username: username, usernameKey: usernameKey,
          detail: "locked until \(Timestamp.string(from: until))")
      }
      try db.execute(
        sql: """
          INSERT INTO login_throttle (username_key, failures, lockouts, locked_until, updated_at)
          VALUES (?1, ?2, ?3, ?4, ?5)
          ON CONFLICT (username_key) DO UPDATE
          SET failures = ?2, lockouts = ?3, locked_until = ?4, updated_at = ?5
          """,
        arguments: [
          usernameKey, next.failures, next.lockouts,
          next.lockedUntil.map(Timestamp.string(from:)), Timestamp.string(from: date),
        ])
      return outcome
    }
  }

  private static func forgetOldTallies(_ db: Database, at date: Date, policy: LockoutPolicy)
    throws
  {
    try db.execute(
      sql: """
        DELETE FROM login_throttle
        WHERE updated_at < ?1 AND (locked_until IS NULL OR locked_until <= ?2)
        """,
      arguments: [
        Timestamp.string(from: date.addingTimeInterval(-policy.forgetAfter)),
        Timestamp.string(from: date),
      ])
  }

  /// Logs a refused attempt and returns the lock's end when `usernameKey` is locked at `date`;
  /// writes nothing and returns nil otherwise.
  public func recordRefusalIfLocked(username: String, usernameKey: String, at date: Date)
    throws(StoreError) -> Date?
  {
    try write { db in
      let tally = try Self.throttle(db, key: usernameKey)
      return try Self.refuseIfLocked(db, tally, username, usernameKey, at: date)
    }
  }

  /// Records a successful login: clears the tally, stamps the last login, logs it.
  ///
  /// If another process locked the name meanwhile, the login is refused instead.
  public func recordLoginSuccess(username: String, usernameKey: String, at date: Date)
    throws(StoreError) -> LoginSuccessOutcome
  {
    try write { db in
      let tally = try Self.throttle(db, key: usernameKey)
      if let until = try Self.refuseIfLocked(db, tally, username, usernameKey, at: date) {
        return .locked(until: until)
      }
      let previous = try Self.storedUser(db, key: usernameKey)?.lastLoginAt
      let failuresSince =
        try Int.fetchOne(
          db,
          sql: """
            SELECT count(*) FROM audit_event
            WHERE kind = 'login_failure' AND username_key = ?1
              AND id > (SELECT coalesce(max(id), 0) FROM audit_event
                        WHERE username_key = ?1 AND kind IN ('login_success', 'activation'))
            """, arguments: [usernameKey]) ?? 0
      try db.execute(
        sql: "DELETE FROM login_throttle WHERE username_key = ?", arguments: [usernameKey])
      try db.execute(
        sql: "UPDATE user SET last_login_at = ? WHERE username_key = ?",
        arguments: [Timestamp.string(from: date), usernameKey])
      try Self.insertEvent(
        db, .loginSuccess, at: date, username: username, usernameKey: usernameKey)
      return .loggedIn(previousLogin: previous, failuresSince: failuresSince)
    }
  }

  /// Replaces the user's password hash (after a login with a hash weaker than the policy).
  public func updatePasswordHash(usernameKey: String, to hash: String, at date: Date)
    throws(StoreError)
  {
    try write { db in
      try db.execute(
        sql: "UPDATE user SET password_hash = ?, updated_at = ? WHERE username_key = ?",
        arguments: [hash, Timestamp.string(from: date), usernameKey])
    }
  }

  /// Clears the failures and lock of `usernameKey`; returns the tally it had.
  @discardableResult
  public func unlock(username: String, usernameKey: String, at date: Date) throws(StoreError)
    -> ThrottleState
  {
    try write { db in
      let tally = try Self.throttle(db, key: usernameKey)
      try db.execute(
        sql: "DELETE FROM login_throttle WHERE username_key = ?", arguments: [usernameKey])
      try Self.insertEvent(db, .unlock, at: date, username: username, usernameKey: usernameKey)
      return tally
    }
  }

  // MARK: - Reads

  /// The device's state.
  public func status() throws(StoreError) -> DeviceStatus {
    try read { db in
      guard try Self.isMigrated(db) else {
        return DeviceStatus(state: .publicState, changedAt: nil)
      }
      guard let row = try Row.fetchOne(db, sql: "SELECT state, changed_at FROM activation")
      else { return DeviceStatus(state: .publicState, changedAt: nil) }
      let state: String = row["state"]
      let changedAt: String = row["changed_at"]
      return DeviceStatus(
        state: ActivationState(rawValue: state) ?? .publicState,
        changedAt: Timestamp.date(from: changedAt))
    }
  }

  /// The activated user, or nil on a Public device.
  public func user() throws(StoreError) -> StoredUser? {
    try read { db in
      guard try Self.isMigrated(db) else { return nil }
      return try Self.storedUser(db, key: nil)
    }
  }

  /// The account whose key is `usernameKey` (nil if none), that key's tally and the device's
  /// stored hash, read together.
  public func loginRecord(usernameKey: String) throws(StoreError) -> LoginRecord {
    try read { db in
      guard try Self.isMigrated(db) else {
        return LoginRecord(user: nil, tally: .clear, referenceHash: nil)
      }
      return LoginRecord(
        user: try Self.storedUser(db, key: usernameKey),
        tally: try Self.throttle(db, key: usernameKey),
        referenceHash: try Self.storedUser(db, key: nil)?.passwordHash)
    }
  }

  /// The newest `limit` events (all when nil), oldest first.
  public func auditEvents(limit: Int?) throws(StoreError) -> [AuditEvent] {
    try read { db in
      guard try Self.isMigrated(db) else { return [] }
      let rows = try Row.fetchAll(
        db,
        sql: """
          SELECT * FROM (
            SELECT id, occurred_at, kind, username, detail FROM audit_event
            ORDER BY id DESC LIMIT ?)
          ORDER BY id ASC
          """, arguments: [limit ?? -1])
      return rows.map { row in
        let occurredAt: String = row["occurred_at"]
        let kind: String = row["kind"]
        return AuditEvent(
          id: row["id"],
          occurredAt: Timestamp.date(from: occurredAt) ?? Date(timeIntervalSince1970: 0),
          kind: AuditEventKind(rawValue: kind) ?? .loginFailure, username: row["username"],
          detail: row["detail"])
      }
    }
  }

  /// Checks the file and its invariants; returns the problems found (none when healthy).
  ///
  /// Runs `PRAGMA integrity_check` and `foreign_key_check`, and checks that a Public device
  /// keeps no user and an Activated one has exactly one.
  public func consistencyProblems() throws(StoreError) -> [String] {
    try read { db in
      var problems: [String] = []
      let integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check")
      if integrity != ["ok"] { problems += integrity }
      if try Row.fetchOne(db, sql: "PRAGMA foreign_key_check") != nil {
        problems.append("foreign key violation")
      }
      guard try Self.isMigrated(db) else { return problems }
      let state = try String.fetchOne(db, sql: "SELECT state FROM activation WHERE id = 1")
      let users = try Int.fetchOne(db, sql: "SELECT count(*) FROM user") ?? 0
      switch state {
      case "Public" where users != 0: problems.append("Public with \(users) user(s)")
      case "Activated" where users != 1: problems.append("Activated with \(users) user(s)")
      case "Public", "Activated": break
      default: problems.append("no activation row")
      }
      return problems
    }
  }
}
