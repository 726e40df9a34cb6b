import Foundation
import GRDB
import GRDBSQLite

/// What can go wrong with the database file; every case names the path it concerns.
public enum StoreError: Error, Equatable, Sendable {
  /// The device is already activated; a second activation is refused.
  case alreadyActivated
  /// The path names a directory, not a file.
  case isDirectory(path: String)
  /// The folder that should hold the database cannot be created.
  case cannotCreateFolder(path: String, reason: String)
  /// The file exists but is not an SQLite database.
  case notADatabase(path: String)
  /// The file is an SQLite database that `accounts` did not create.
  case foreignDatabase(path: String)
  /// The file is damaged.
  case corrupt(path: String)
  /// The file was written by a newer version of `accounts`.
  case newerSchema(path: String)
  /// The file or its folder cannot be written.
  case readOnly(path: String)
  /// Another process held the database for longer than the busy timeout.
  case busy(path: String, seconds: Double)
  /// The disk is full.
  case diskFull(path: String)
  /// The file cannot be opened or read, for the reason given.
  case cannotOpen(path: String, reason: String)
  /// The data would break one of the schema's rules; nothing was written.
  case inconsistent(path: String)
  /// Any other failure of SQLite, described in words.
  case failure(path: String, reason: String)
  /// The database, or `file` beside it, is a symbolic link.
  case symlink(path: String, file: String)
  /// The database, or `file` beside it, belongs to another user.
  case notOurs(path: String, file: String, owner: String, me: String)
  /// The database, or `file` beside it, may be read or written by other users.
  case notPrivate(path: String, file: String, mode: UInt32)
  /// A folder holding the database lets another user replace it.
  case unsafeFolder(path: String, folder: String, reason: FolderProblem)

  /// Why a folder is not safe to keep the database in.
  public enum FolderProblem: Equatable, Sendable {
    /// Another user (not root) owns it.
    case ownedBy(String)
    /// Group or others may write it, and it is not sticky; the mode is given.
    case writableByOthers(UInt32)
  }

  /// Translates a GRDB or SQLite error into a store error about `path`.
  static func translating(_ error: any Error, path: String, busyTimeout: Double) -> StoreError {
    if let storeError = error as? StoreError { return storeError }
    guard let dbError = error as? DatabaseError else {
      return .failure(path: path, reason: String(describing: error))
    }
    return translating(
      code: dbError.extendedResultCode.rawValue, message: dbError.message, path: path,
      busyTimeout: busyTimeout)
  }

  /// Translates an SQLite result code (extended or primary) into a store error about `path`:
  /// the one mapping both the GRDB path and the plain status reader use.
  static func translating(code: Int32, message: String?, path: String, busyTimeout: Double)
    -> StoreError
  {
    if code == SQLiteCode.cantOpenSymlink { return .symlink(path: path, file: path) }
    let primary = code & 0xFF
    let failedIO = [SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN].contains(primary)
    if failedIO && FileSystem.isNearlyFull(FileSystem.folder(of: path)) {
      return .diskFull(path: path)
    }
    switch primary {
    case SQLITE_BUSY, SQLITE_LOCKED:
      return .busy(path: path, seconds: busyTimeout)
    case SQLITE_NOTADB:
      return .notADatabase(path: path)
    case SQLITE_CORRUPT:
      return .corrupt(path: path)
    case SQLITE_READONLY, SQLITE_PERM, SQLITE_AUTH:
      return .readOnly(path: path)
    case SQLITE_FULL:
      return .diskFull(path: path)
    case SQLITE_CANTOPEN:
      return .cannotOpen(path: path, reason: "it cannot be opened")
    case SQLITE_CONSTRAINT:
      return .inconsistent(path: path)
    case SQLITE_IOERR:
      return .cannotOpen(path: path, reason: "reading or writing it failed (I/O error)")
    default:
      return .failure(path: path, reason: message ?? "an unexpected database error")
    }
  }
}

extension StoreError {
  /// True for failures a full disk causes (no room for the -wal or -shm file).
  var isDiskFullOrIO: Bool {
    switch self {
    case .diskFull, .cannotOpen: return true
    default: return false
    }
  }
}
