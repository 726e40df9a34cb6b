import CSQLite

/// An SQLite result code, primary or extended (GRDB's `ResultCode`).
struct ResultCode: RawRepresentable, Equatable, Hashable, Sendable {
  var rawValue: Int32

  init(rawValue: Int32) { self.rawValue = rawValue }

  /// The primary code an extended one refines (its low byte).
  var primary: ResultCode { ResultCode(rawValue: rawValue & 0xFF) }
}

// SQLite's own names, as GRDB spells them: code written against GRDB reads the same.
// swift-format-ignore: AlwaysUseLowerCamelCase
extension ResultCode {
  static let SQLITE_OK = ResultCode(rawValue: CSQLite.SQLITE_OK)
  static let SQLITE_ERROR = ResultCode(rawValue: CSQLite.SQLITE_ERROR)
  static let SQLITE_BUSY = ResultCode(rawValue: CSQLite.SQLITE_BUSY)
  static let SQLITE_LOCKED = ResultCode(rawValue: CSQLite.SQLITE_LOCKED)
  static let SQLITE_CONSTRAINT = ResultCode(rawValue: CSQLite.SQLITE_CONSTRAINT)
  static let SQLITE_CONSTRAINT_UNIQUE = ResultCode(rawValue: accounts_SQLITE_CONSTRAINT_UNIQUE)
  static let SQLITE_CONSTRAINT_FOREIGNKEY = ResultCode(
    rawValue: accounts_SQLITE_CONSTRAINT_FOREIGNKEY)
  /// `SQLITE_CANTOPEN_SYMLINK`: SQLite refused a path that goes through a link.
  static let SQLITE_CANTOPEN_SYMLINK = ResultCode(rawValue: accounts_SQLITE_CANTOPEN_SYMLINK)
  /// `SQLITE_OK_SYMLINK`: a path resolved, but through a link (sqlite3.h marks it internal).
  static let SQLITE_OK_SYMLINK = ResultCode(rawValue: accounts_SQLITE_OK_SYMLINK)
}

/// What SQLite said when a call failed (GRDB's `DatabaseError`).
///
/// Its extended result code and its message. The store turns it into a `StoreError`
/// (`StoreError.translating`); no code or message reaches a person as it is.
struct DatabaseError: Error, Equatable {
  /// The extended result code.
  var extendedResultCode: ResultCode
  /// SQLite's message, if the connection had one.
  var message: String?

  init(resultCode: ResultCode, message: String? = nil) {
    extendedResultCode = resultCode
    self.message = message
  }

  /// The primary result code (`SQLITE_CONSTRAINT` for `SQLITE_CONSTRAINT_UNIQUE`).
  var resultCode: ResultCode { extendedResultCode.primary }
}
