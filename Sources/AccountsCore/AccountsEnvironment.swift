import AccountsCrypto
import AccountsStore
import Foundation

/// What a flow needs from the world: a console, the database, a clock, the policies.
///
/// The CLI builds the live one; tests build one with a scripted console, an in-memory store and a
/// fixed clock.
public struct AccountsEnvironment {
  /// Where the person or script is.
  public var console: any Console
  /// The database file's path, shown by `status`.
  public var databasePath: String
  /// Opens the database; nil (for reading) when it does not exist yet.
  public var openStore: (AccountStore.Access) throws(StoreError) -> AccountStore?
  /// Reads the device's state; nil when no database exists.
  ///
  /// The CLI reads it with `StatusReader` (plain SQLite calls, the same checks and answers), tests through the store.
  public var readStatus: () throws(StoreError) -> DeviceStatus?
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

  /// Creates an environment.
  public init(
    console: any Console, databasePath: String,
    openStore: @escaping (AccountStore.Access) throws(StoreError) -> AccountStore?,
    readStatus: (() throws(StoreError) -> DeviceStatus?)? = nil,
    now: @escaping () -> Date = Date.init, timeZone: TimeZone? = nil,
    hasher: PasswordHasher = PasswordHasher(), lockout: LockoutPolicy = .standard,
    blocklist: PasswordBlocklist? = nil
  ) {
    self.console = console
    self.databasePath = databasePath
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
    console: any Console, store: AccountStore, now: @escaping () -> Date = Date.init,
    timeZone: TimeZone = TimeZone(identifier: "UTC") ?? .current,
    hasher: PasswordHasher = PasswordHasher(), lockout: LockoutPolicy = .standard,
    blocklist: PasswordBlocklist? = nil
  ) {
    self.init(
      console: console, databasePath: store.path, openStore: { _ in store }, now: now,
      timeZone: timeZone, hasher: hasher, lockout: lockout, blocklist: blocklist)
  }

  /// Reads the state by opening the store (what tests and in-memory stores use).
  private static func statusThroughStore(
    _ openStore: @escaping (AccountStore.Access) throws(StoreError) -> AccountStore?
  ) -> () throws(StoreError) -> DeviceStatus? {
    { () throws(StoreError) -> DeviceStatus? in
      guard let store = try openStore(.readOnly) else { return nil }
      return try store.status()
    }
  }

  /// Opens the database for writing (it always exists afterwards).
  func writableStore() throws(AccountsError) -> AccountStore {
    let opened = try storing { () throws(StoreError) in try openStore(.readWrite) }
    guard let opened else {
      throw .storage(.cannotOpen(path: databasePath, reason: "it could not be created"))
    }
    return opened
  }

  /// True when the database exists and says Activated; creates nothing.
  ///
  /// The read connection is closed before returning, so that a writing connection opened next
  /// is the last to close and leaves the file checkpointed (no data left in the -wal file).
  func isActivated() throws(AccountsError) -> Bool {
    try storing { () throws(StoreError) in try readStatus() }?.state == .activated
  }

  /// Opens the database for reading; nil when nothing was ever stored.
  func readableStore() throws(AccountsError) -> AccountStore? {
    try storing { () throws(StoreError) in try openStore(.readOnly) }
  }
}

/// Runs a store call, wrapping its error.
func storing<T>(_ body: () throws(StoreError) -> T) throws(AccountsError) -> T {
  do {
    return try body()
  } catch {
    throw .from(error)
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
