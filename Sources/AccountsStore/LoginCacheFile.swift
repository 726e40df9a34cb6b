import AccountsCore
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// This host's login cache: an SQLite file of its own (not the store's schema), root's and
/// private as the store is (`FileSafety`), each change one IMMEDIATE transaction.
public final class LoginCacheFile: LoginCache {
  /// The file, as messages name it.
  public let path: String
  /// The host the events queued here name.
  public var writingHost: String?
  let queue: DatabaseQueue
  /// How long a change waits for another process's (a login beside it).
  static let busyTimeout: Double = 5

  private init(path: String, queue: DatabaseQueue) {
    self.path = path
    self.queue = queue
  }

  /// Opens the cache at `path`, made (private, in a private folder) when `create` and missing;
  /// nil when it is missing and not to be made.
  static func open(path: String, create: Bool) throws(AccountsError) -> LoginCacheFile? {
    guard geteuid() == 0 else { throw .loginCacheNeedsRoot }
    guard NoFollowVFS.isInstalled else {
      throw .storage(.failure(location: path, reason: "SQLite has no file layer to open it with"))
    }
    return try storing { () throws(StoreError) -> LoginCacheFile? in
      guard let located = try SQLiteStore.locate(path: path, access: create ? .readWrite : .change)
      else { return nil }
      var createdFile = false
      do throws(StoreError) {
        if !located.exists { createdFile = try FileSystem.createPrivateFile(at: located.real) }
        try FileSafety.checkFiles(database: located.real, reportedAs: path, mayFix: createdFile)
        let queue = try connect(path: path, real: located.real)
        try FileSafety.checkFiles(database: located.real, reportedAs: path, mayFix: false)
        return LoginCacheFile(path: path, queue: queue)
      } catch {
        if createdFile {
          for file in [located.real] + FileSafety.companionSuffixes.map({ located.real + $0 }) {
            unlink(file)
          }
          for folder in located.createdFolders.reversed() { rmdir(folder) }
        }
        throw error
      }
    }
  }

  private static func connect(path: String, real: String) throws(StoreError) -> DatabaseQueue {
    do {
      var config = Configuration()
      config.busyTimeout = busyTimeout
      config.prepareDatabase = SQLiteStore.prepareWriter
      let queue = try DatabaseQueue(path: real, configuration: config)
      try migrator.migrate(queue)
      return queue
    } catch {
      throw StoreError.translating(error, path: path, busyTimeout: busyTimeout)
    }
  }

  /// Runs `body` in one IMMEDIATE transaction, its failures as store errors about the cache.
  func write<T>(_ body: (Database) throws -> T) throws(AccountsError) -> T {
    do {
      return try queue.write(body)
    } catch let error as AccountsError {
      throw error
    } catch {
      throw .storage(StoreError.translating(error, path: path, busyTimeout: Self.busyTimeout))
    }
  }

  /// Runs `body` in one read transaction, its failures as store errors about the cache.
  func read<T>(_ body: (Database) throws -> T) throws(AccountsError) -> T {
    do {
      return try queue.read(body)
    } catch let error as AccountsError {
      throw error
    } catch {
      throw .storage(StoreError.translating(error, path: path, busyTimeout: Self.busyTimeout))
    }
  }

  /// Sets how many days entries may be used.
  func setDays(_ days: Int, at now: Date) throws(AccountsError) {
    try write { db in
      try db.execute(
        sql: """
          INSERT INTO cache_setting (id, days, enabled_at) VALUES (1, ?, ?)
          ON CONFLICT (id) DO UPDATE SET days = excluded.days
          """, arguments: [days, Timestamp.string(from: now)])
    }
  }

  public func status() throws(AccountsError) -> LoginCacheStatus {
    try read { db in
      let setting = try Row.fetchOne(
        db, sql: "SELECT days, last_contact FROM cache_setting WHERE id = 1")
      let entries = try Int.fetchOne(db, sql: "SELECT count(*) FROM cached_login") ?? 0
      let oldest = try String?.fetchOne(db, sql: "SELECT min(refreshed_at) FROM cached_login")
      let queued = try Int.fetchOne(db, sql: "SELECT count(*) FROM queued_event") ?? 0
      let contact: String? = try setting?["last_contact"]
      return LoginCacheStatus(
        path: path, days: try setting?["days"] ?? LoginCacheDays.standard, entries: entries,
        oldest: (oldest ?? nil).flatMap(Timestamp.date(from:)), queuedEvents: queued,
        lastContact: contact.flatMap(Timestamp.date(from:)))
    }
  }

  /// Where this host keeps its login cache.
  public struct Files: LoginCacheFiles {
    public let path: String

    /// The cache at `path` (absolute).
    public init(path: String) { self.path = path }

    /// True when something is at the path (one `lstat`: nothing opened).
    public var exists: Bool { FileSystem.info(path) != nil }

    public func enable(days: Int, at now: Date) throws(AccountsError) -> any LoginCache {
      guard let cache = try LoginCacheFile.open(path: path, create: true) else {
        throw .storage(.cannotOpen(location: path, reason: "it could not be created"))
      }
      try cache.setDays(days, at: now)
      return cache
    }

    public func open() throws(AccountsError) -> (any LoginCache)? {
      try LoginCacheFile.open(path: path, create: false)
    }

    public func remove() throws(AccountsError) -> Bool {
      guard geteuid() == 0 else { throw .loginCacheNeedsRoot }
      guard FileSystem.info(path) != nil else { return false }
      for file in [path] + FileSafety.companionSuffixes.map({ path + $0 })
      where unlink(file) != 0 && errno != ENOENT {
        throw .storage(.cannotOpen(location: path, reason: String(cString: strerror(errno))))
      }
      return true
    }
  }
}
