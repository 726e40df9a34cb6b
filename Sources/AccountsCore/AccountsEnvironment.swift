import AccountsCrypto
import FoundationEssentials

/// What a flow needs from the world: a console, the database, a clock, the policies.
///
/// The CLI builds the live one; tests build one with a scripted console, an in-memory store and a
/// fixed clock.
public struct AccountsEnvironment {
  /// Where the person or script is.
  public var console: any Console
  /// Where the store is (a file's path, or a PostgreSQL URI without its password), shown by
  /// `status`.
  public var storeLocation: String
  /// What holds the store (a file of its own, or a shared database), as `status` tells.
  public var storeContainer: StoreContainer = .ownFile
  /// Opens the database; nil (for reading) when it does not exist yet.
  public var openStore: (StoreAccess) throws(StoreError) -> (any AccountRepository)?
  /// Reads the device's state for `status`, which needs nothing else; nil when no database
  /// exists.
  ///
  /// The CLI reads it with `StatusReader` (plain SQLite calls, the same checks and answers), tests
  /// through the store. Commands that go on to read or write read the state through the store
  /// they open (`isActivated`): each command opens the database once.
  public var readStatus: () throws(StoreError) -> DeviceStatus?
  /// Reads the device's state and the facts of a login of a user name key together, where the
  /// backend can (a PostgreSQL server, in one statement); nil from it means "take the usual
  /// way" (see `activatedStore(forLoginOf:)`).
  public var readLoginStart: ((String) throws(StoreError) -> (DeviceStatus, LoginFacts)?)?
  /// The current time.
  public var now: () -> Date
  /// The time zone Home shows times in.
  public var timeZone: TimeZone { fixedTimeZone ?? .current }
  /// The zone given at creation; nil for the process's own, looked up only when a time is shown
  /// (reading it costs more than the rest of `accounts status`).
  private var fixedTimeZone: TimeZone?
  /// Makes and checks password hashes.
  public var hasher: PasswordHasher
  /// When failed logins lock a name.
  public var lockout: LockoutPolicy
  /// The administrator's forbidden passwords, if configured.
  public var blocklist: PasswordBlocklist?
  /// Where this client keeps its session token.
  public var sessions: any SessionKeeper
  /// Where the key sealing TOTP secrets is kept.
  public var keys: any SealingKeyStore
  /// How long sessions last.
  public var sessionPolicy: SessionPolicy
  /// This host's name, which its user records' entry and an authenticator app's label use.
  ///
  /// The same name as `writingHost` (`WritingHost`), or `localhost` when there is none.
  public var hostName: String
  /// The host recorded on every audit event and session this process writes.
  ///
  /// Its node name, or `ACCOUNTS_HOST_NAME`; nil records none. It is handed to every store
  /// opened, which stamps it; a PostgreSQL store records the host of the caller's own role
  /// instead, when it has one.
  public var writingHost: String?
  /// Where logins come from when not from a person at `accounts` (`pam service=sshd …`): added
  /// to the audit events of logins.
  public var origin: String?
  /// Where user records are written (nil: nowhere, as in most tests).
  public var userRecords: (any UserRecordFolders)?
  /// What this system's name service knows (nil: nothing, as in most tests).
  public var nameService: (any NameService)?
  /// Where this host keeps its login cache (nil: nowhere, as for an SQLite store).
  public var loginCacheFiles: (any LoginCacheFiles)?
  /// Where this host keeps its syncs that could not reach the server until one that does
  /// reports them (nil: nowhere, as for an SQLite store).
  public var unreachedSyncs: (any UnreachedSyncsKeeper)?
  /// Called after an offline event is written on the server and before the login cache
  /// forgets it (a test's hook: the program stops there).
  public var afterOfflineDelivery: (() -> Void)?
  /// Called after a change is committed and before its user records are written (a test's
  /// hook: the program stops there).
  public var beforeUserRecords: (() -> Void)?

  /// Creates an environment.
  public init(
    console: any Console, storeLocation: String,
    openStore: @escaping (StoreAccess) throws(StoreError) -> (any AccountRepository)?,
    readStatus: (() throws(StoreError) -> DeviceStatus?)? = nil,
    now: @escaping () -> Date = Date.init, timeZone: TimeZone? = nil,
    hasher: PasswordHasher = PasswordHasher(), lockout: LockoutPolicy = .standard,
    blocklist: PasswordBlocklist? = nil, sessions: (any SessionKeeper)? = nil,
    keys: (any SealingKeyStore)? = nil, sessionPolicy: SessionPolicy = .standard,
    hostName: String = "localhost"
  ) {
    self.console = console
    self.storeLocation = storeLocation
    self.sessions = sessions ?? MemorySessionKeeper()
    self.keys = keys ?? MemorySealingKeyStore()
    self.sessionPolicy = sessionPolicy
    self.hostName = hostName
    self.openStore = openStore
    self.readStatus = readStatus ?? Self.statusThroughStore(openStore)
    self.now = now
    self.fixedTimeZone = timeZone
    self.hasher = hasher
    self.lockout = lockout
    self.blocklist = blocklist
  }

