import CSQLite

/// One connection to an SQLite database: SQL in, rows out (GRDB's `Database`, over the few C
/// calls of "An Introduction To The SQLite C/C++ Interface").
///
/// Statements are prepared once per connection and kept by their SQL text
/// (`cachedStatement(sql:)`); every failure is a `DatabaseError` with SQLite's extended code. Not
/// shared between threads: `DatabaseQueue` hands it to one access at a time.
final class Database {
  /// The `sqlite3` connection; used only by this layer's files.
  let handle: OpaquePointer
  /// True for a connection opened `SQLITE_OPEN_READONLY`.
  let isReadOnly: Bool
  /// The prepared statements, by SQL text.
  private var statements: [String: Statement] = [:]
  /// More statements than this (SQL built with a varying number of conditions) empty the cache.
  private static let cacheLimit = 128
  /// False for a connection that runs each statement once, as `StatusReader`'s.
  ///
  /// Nothing is kept then, and so the cache's dictionary type is never made: its first
  /// insertion costs the runtime a scan of every protocol conformance in the program (to find
  /// `String: Hashable`), 7% of `accounts status`'s instructions.
  private let keepsStatements: Bool

  /// Opens `path` with `flags` (`SQLITE_OPEN_…`) and a busy timeout of `busyTimeout` seconds;
  /// its statements are kept for their next use unless `keepsStatements` is false.
  ///
  /// A timeout of 0: a busy database fails at once. Extended result codes are always on; the name is read as
  /// an SQLite URI only when it is one (`file:`: the immutable form of a path), so a path is
  /// never taken as a URI.
  init(path: String, flags: Int32, busyTimeout: Double, keepsStatements: Bool = true) throws {
    var flags = flags | SQLITE_OPEN_EXRESCODE
    if path.hasPrefix("file:") { flags |= SQLITE_OPEN_URI }
    var opened: OpaquePointer?
    let code = sqlite3_open_v2(path, &opened, flags, nil)
    guard code == SQLITE_OK, let opened else {
      let message = opened.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
      sqlite3_close_v2(opened)
      throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message)
    }
    handle = opened
    self.keepsStatements = keepsStatements
    isReadOnly = flags & SQLITE_OPEN_READONLY != 0
    if busyTimeout > 0 { sqlite3_busy_timeout(opened, Int32(busyTimeout * 1000)) }
  }

  deinit { close() }

  private var isOpen = true

  /// Closes the connection (once); it must not be used after.
  func close() {
    guard isOpen else { return }
    isOpen = false
    statements.removeAll()
    sqlite3_close_v2(handle)
  }

  /// The rows the last INSERT, UPDATE or DELETE changed.
  var changesCount: Int { Int(sqlite3_changes(handle)) }

  /// The rowid of the last row inserted.
  var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

  /// True inside a transaction.
  var isInsideTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

  /// The error for a failed call that returned `code`, with the connection's message.
  func error(_ code: Int32) -> DatabaseError {
    DatabaseError(
      resultCode: ResultCode(rawValue: code),
      message: sqlite3_errmsg(handle).map { String(cString: $0) })
  }

  /// Runs `sql` with `arguments` bound, ignoring any rows.
  ///
  /// `sql` may hold several statements
  /// (a migration's script): each takes its parameters' values from the front of `arguments`.
  func execute(sql: String, arguments: StatementArguments = StatementArguments()) throws {
    if let statement = statements[sql], !statement.isBusy {
      return try statement.execute(arguments: arguments)
    }
    var remaining = arguments.values[...]
    var single = true
    try sql.withCString { start in
      var next: UnsafePointer<CChar>? = start
      while let current = next, current.pointee != 0 {
        var prepared: OpaquePointer?
        let code = sqlite3_prepare_v2(handle, current, -1, &prepared, &next)
        guard code == SQLITE_OK else { throw error(sqlite3_extended_errcode(handle)) }
        // Only whitespace or a comment: nothing to run.
        guard let prepared else { continue }
        let statement = Statement(handle: prepared, database: self)
        let count = Int(sqlite3_bind_parameter_count(prepared))
        guard remaining.count >= count else {
          throw DatabaseError(resultCode: .SQLITE_ERROR, message: "too few values for the SQL")
        }
        try statement.execute(arguments: StatementArguments(values: remaining.prefix(count)))
        remaining = remaining.dropFirst(count)
        single = single && (next.map { Self.isBlank($0) } ?? true)
        if single { keep(statement, sql: sql) }
      }
    }
    guard remaining.isEmpty else {
      throw DatabaseError(resultCode: .SQLITE_ERROR, message: "too many values for the SQL")
    }
  }

  /// The statement `sql` (one statement), prepared at its first use and kept for the next ones.
  ///
  /// One already stepping through rows is not shared: a second use gets a statement of its own.
  func cachedStatement(sql: String) throws -> Statement {
    if let statement = statements[sql], !statement.isBusy { return statement }
    var prepared: OpaquePointer?
    var rest: UnsafePointer<CChar>?
    let code = sqlite3_prepare_v2(handle, sql, -1, &prepared, &rest)
    guard code == SQLITE_OK else { throw error(sqlite3_extended_errcode(handle)) }
    guard let prepared else {
      throw DatabaseError(resultCode: .SQLITE_ERROR, message: "the SQL holds no statement")
    }
    let statement = Statement(handle: prepared, database: self)
    keep(statement, sql: sql)
    return statement
  }

  private func keep(_ statement: Statement, sql: String) {
    guard keepsStatements, statements[sql] == nil else { return }
    if statements.count >= Self.cacheLimit { statements = statements.filter { $0.value.isBusy } }
    statements[sql] = statement
  }

  private static func isBlank(_ text: UnsafePointer<CChar>) -> Bool {
    var byte = text
    while byte.pointee != 0 {
      guard [0x20, 0x09, 0x0A, 0x0D].contains(byte.pointee) else { return false }
      byte += 1
    }
    return true
  }

  // MARK: - Transactions

  /// How a transaction begins (SQLite's `BEGIN DEFERRED`, `IMMEDIATE`, `EXCLUSIVE`).
  enum TransactionKind: String {
    /// Locks are taken at the first read or write.
    case deferred = "DEFERRED"
    /// The write lock is taken at once, waiting up to the busy timeout for another writer.
    case immediate = "IMMEDIATE"
    /// No other connection may read or write until the end.
    case exclusive = "EXCLUSIVE"
  }

  /// How `inTransaction`'s body ends its transaction.
  enum TransactionCompletion {
    case commit
    case rollback
  }

  /// Runs `body` in one transaction of `kind`: committed as `body` says, rolled back when it
  /// throws (or when the commit fails).
  func inTransaction(
    _ kind: TransactionKind = .deferred, _ body: () throws -> TransactionCompletion
  ) throws {
    try execute(sql: "BEGIN \(kind.rawValue) TRANSACTION")
    let completion: TransactionCompletion
    do {
      completion = try body()
    } catch {
      rollback()
      throw error
    }
    switch completion {
    case .commit:
      do {
        try execute(sql: "COMMIT TRANSACTION")
      } catch {
        rollback()
        throw error
      }
    case .rollback:
      try execute(sql: "ROLLBACK TRANSACTION")
    }
  }

  /// Runs `body` in one transaction of `kind` and returns its result: committed when `body`
  /// returns, rolled back when it throws.
  func transaction<T>(_ kind: TransactionKind, _ body: () throws -> T) throws -> T {
    var result: T?
    try inTransaction(kind) {
      result = try body()
      return .commit
    }
    guard let result else { throw DatabaseError(resultCode: .SQLITE_ERROR) }
    return result
  }

  /// Ends the transaction, if SQLite has not already (a failed statement may have).
  private func rollback() {
    if isInsideTransaction { try? execute(sql: "ROLLBACK TRANSACTION") }
  }
}
