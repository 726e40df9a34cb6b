import AccountsCore
import CSQLite

#if canImport(Glibc)
import Glibc
#endif

/// Reads the device's state with a handful of plain SQLite calls: what `accounts status` needs.
///
/// It opens a bare connection of the SQLite layer (no set-up statements, no schema read before
/// its own two queries), which costs less than the store's writer. It runs the same checks as
/// `SQLiteStore.open(path:access: .readOnly)` (`SQLiteStore.locate`, `FileSafety`, the newer-schema and foreign-database refusals from the
/// same migration list, the immutable fallback) and translates errors through the same
/// `StoreError.translating`; a test compares the two paths' answers file by file.
public enum StatusReader {
  /// The state of the database at `path`, or nil when no database exists there.
  public static func read(path: String, busyTimeout: Double = 5) throws(StoreError)
    -> DeviceStatus?
  {
    guard let located = try SQLiteStore.locate(path: path, access: .readOnly) else { return nil }
    let real = located.real
    try FileSafety.checkFiles(database: real, reportedAs: path, mayFix: false)
    let status = try SQLiteStore.reading(real) { immutable throws(StoreError) in
      try query(path: path, real: real, immutable: immutable, busyTimeout: busyTimeout)
    }
    try FileSafety.checkFiles(database: real, reportedAs: path, mayFix: false)
    return status
  }

  private static func query(path: String, real: String, immutable: Bool, busyTimeout: Double)
    throws(StoreError) -> DeviceStatus
  {
    do {
      return try query(open(real: real, immutable: immutable, busyTimeout: busyTimeout), path: path)
    } catch {
      throw StoreError.translating(error, path: path, busyTimeout: busyTimeout)
    }
  }

  /// One read-only connection.
  ///
  /// NOFOLLOW: SQLite refuses a link at the file itself; the folders are already resolved. The
  /// name is a URI only for the immutable form, which encodes the path itself. Each statement
  /// runs once, so none is kept.
  private static func open(real: String, immutable: Bool, busyTimeout: Double) throws
    -> Database
  {
    try Database(
      path: immutable ? FileSystem.immutableURI(for: real) : real,
      flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX,
      busyTimeout: busyTimeout, keepsStatements: false)
  }

  private static func query(_ db: Database, path: String) throws -> DeviceStatus {
    try db.execute(sql: "BEGIN")
    defer { try? db.execute(sql: "COMMIT") }
    // Two statements in the usual case: the migrations, then the state. A file without the
    // migration table (new, or not ours) fails the first one and is looked at more closely.
    let recorded: [String]?
    do {
      recorded = try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations")
    } catch let error as DatabaseError
      where error.resultCode == .SQLITE_ERROR
      && (error.message ?? "").hasPrefix("no such table")
    {
      recorded = nil
    }
    let refusal = try SQLiteStore.schemaRefusal(path: path, recorded: recorded.map(Set.init)) {
      try Row.fetchOne(db, sql: "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
        != nil
    }
    if let refusal { throw refusal }
    // Every schema since the first keeps `activation (state, changed_at)`: a file an older
    // version wrote (upgraded at its first write) reads as it is.
    guard let recorded, !recorded.isEmpty,
      let row = try Row.fetchOne(db, sql: "SELECT state, changed_at FROM activation")
    else {
      return DeviceStatus(state: .publicState, changedAt: nil)
    }
    let (state, changedAt) = ((try? row[0] as String?) ?? nil, (try? row[1] as String?) ?? nil)
    return DeviceStatus(
      state: state.flatMap(ActivationState.init(rawValue:)) ?? .publicState,
      changedAt: changedAt.flatMap(Timestamp.date(from:)))
  }
}