  /// An environment over one already-open store (tests, in-memory databases).
  public init(
    console: any Console, store: any AccountRepository, now: @escaping () -> Date = Date.init,
    timeZone: TimeZone = TimeZone(identifier: "UTC") ?? .current,
    hasher: PasswordHasher = PasswordHasher(), lockout: LockoutPolicy = .standard,
    blocklist: PasswordBlocklist? = nil, sessions: (any SessionKeeper)? = nil,
    keys: (any SealingKeyStore)? = nil, sessionPolicy: SessionPolicy = .standard
  ) {
    self.init(
      console: console, storeLocation: store.location, openStore: { _ in store }, now: now,
      timeZone: timeZone, hasher: hasher, lockout: lockout, blocklist: blocklist,
      sessions: sessions, keys: keys, sessionPolicy: sessionPolicy)
  }

  /// Reads the state by opening the store (what tests and in-memory stores use).
  private static func statusThroughStore(
    _ openStore: @escaping (StoreAccess) throws(StoreError) -> (any AccountRepository)?
  ) -> () throws(StoreError) -> DeviceStatus? {
    { () throws(StoreError) -> DeviceStatus? in
      guard let store = try openStore(.readOnly) else { return nil }
      return try store.storedStatus()
    }
  }

  /// Opens the database for `access`, telling the store which host writes.
  private func opened(_ access: StoreAccess) throws(AccountsError) -> (any AccountRepository)? {
    let store = try storing { () throws(StoreError) in try openStore(access) }
    store?.writingHost = writingHost
    return store
  }

  /// Opens the database for writing (it always exists afterwards).
  func writableStore() throws(AccountsError) -> any AccountRepository {
    guard let store = try opened(.readWrite) else {
      throw .storage(.cannotOpen(location: storeLocation, reason: "it could not be created"))
    }
    return store
  }

  /// True when the database exists and says Activated; creates nothing.
  ///
  /// Every caller goes on to change the store: it is opened for that (`.change`), and the store
  /// opener hands the same connection to the `writableStore()` that follows.
  func isActivated() throws(AccountsError) -> Bool {
    if storeContainer == .sharedDatabase {
      // A server's state read answers in one statement, and leaves the store known to be of
      // this version, so that opening it for the change that follows asks nothing more.
      guard let status = try storing({ () throws(StoreError) in try readStatus() }),
        status.state == .activated
      else { return false }
      return try storeForChange() != nil
    }
    guard let store = try storeForChange() else { return false }
    return try storing { () throws(StoreError) in try store.storedStatus() }.state == .activated
  }

  /// Opens an existing database to decide on a change (`StoreAccess.change`); nil when nothing
  /// was ever stored.
  func storeForChange() throws(AccountsError) -> (any AccountRepository)? {
    try opened(.change)
  }

  /// Opens the database for reading; nil when nothing was ever stored.
  func readableStore() throws(AccountsError) -> (any AccountRepository)? {
    try opened(.readOnly)
  }
}

/// Runs a store call, wrapping its error (shared with the backends, which implement the
/// repository's typed-throws methods over their own store errors).
public func storing<T>(_ body: () throws(StoreError) -> T) throws(AccountsError) -> T {
  do {
    return try body()
  } catch {
    throw .storage(error)
  }
}

/// The lock error for `until`, told in the environment's clock and zone.
extension AccountsEnvironment {
  func lockedError(until: Date) -> AccountsError {
    .locked(until: until, now: now(), timeZone: timeZone)
  }

  /// Opens the database for a login of the user name key `key` (known before anything is
  /// asked: a flag, PAM) and refuses a Public device; with the facts of that login when the
  /// backend read them with the state.
  func activatedStore(forLoginOf key: String?) throws(AccountsError)
    -> (store: any AccountRepository, facts: LoginFacts?)
  {
    if let key, let readLoginStart,
      let (status, facts) = try storing({ () throws(StoreError) in try readLoginStart(key) })
    {
      guard status.state == .activated else { throw .notActivated }
      return (try writableStore(), facts)
    }
    return (try activatedStore(), nil)
  }

  /// Opens the database for writing and refuses a Public device.
  func activatedStore() throws(AccountsError) -> any AccountRepository {
    guard try isActivated() else { throw .notActivated }
    return try writableStore()
  }

  /// Opens an existing database for an administrator's change; a missing one is refused
  /// (a mistyped `--database` creates nothing).
  func existingStore() throws(AccountsError) -> any AccountRepository {
    guard try storeForChange() != nil else { throw .noDatabase(location: storeLocation) }
    return try writableStore()
  }
}

/// Runs a crypto call, wrapping its error.
func hashing<T>(_ body: () throws(CryptoError) -> T) throws(AccountsError) -> T {
  do {
    return try body()
  } catch {
    throw .crypto(error)
  }
}
