import FoundationEssentials

/// What can go wrong with the store; every case names the location it concerns (a file's path,
/// or a PostgreSQL URI without its password).
///
/// It names no backend: SQLite's errors are translated inside AccountsStore.
public enum StoreError: Error, Equatable, Sendable {
  /// The path names a directory, not a file.
  case isDirectory(location: String)
  /// The folder that should hold the database cannot be created.
  case cannotCreateFolder(location: String, reason: String)
  /// The file exists but is not an SQLite database.
  case notADatabase(location: String)
  /// The file is an SQLite database that `accounts` did not create.
  case foreignDatabase(location: String)
  /// The database holds a schema named `schema`, where the store would be, that `accounts` did
  /// not create (a PostgreSQL database shared with other programs).
  case foreignSchema(location: String, schema: String)
  /// The file is damaged.
  case corrupt(location: String)
  /// The file was written by a newer version of `accounts`.
  case newerSchema(location: String)
  /// The PostgreSQL store had a contract step of `release`, which this version precedes.
  case needsRelease(location: String, release: String)
  /// The PostgreSQL store lacks migrations of this version: its owner runs
  /// `accounts store upgrade` (no other command migrates a shared store).
  case upgradeNeeded(location: String)
  /// The file was written by an older version of `accounts` and needs an upgrade, which this
  /// process cannot write (the file or its folder is read-only to it).
  case olderSchema(location: String)
  /// The file or its folder cannot be written.
  case readOnly(location: String)
  /// The server only allows reading (a PostgreSQL standby).
  case readOnlyServer(location: String)
  /// Another process held the database for longer than the busy timeout.
  case busy(location: String, seconds: Double)
  /// The disk is full.
  case diskFull(location: String)
  /// The file cannot be opened or read, for the reason given.
  case cannotOpen(location: String, reason: String)
  /// The data would break one of the schema's rules; nothing was written.
  case inconsistent(location: String)
  /// A stored value is missing or not what `accounts` wrote (`reason` says which, without the
  /// value itself).
  case unreadableValue(location: String, reason: String)
  /// Any other failure of SQLite, described in words.
  case failure(location: String, reason: String)
  /// The database, or `file` beside it, is a symbolic link.
  case symlink(location: String, file: String)
  /// The database, or `file` beside it, belongs to another user.
  case notOurs(location: String, file: String, owner: String, me: String)
  /// The database, or `file` beside it, may be read or written by other users.
  case notPrivate(location: String, file: String, mode: UInt32)
  /// A folder holding the database lets another user replace it.
  case unsafeFolder(location: String, folder: String, reason: FolderProblem)
  /// The PostgreSQL server cannot be reached or refused the connection (`server` says where:
  /// `at HOST:PORT`, `on the socket FOLDER (port PORT)`).
  case cannotConnect(location: String, server: String, reason: String)
  /// The connection to the PostgreSQL server was lost during the command.
  case connectionLost(location: String, reason: String)
  /// The PostgreSQL role may not do what the command needs.
  case permissionDenied(location: String, reason: String)
  /// The PostgreSQL role may not read what the command reads (a host role's `log`).
  case readDenied(location: String, reason: String)

  /// Why a folder is not safe to keep the database in.
  public enum FolderProblem: Equatable, Sendable {
    /// Another user (not root) owns it.
    case ownedBy(String)
    /// Group or others may write it, and it is not sticky; the mode is given.
    case writableByOthers(UInt32)
  }
}

extension StoreError {
  /// True for failures a full disk causes (no room for the -wal or -shm file).
  public var isDiskFullOrIO: Bool {
    switch self {
    case .diskFull, .cannotOpen: return true
    default: return false
    }
  }
}
