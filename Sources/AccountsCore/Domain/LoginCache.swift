import FoundationEssentials

/// What `store cache status` tells of this host's login cache.
public struct LoginCacheStatus: Equatable, Sendable {
  /// The cache file.
  public var path: String
  /// How many days an entry may be used after its last refresh.
  public var days: Int
  /// How many people it holds.
  public var entries: Int
  /// When its least recently refreshed entry was refreshed; nil when it holds none.
  public var oldest: Date?
  /// How many offline events wait to be delivered to the server.
  public var queuedEvents: Int
  /// When this host last reached the server; nil when it never did since the cache was made.
  public var lastContact: Date?

  /// Creates a status.
  public init(
    path: String, days: Int, entries: Int, oldest: Date?, queuedEvents: Int, lastContact: Date?
  ) {
    self.path = path
    self.days = days
    self.entries = entries
    self.oldest = oldest
    self.queuedEvents = queuedEvents
    self.lastContact = lastContact
  }
}

/// This host's login cache, in the flows' words: a file of its own beside the system store,
/// each change one transaction.
public protocol LoginCache: AnyObject {
  /// The cache file, as messages name it.
  var path: String { get }
  /// What `store cache status` tells.
  func status() throws(AccountsError) -> LoginCacheStatus
}

/// Where this host keeps its login cache, and how it is made and removed.
public protocol LoginCacheFiles {
  /// The cache file's path.
  var path: String { get }
  /// Makes the cache (or, when it exists, sets its days), private to root.
  func enable(days: Int, at now: Date) throws(AccountsError) -> any LoginCache
  /// The cache when it exists; nil otherwise.
  func open() throws(AccountsError) -> (any LoginCache)?
  /// Removes the cache file; false when there was none.
  func remove() throws(AccountsError) -> Bool
}

/// How long entries of a login cache may be used.
public enum LoginCacheDays {
  /// The default: a week, SSSD's `offline_credentials_expiration` as many distributions set it.
  public static let standard = 7
  /// The days a cache may keep logins for.
  public static let allowed = 1...365
}
