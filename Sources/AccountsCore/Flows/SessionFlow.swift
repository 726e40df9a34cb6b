import AccountsCrypto
import FoundationEssentials

/// The rules of sessions: a fresh random token per login, only its SHA-256 stored, two limits
/// (absolute and idle), the last use written at most once a minute.
enum SessionBook {
  /// Token length in bytes (256 bits).
  static let tokenByteCount = 32

  /// A new token and its hash.
  static func newToken() throws(AccountsError) -> (token: [UInt8], hash: [UInt8]) {
    try hashing { () throws(CryptoError) in
      let token = try SecureRandom.bytes(tokenByteCount)
      return (token, try SHA256.hash(token))
    }
  }

  /// What is stored of `token`.
  static func hash(_ token: [UInt8]) throws(AccountsError) -> [UInt8] {
    try hashing { () throws(CryptoError) in try SHA256.hash(token) }
  }

  /// Stores the session a login starts, inside the login's transaction: sessions that are no
  /// longer live are deleted, the client's previous session ends, and with `endingOthers`
  /// every other session of the account.
  static func start(
    _ start: SessionStart, writer: any AccountWriter, account: Account, secondFactor: Bool,
    endingOthers: Bool, at now: Date
  ) throws(AccountsError) {
    try writer.endSessions(deadAt: now)
    if let previous = start.replacing, let session = try writer.session(tokenHash: previous) {
      _ = try writer.endSession(id: session.id)
    }
    if endingOthers { _ = try writer.endSessions(accountID: account.id, keeping: nil) }
    _ = try writer.startSession(
      NewSession(
        tokenHash: start.tokenHash, accountID: account.id, createdAt: now,
        expiresAt: now.addingTimeInterval(start.policy.lifetime),
        idleSeconds: Int(start.policy.idle), secondFactor: secondFactor))
  }

  /// What this client's session file says about this database.
  enum Found {
    /// No session file, or one for another database.
    case absent
    /// A session file for this database whose session is gone, ended, or of a disabled or
    /// expired account.
    case ended(SavedSession, sessionID: Int64?)
    /// A live session.
    case live(SavedSession, Session, Account)
  }

  /// Reads the session file and looks its token up in `store` (nil: no database yet).
  ///
  /// A file that names the store by another URI is this store's when it recorded the store's
  /// identity and the store says the same one, read first in the same transaction: the token's
  /// hash goes to no other store. The file then records the URI used now.
  static func find(_ env: AccountsEnvironment, store: (any AccountRepository)?)
    throws(AccountsError) -> Found
  {
    guard var saved = try env.sessions.load() else { return .absent }
    let here = env.sessions.recorded(env.storeLocation)
    let elsewhere = saved.database != here
    if elsewhere {
      guard saved.storeID != nil, StoreLocation.isPostgres(saved.database),
        StoreLocation.isPostgres(here), store != nil
      else { return .absent }
    }
    guard let store else { return .ended(saved, sessionID: nil) }
    let hash = try hash(saved.token)
    let now = env.now()
    return try store.read { reader throws(AccountsError) -> Found in
      if elsewhere {
        guard try reader.userdbSettings().storeID == saved.storeID else { return .absent }
        saved.database = here
        // The session is found either way; a file that cannot be rewritten is asked again.
        try? env.sessions.save(saved)
      }
      guard let session = try reader.session(tokenHash: hash) else {
        return .ended(saved, sessionID: nil)
      }
      guard session.isLive(at: now), let account = try reader.account(id: session.accountID),
        !account.isDisabled, !account.isExpired(at: now)
      else { return .ended(saved, sessionID: session.id) }
      return .live(saved, session, account)
    }
  }

  /// `find` through the store opened for the change that may follow (a touch, a logout), which
  /// then uses the same connection.
  static func lookup(_ env: AccountsEnvironment) throws(AccountsError) -> Found {
    try find(env, store: try env.storeForChange())
  }

  /// The SHA-256 of the token this client's session file holds for this database (the
  /// session a new login replaces), read from the file alone; nil when there is none or the
  /// file cannot be used.
  static func previousTokenHash(_ env: AccountsEnvironment) -> [UInt8]? {
    guard let saved = try? env.sessions.load(),
      saved.database == env.sessions.recorded(env.storeLocation)
    else { return nil }
    return try? hash(saved.token)
  }

  /// Forgets an ended session on both sides, as far as possible: the file (when it still names
  /// it) and the row, found by its token, when there was one (`sessionID`; nil: nothing is
  /// opened for writing, so no database is made).
  static func forget(_ saved: SavedSession, sessionID: Int64?, env: AccountsEnvironment) {
    if let current = try? env.sessions.load(), current == saved { try? env.sessions.remove() }
    if sessionID != nil, let hash = try? hash(saved.token),
      let writable = try? env.writableStore()
    {
      _ = try? writable.endSessions(
        SessionEnding(tokenHash: hash, all: false, now: env.now(), quiet: true))
    }
  }

