import CSQLite

/// One prepared statement of a `Database`: values bound by type, stepped, reset.
///
/// Made through `Database.cachedStatement(sql:)`, it lives as long as its connection.
final class Statement {
  private let handle: OpaquePointer
  private unowned let database: Database
  /// True while a cursor steps through its rows: a second use at the same time gets a statement
  /// of its own.
  var isBusy = false
  /// The names of the result's columns.
  let columnNames: [String]

  init(handle: OpaquePointer, database: Database) {
    self.handle = handle
    self.database = database
    columnNames = (0..<sqlite3_column_count(handle)).map { column in
      sqlite3_column_name(handle, column).map { String(cString: $0) } ?? ""
    }
  }

  deinit { sqlite3_finalize(handle) }

  /// Runs the statement to its end with `arguments` bound, ignoring any rows.
  func execute(arguments: StatementArguments = StatementArguments()) throws {
    try bind(arguments)
    defer { reset() }
    while try step() {}
  }

  /// Resets the statement and binds `arguments` to its parameters, in order.
  func bind(_ arguments: StatementArguments) throws {
    sqlite3_reset(handle)
    sqlite3_clear_bindings(handle)
    let count = Int(sqlite3_bind_parameter_count(handle))
    guard arguments.values.count == count else {
      throw DatabaseError(
        resultCode: .SQLITE_ERROR,
        message: "\(arguments.values.count) values for \(count) parameters")
    }
    for (offset, value) in arguments.values.enumerated() {
      let code = bind(value, at: Int32(offset + 1))
      guard code == SQLITE_OK else { throw database.error(code) }
    }
  }

  private func bind(_ value: DatabaseValue, at index: Int32) -> Int32 {
    switch value {
    case .null:
      return sqlite3_bind_null(handle, index)
    case .integer(let number):
      return sqlite3_bind_int64(handle, index, number)
    case .real(let number):
      return sqlite3_bind_double(handle, index, number)
    case .text(var text):
      // An empty buffer may have no address, which SQLite would take for NULL.
      if text.isEmpty {
        return sqlite3_bind_text(handle, index, "", 0, accounts_sqlite3_transient())
      }
      return text.withUTF8 { bytes in
        bytes.withMemoryRebound(to: CChar.self) { chars in
          sqlite3_bind_text(
            handle, index, chars.baseAddress, Int32(chars.count), accounts_sqlite3_transient())
        }
      }
    case .blob(let bytes):
      guard !bytes.isEmpty else { return sqlite3_bind_zeroblob(handle, index, 0) }
      return bytes.withUnsafeBytes { buffer in
        sqlite3_bind_blob(
          handle, index, buffer.baseAddress, Int32(buffer.count), accounts_sqlite3_transient())
      }
    }
  }

  /// Steps once: true when a row is ready to read, false when the statement is done.
  func step() throws -> Bool {
    switch sqlite3_step(handle) {
    case SQLITE_ROW: return true
    case SQLITE_DONE: return false
    default:
      let error = database.error(sqlite3_extended_errcode(database.handle))
      sqlite3_reset(handle)
      throw error
    }
  }

  /// Ends the current run: the statement holds no lock and can be run again.
  func reset() { sqlite3_reset(handle) }

  /// The current row's values.
  func row() -> [DatabaseValue] {
    (0..<Int32(columnNames.count)).map(value)
  }

  /// The current row's value in `column` (counted from 0), read by its storage class.
  func value(_ column: Int32) -> DatabaseValue {
    switch sqlite3_column_type(handle, column) {
    case SQLITE_INTEGER:
      return .integer(sqlite3_column_int64(handle, column))
    case SQLITE_FLOAT:
      return .real(sqlite3_column_double(handle, column))
    case SQLITE_TEXT:
      let count = Int(sqlite3_column_bytes(handle, column))
      guard let start = sqlite3_column_text(handle, column) else { return .text("") }
      return .text(String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self))
    case SQLITE_BLOB:
      let count = Int(sqlite3_column_bytes(handle, column))
      guard let start = sqlite3_column_blob(handle, column) else { return .blob([]) }
      return .blob([UInt8](UnsafeRawBufferPointer(start: start, count: count)))
    default:
      return .null
    }
  }
}
