import AccountsCore
import CSQLite
import FoundationEssentials

extension StoreError {
  /// Translates what the SQLite layer throws into a store error about `path`.
  static func translating(_ error: any Error, path: String, busyTimeout: Double) -> StoreError {
    if let storeError = error as? StoreError { return storeError }
    if let unreadable = error as? UnreadableValue {
      return .unreadableValue(location: path, reason: unreadable.reason)
    }
    guard let dbError = error as? DatabaseError else {
      return .failure(location: path, reason: String(describing: error))
    }
    return translating(
      code: dbError.extendedResultCode.rawValue, message: dbError.message, path: path,
      busyTimeout: busyTimeout)
  }

  /// Translates an SQLite result code (extended or primary) into a store error about `path`:
  /// the one mapping every SQLite error goes through.
  static func translating(code: Int32, message: String?, path: String, busyTimeout: Double)
    -> StoreError
  {
    if code == ResultCode.SQLITE_CANTOPEN_SYMLINK.rawValue {
      return .symlink(location: path, file: path)
    }
    let primary = code & 0xFF
    let failedIO = [SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN].contains(primary)
    if failedIO && FileSystem.isNearlyFull(FileSystem.folder(of: path)) {
      return .diskFull(location: path)
    }
    switch primary {
    case SQLITE_BUSY, SQLITE_LOCKED:
      return .busy(location: path, seconds: busyTimeout)
    case SQLITE_NOTADB:
      return .notADatabase(location: path)
    case SQLITE_CORRUPT:
      return .corrupt(location: path)
    case SQLITE_READONLY, SQLITE_PERM, SQLITE_AUTH:
      return .readOnly(location: path)
    case SQLITE_FULL:
      return .diskFull(location: path)
    case SQLITE_CANTOPEN:
      return .cannotOpen(location: path, reason: "it cannot be opened")
    case SQLITE_CONSTRAINT:
      return .inconsistent(location: path)
    case SQLITE_IOERR:
      return .cannotOpen(location: path, reason: "reading or writing it failed (I/O error)")
    default:
      return .failure(location: path, reason: message ?? "an unexpected database error")
    }
  }
}