  /// Records a use of a live session: its last use, at most once per `touchInterval`; returns
  /// the session as it now stands.
  ///
  /// A store that cannot be written now (read-only, busy) leaves it as it was.
  @discardableResult
  static func touch(_ session: Session, saved: SavedSession, env: AccountsEnvironment) -> Session {
    let now = env.now()
    guard now.timeIntervalSince(session.lastSeenAt) >= env.sessionPolicy.touchInterval,
      let hash = try? hash(saved.token), let store = try? env.writableStore()
    else { return session }
    var touched = session
    touched.lastSeenAt = now
    touched.idleUntil = now.addingTimeInterval(TimeInterval(session.idleSeconds))
    guard (try? store.touchSession(tokenHash: hash, at: now)) == true else { return session }
    return touched
  }

  /// Writes the session file for a session just stored; if that fails, the session is ended
  /// again (nobody could use it) and the failure thrown.
  ///
  /// A PostgreSQL store's identity, as its login step gave it (`storeID`), is recorded with its
  /// URI, so that another URI of the same store keeps the session; without one the session
  /// stays tied to the URI. An SQLite file is named by its canonical path alone.
  static func keep(
    token: [UInt8], tokenHash: [UInt8], storeID: String?, env: AccountsEnvironment,
    store: any AccountRepository
  ) throws(AccountsError) {
    let storeID = StoreLocation.isPostgres(env.storeLocation) ? storeID : nil
    do {
      try env.sessions.save(
        SavedSession(
          database: env.sessions.recorded(env.storeLocation), storeID: storeID, token: token))
    } catch {
      _ = try? store.endSessions(
        SessionEnding(tokenHash: tokenHash, all: false, now: env.now(), quiet: true))
      throw error
    }
  }
}

/// Who is logged in, as `whoami` tells it.
public struct LoggedIn: Equatable, Sendable {
  /// The account.
  public var account: Account
  /// Its session.
  public var session: Session
}

/// The person's side of sessions: resuming one, `whoami`, `logout`.
public enum SessionFlow {
  /// Home straight away when this client holds a live session on an activated device; nil
  /// otherwise (an ended session is forgotten on both sides).
  public static func resume(_ env: AccountsEnvironment) throws(AccountsError) -> HomeScreen? {
    switch try SessionBook.lookup(env) {
    case .absent:
      return nil
    case .ended(let saved, let id):
      SessionBook.forget(saved, sessionID: id, env: env)
      return nil
    case .live(let saved, let session, let account):
      let home = try home(of: account, env: env)
      SessionBook.touch(session, saved: saved, env: env)
      return home
    }
  }

  /// Home of `account`, read through a connection closed again before this returns.
  private static func home(of account: Account, env: AccountsEnvironment) throws(AccountsError)
    -> HomeScreen
  {
    let failures = try env.readableStore()?.read { reader throws(AccountsError) in
      try reader.eventCount(
        key: account.usernameKey, kind: .loginFailure,
        afterLatestOf: LoginRecorder.failureCountResets)
    }
    return HomeScreen(
      fullName: account.fullName, previousLogin: account.lastLoginAt, failuresSince: failures ?? 0)
  }

  /// The logged-in account and its session (its use recorded); throws `.notLoggedIn`.
  public static func whoami(_ env: AccountsEnvironment) throws(AccountsError) -> LoggedIn {
    switch try SessionBook.lookup(env) {
    case .absent:
      throw .notLoggedIn
    case .ended(let saved, let id):
      SessionBook.forget(saved, sessionID: id, env: env)
      throw .notLoggedIn
    case .live(let saved, let session, let account):
      return LoggedIn(
        account: account, session: SessionBook.touch(session, saved: saved, env: env))
    }
  }

  /// Ends this client's session (or, with `all`, every session of its account); returns how
  /// many sessions ended.
  @discardableResult
  public static func logout(_ env: AccountsEnvironment, all: Bool) throws(AccountsError) -> Int {
    var ended = 0
    let saved: SavedSession
    switch try SessionBook.lookup(env) {
    case .absent:
      throw .notLoggedIn
    case .ended(let found, let id):
      // Logging out of an ended session still forgets it here.
      if all { throw .notLoggedIn }
      saved = found
      if id == nil {
        try env.sessions.remove()
        return 1
      }
    case .live(let found, _, _):
      saved = found
    }
    ended = try env.writableStore().endSessions(
      SessionEnding(
        tokenHash: try SessionBook.hash(saved.token), all: all, now: env.now(), quiet: false))
    try env.sessions.remove()
    return max(ended, 1)
  }
}
