import AccountsCore
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The device's SQLite database: the SQLite implementation of the core's `AccountRepository`.
///
/// It holds the activation state, the accounts, login tallies and the audit log.
///
/// Every write is one IMMEDIATE transaction, so that several processes can share the file
/// (WAL mode, a busy timeout) and a crash leaves it as it was before or after the write.
public final class SQLiteStore: Sendable {
  /// How the file is opened.
  public typealias Access = StoreAccess

  /// The database file's path, or `:memory:`.
  public let path: String
  /// How long a write waits for another process before failing, in seconds.
  public let busyTimeout: Double
  /// False for a connection opened read-only (`.readOnly`, or `.change` where the file or its
  /// folder cannot be written).
  public let acceptsWrites: Bool
  /// The file itself, its folder resolved (what SQLite opens and `flock` locks).
  private let lockPath: String
  let writer: DatabaseQueue
  /// What `writingHost` holds (the store is shared across threads).
  let host = Mutex<String?>(nil)

  private init(path: String, lockPath: String, busyTimeout: Double, writer: DatabaseQueue) {
    self.path = path
    self.lockPath = lockPath
    self.busyTimeout = busyTimeout
    self.writer = writer
    acceptsWrites = !writer.configuration.readonly
  }

  /// The migrations, in order: the one list both the migrator and the plain status reader
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
    ),
    ("v2", { db in try db.execute(sql: schemaV2) }),
    ("v3", { db in try db.execute(sql: schemaV3) }),
    ("v4", { db in try db.execute(sql: schemaV4) }),
    ("v5", { db in try db.execute(sql: schemaV5) }),
    ("v6", { db in try db.execute(sql: schemaV6) }),
    ("v7", { db in try db.execute(sql: schemaV7) }),
    ("v8", { db in try db.execute(sql: schemaV8) }),
    ("v9", { db in try db.execute(sql: schemaV9) }),
    ("v10", { db in try db.execute(sql: schemaV10) }),
    ("v12", { db in try db.execute(sql: schemaV12) }),
    ("v13", { db in try db.execute(sql: schemaV13) }),
    ("v14", { db in try db.execute(sql: schemaV14) }),
  ]

  /// The identifiers of the migrations this build knows, in order.
  ///
  /// Reads compare the file's `grdb_migrations` rows against this list with one query.
  static let knownMigrations = migrations.map(\.identifier)

  /// The refusal a file's schema calls for, if any, decided the same way by every reader.
  ///
  /// Migrations this build does not know (a newer `accounts` wrote it), or tables with no
  /// migration record (another program's database). `recorded` is nil when the file has no
  /// migration table; `hasTables` is asked only then.
  static func schemaRefusal<Failure: Error>(
    path: String, recorded: Set<String>?, hasTables: () throws(Failure) -> Bool
  ) throws(Failure) -> StoreError? {
    try SchemaContents.sorting(known: knownMigrations, recorded: recorded, hasTables: hasTables)
      .refusal(location: path)
  }

  /// True when `recorded` holds every migration this build knows.
  static func isMigrated(_ recorded: Set<String>?) -> Bool {
    SchemaContents.sorting(known: knownMigrations, recorded: recorded) { false } == .current
  }

  /// The migrator over `migrations` (recording in `grdb_migrations`, as GRDB's did).
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
  /// opening then fails, what this call created is removed again. With `.change` a missing file
  /// gives nil, and an existing one is opened for writing where it can be written and is not
  /// empty, read-only otherwise (`acceptsWrites` tells which). A file written by a newer
  /// version, that is not an `accounts` database, or that is not safely ours (see `FileSafety`)
  /// is left untouched. The path is never taken as an SQLite URI.
  public static func open(path: String, access: Access, busyTimeout: Double = 5) throws(StoreError)
    -> SQLiteStore?
  {
    guard NoFollowVFS.isInstalled else {
      throw .failure(location: path, reason: "SQLite has no file layer to open it with")
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
      throw .cannotOpen(location: path, reason: "it is not an absolute path")
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
        throw .cannotOpen(location: path, reason: "\(blocker) is not a folder")
      case EACCES:
        throw .cannotOpen(location: path, reason: "permission to reach it is denied")
      default:
        throw .cannotOpen(location: path, reason: String(cString: strerror(errno)))
      }
    }
    do throws(StoreError) {
      guard let real = FileSystem.canonical(path) else {
        throw StoreError.cannotOpen(location: path, reason: "its folder cannot be resolved")
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
    throws(StoreError) -> SQLiteStore
  {
    if access == .change {
      // An empty file holds no store yet: read (as a Public device) rather than made one.
      let holdsStore = (FileSystem.info(real)?.size ?? 0) > 0
      return try openChecked(
        path: path, real: real, access: holdsStore && isWritable(real) ? .readWrite : .readOnly,
        busyTimeout: busyTimeout)
    }
    guard access == .readOnly else {
      // Where we cannot write, writing commands stop before touching anything.
      guard isWritable(real) else { throw .readOnly(location: path) }
      return try connect(
        path: path, real: real, access: access, immutable: false, busyTimeout: busyTimeout)
    }
    let store = try reading(real) { immutable throws(StoreError) in
      try connect(
        path: path, real: real, access: access, immutable: immutable, busyTimeout: busyTimeout)
    }
    guard try store.needsUpgrade() else { return store }
    // Written by an older version: upgraded now where it can be written (every reader would
    // otherwise need every older schema's queries), refused where it cannot.
    guard isWritable(real) else { throw .olderSchema(location: path) }
    return try connect(
      path: path, real: real, access: .readWrite, immutable: false, busyTimeout: busyTimeout)
  }

  /// True when the file holds an older schema (some migrations, not all).
  private func needsUpgrade() throws(StoreError) -> Bool {
    do {
      return try writer.read { db in
        guard let recorded = try Self.recordedMigrations(db), !recorded.isEmpty else {
          return false
        }
        return !Self.isMigrated(recorded)
      }
    } catch {
      throw StoreError.translating(error, path: path, busyTimeout: busyTimeout)
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
  ) throws(StoreError) -> SQLiteStore {
    do {
      var config = Configuration()
      config.readonly = access == .readOnly
      config.busyTimeout = busyTimeout
      if !config.readonly { config.prepareDatabase = prepareWriter }
      let openPath = immutable ? FileSystem.immutableURI(for: real) : real
      let queue = try DatabaseQueue(path: openPath, configuration: config)
      let store = SQLiteStore(
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
  public static func inMemory() throws(StoreError) -> SQLiteStore {
    do {
      let queue = try DatabaseQueue()
      try migrator.migrate(queue)
      return SQLiteStore(path: ":memory:", lockPath: ":memory:", busyTimeout: 0, writer: queue)
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
      // One migration at a time, each checkpointed into the database file with the -wal file
      // emptied after it: v2 rebuilds every v1 table, and a small or nearly full disk must not
      // hold every migration's pages twice (in the -wal file and then in the file).
      // Read again under the lock: another process may have migrated the file meanwhile.
      let recorded = try writer.read { db in try Self.recordedMigrations(db) } ?? []
      for migration in Self.knownMigrations where !recorded.contains(migration) {
        try Self.migrator.migrate(writer, upTo: migration)
        _ = try writer.writeWithoutTransaction { db in
          try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
      }
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
          throw StoreError.failure(location: path, reason: "it cannot be put in WAL mode")
        }
        return
      } catch let error as DatabaseError
        where [.SQLITE_BUSY, .SQLITE_LOCKED].contains(error.resultCode) && Date() < deadline
      {
        usleep(20_000)
      }
    }
  }

  /// True when the migration table exists.
  static func hasMigrationTable(_ db: Database) throws -> Bool {
    try Bool.fetchOne(
      db, sql: "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'grdb_migrations'")
      ?? false
  }

  /// The migrations recorded in the file; nil when it has no migration table (a new file).
  static func recordedMigrations(_ db: Database) throws -> Set<String>? {
    guard try hasMigrationTable(db) else { return nil }
    return Set(try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations"))
  }

  /// True when every migration this build knows has been applied.
  static func isMigrated(_ db: Database) throws -> Bool {
    try isMigrated(recordedMigrations(db))
  }
}
