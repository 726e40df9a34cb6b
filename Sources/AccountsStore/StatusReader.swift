import AccountsCore
import GRDBSQLite

#if canImport(Glibc)
import Glibc
#endif

/// Reads the device's state with a handful of plain SQLite calls: what `accounts status` needs.
///
/// Opening a GRDB connection costs more than the whole of what `status` does (its set-up
/// statements, function registration, a dispatch queue, closing observers), so this reader talks
/// to SQLite directly. It runs the same checks as `SQLiteStore.open(path:access: .readOnly)`
/// (`SQLiteStore.locate`, `FileSafety`, the newer-schema and foreign-database refusals from the
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
    let connection = try Connection(
      path: path, real: real, immutable: immutable, busyTimeout: busyTimeout)
    defer { connection.close() }
    try connection.execute("BEGIN")
    defer { try? connection.execute("COMMIT") }
    // Two statements in the usual case: the migrations, then the state. A file without the
    // migration table (new, or not ours) fails the first one and is looked at more closely.
    let recorded: [String]?
    do {
      recorded = try connection.strings("SELECT identifier FROM grdb_migrations")
    } catch {
      guard case .failure(_, let reason) = error, reason.hasPrefix("no such table") else {
        throw error
      }
      recorded = nil
    }
    let refusal = try SQLiteStore.schemaRefusal(path: path, recorded: recorded.map(Set.init)) {
      () throws(StoreError) in
      try !connection.strings("SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
        .isEmpty
    }
    if let refusal { throw refusal }
    // Every schema since the first keeps `activation (state, changed_at)`: a file an older
    // version wrote (upgraded at its first write) reads as it is.
    guard let recorded, !recorded.isEmpty else {
      return DeviceStatus(state: .publicState, changedAt: nil)
    }
    let row = try connection.strings("SELECT state, changed_at FROM activation", columns: 2)
    guard row.count == 2 else { return DeviceStatus(state: .publicState, changedAt: nil) }
    return DeviceStatus(
      state: ActivationState(rawValue: row[0]) ?? .publicState,
      changedAt: Timestamp.date(from: row[1]))
  }

  /// One read-only SQLite connection; every failure becomes a `StoreError` about `path`.
  private struct Connection {
    let path: String
    let busyTimeout: Double
    let handle: OpaquePointer

    init(path: String, real: String, immutable: Bool, busyTimeout: Double) throws(StoreError) {
      self.path = path
      self.busyTimeout = busyTimeout
      // NOFOLLOW: SQLite refuses a link at the file itself; the folders are already resolved.
      // The name is a URI only for the immutable form, which encodes the path itself.
      // EXRESCODE: extended result codes, which tell a refused link from other failures.
      var flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX
      flags |= SQLITE_OPEN_EXRESCODE
      if immutable { flags |= SQLITE_OPEN_URI }
      let name = immutable ? FileSystem.immutableURI(for: real) : real
      var opened: OpaquePointer?
      let code = sqlite3_open_v2(name, &opened, flags, nil)
      guard let opened else {
        throw StoreError.translating(
          code: code, message: nil, path: path, busyTimeout: busyTimeout)
      }
      handle = opened
      guard code == SQLITE_OK else {
        let error = failure(code)
        close()
        throw error
      }
      sqlite3_busy_timeout(opened, Int32(busyTimeout * 1000))
    }

    func close() { sqlite3_close_v2(handle) }

    func failure(_ code: Int32) -> StoreError {
      let message = sqlite3_errmsg(handle).map { String(cString: $0) }
      return StoreError.translating(
        code: code, message: message, path: path, busyTimeout: busyTimeout)
    }

    func execute(_ sql: String) throws(StoreError) {
      let code = sqlite3_exec(handle, sql, nil, nil, nil)
      guard code == SQLITE_OK else { throw failure(sqlite3_extended_errcode(handle)) }
    }

    /// The text of the first `columns` columns of every row (one column: one value per row;
    /// several columns: the first row's values).
    func strings(_ sql: String, columns: Int32 = 1) throws(StoreError) -> [String] {
      var statement: OpaquePointer?
      var code = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
      guard code == SQLITE_OK, let statement else {
        throw failure(sqlite3_extended_errcode(handle))
      }
      defer { sqlite3_finalize(statement) }
      var values: [String] = []
      while true {
        code = sqlite3_step(statement)
        if code == SQLITE_DONE { return values }
        guard code == SQLITE_ROW else { throw failure(sqlite3_extended_errcode(handle)) }
        for column in 0..<columns {
          values.append(sqlite3_column_text(statement, column).map { String(cString: $0) } ?? "")
        }
        if columns > 1 { return values }
      }
    }
  }
}
