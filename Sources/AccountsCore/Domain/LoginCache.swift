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

/// One person's entry in a login cache: what the server said at their last login here, and a
/// verifier of this host's own (never the server's hash, nor anything the server takes as proof).
public struct CachedLogin: Equatable, Sendable {
  /// The account's id on the server.
  public var accountID: Int64
  /// The user name as stored.
  public var username: String
  /// Its comparison key.
  public var usernameKey: String
  /// The full name (Home's greeting).
  public var fullName: String
  /// The uid, when the records give one.
  public var uid: Int64?
  /// The account's groups, sorted.
  public var groups: [String]
  /// True when the server had it disabled.
  public var isDisabled: Bool
  /// When the account expires, if it does.
  public var expiresAt: Date?
  /// True when a new password must be chosen (which needs the server).
  public var mustChangePassword: Bool
  /// The PBKDF2 rounds of the verifier.
  public var iterations: Int
  /// The verifier's salt, this host's own.
  public var salt: [UInt8]
  /// `OfflineCredential.verifier` of the password.
  public var verifier: [UInt8]
  /// What the server's password hash and second factor were when the verifier was made, under
  /// `salt` (`LoginCacheRefresh.mark`): while they stay the same, a login refreshes the entry
  /// without a second PBKDF2.
  public var mark: [UInt8]
  /// The TOTP secret sealed under `OfflineCredential.sealingKey`, for an account with one.
  public var sealedSecret: [UInt8]?
  /// The last TOTP step accepted (here or by the server).
  public var lastStep: UInt64?
  /// The unused recovery codes' hashes this host knows of.
  public var recoveryCodeHashes: [[UInt8]]
  /// When this entry was written.
  public var refreshedAt: Date

  /// Creates an entry.
  public init(
    accountID: Int64, username: String, usernameKey: String, fullName: String, uid: Int64?,
    groups: [String], isDisabled: Bool, expiresAt: Date?, mustChangePassword: Bool,
    iterations: Int, salt: [UInt8], verifier: [UInt8], mark: [UInt8], sealedSecret: [UInt8]?,
    lastStep: UInt64?, recoveryCodeHashes: [[UInt8]], refreshedAt: Date
  ) {
    self.accountID = accountID
    self.username = username
    self.usernameKey = usernameKey
    self.fullName = fullName
    self.uid = uid
    self.groups = groups
    self.isDisabled = isDisabled
    self.expiresAt = expiresAt
    self.mustChangePassword = mustChangePassword
    self.iterations = iterations
    self.salt = salt
    self.verifier = verifier
    self.mark = mark
    self.sealedSecret = sealedSecret
    self.lastStep = lastStep
    self.recoveryCodeHashes = recoveryCodeHashes
    self.refreshedAt = refreshedAt
  }
}

/// An event of a login the cache answered, waiting to be delivered to the server.
public struct QueuedEvent: Equatable, Sendable {
  /// The random id the cache gave it: the server writes an id once.
  public var offlineID: String
  /// The event, with its own time and this host.
  public var record: AuditRecord

  /// Creates a queued event.
  public init(offlineID: String, record: AuditRecord) {
    self.offlineID = offlineID
    self.record = record
  }
}

/// This host's login cache, in the flows' words: a file of its own beside the system store,
/// each change one transaction.
public protocol LoginCache: AnyObject {
  /// The cache file, as messages name it.
  var path: String { get }
  /// The host the events queued here name (set by the flow that opens it).
  var writingHost: String? { get set }
  /// What `store cache status` tells.
  func status() throws(AccountsError) -> LoginCacheStatus
  /// The entry of the user name key `key`, if any.
  func entry(key: String) throws(AccountsError) -> CachedLogin?
  /// Stores `entry` (replacing the one of its key, its local failures cleared) and records the
  /// server reached at its time.
  func refresh(_ entry: CachedLogin) throws(AccountsError)
  /// Forgets the entry of `key`; false when there was none.
  func forget(key: String) throws(AccountsError) -> Bool

  // MARK: While the server is away

  /// Until when the server is taken as away without trying it (a failure to connect was
  /// recorded); nil when it is to be tried.
  func serverAwayUntil() throws(AccountsError) -> Date?
  /// Records that the server could not be reached: it is not tried again before `until`.
  func markServerAway(until: Date) throws(AccountsError)
  /// The tally of the user name key `key` kept here while the server is away.
  func tally(key: String) throws(AccountsError) -> ThrottleState
  /// Counts a failure in one transaction by the record's policy, as the store does, its events
  /// queued for the server.
  func recordFailure(_ record: LoginFailureRecord) throws(AccountsError) -> LoginFailureOutcome
  /// Queues `event` for the server.
  func queue(_ event: AuditRecord) throws(AccountsError)
  /// Records a login from the cache in one transaction: `proof` accepted (a later step than
  /// the entry's, or an unused recovery code marked used), the tally cleared, `events` queued;
  /// false, with nothing written, when the proof was used before.
  func recordSuccess(key: String, proof: VerificationProof?, events: [AuditRecord])
    throws(AccountsError) -> Bool
  /// The queued events, oldest first.
  func queuedEvents() throws(AccountsError) -> [QueuedEvent]
  /// Forgets the queued event `offlineID` (once the server has it).
  func dequeue(offlineID: String) throws(AccountsError)
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
