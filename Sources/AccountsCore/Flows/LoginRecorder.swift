import FoundationEssentials

/// What recording a failed login did.
public enum LoginFailureOutcome: Equatable, Sendable {
  /// The failure was counted; `failures` in a row so far.
  case counted(failures: Int)
  /// This failure earned a lock until the date.
  case lockedNow(until: Date)
  /// The name was already locked until the date; nothing was checked.
  case alreadyLocked(until: Date)
}

/// What recording a successful login found.
public enum LoginSuccessOutcome: Equatable, Sendable {
  /// Logged in: Home.
  case loggedIn(HomeScreen)
  /// The name was locked meanwhile (by a concurrent process); the login is refused.
  case locked(until: Date)
  /// The account was removed, disabled or given another password meanwhile; refused.
  case gone
  /// The verification code's step (or the recovery code) was used by another login meanwhile.
  case codeAlreadyUsed
  /// The store's server checked the code (or recovery code) and found it wrong.
  case codeWrong
}

/// What a successful login does beyond the password: the second factor it passed, and the
/// session it starts.
public struct LoginCompletion: Equatable, Sendable {
  /// The second factor passed, accepted in the login's transaction (nil: none asked).
  public var proof: VerificationProof?
  /// The session to start (nil: `--no-session`, `verify`).
  public var session: SessionStart?
  /// Where the login came from, for the audit event (`pam service=sshd`).
  public var origin: String?
  /// Whether this host keeps a login cache: a store whose server keeps the second factors then
  /// hands back the unused recovery codes' hashes with a login that passed a second step.
  public var keepsRecoveryCodes: Bool

  /// Creates a completion.
  public init(
    proof: VerificationProof? = nil, session: SessionStart? = nil, origin: String? = nil,
    keepsRecoveryCodes: Bool = false
  ) {
    self.proof = proof
    self.session = session
    self.origin = origin
    self.keepsRecoveryCodes = keepsRecoveryCodes
  }
}

/// A session a login starts.
public struct SessionStart: Equatable, Sendable {
  /// SHA-256 of the new token.
  public var tokenHash: [UInt8]
  /// How long it lasts.
  public var policy: SessionPolicy
  /// The SHA-256 of the token of the session this client held before, ended now (a new token
  /// at every login).
  public var replacing: [UInt8]?

  /// Creates a session start.
  public init(tokenHash: [UInt8], policy: SessionPolicy, replacing: [UInt8]?) {
    self.tokenHash = tokenHash
    self.policy = policy
    self.replacing = replacing
  }
}

/// The login bookkeeping, each a single transaction: the core's rules (the lockout arithmetic,
/// what "failures since your last login" counts, the audit wording) over any repository.
public enum LoginRecorder {
  /// The events after which failures no longer count as "since your last login".
  public static let failureCountResets: [AuditEventKind] = [
    .loginSuccess, .activation, .accountAdded,
  ]

  /// Counts a failed login of `usernameKey`, locking it when `policy` says so.
  ///
  /// `detail` says why in the audit log (never a secret). A name already locked is not counted
  /// again; the attempt is logged as refused. Every name's tally is forgotten alike
  /// `policy.forgetAfter` after its last failure unless a lock is in force, so that what is kept
  /// tells nothing about which names exist.
  public static func recordFailure(
    _ store: any AccountRepository, username: String, usernameKey: String, at now: Date,
    policy: LockoutPolicy, detail: String = Messages.detailInvalidCredentials,
    origin: String? = nil
  ) throws(AccountsError) -> LoginFailureOutcome {
    try store.recordLoginFailure(
      LoginFailureRecord(
        username: username, usernameKey: usernameKey, now: now, policy: policy,
        detail: Messages.detail(detail, origin: origin),
        refusalDetail: Messages.detail(Messages.detailLocked, origin: origin),
        lockoutDetail: Messages.detailLockedUntil(LoginFailureRecord.untilMark)))
  }

  /// Logs a refused attempt and returns the lock's end when `usernameKey` is locked at `now`;
  /// writes nothing and returns nil otherwise.
  ///
  /// `tally` is the name's tally as just read, when it was: nothing is read again, and a name
  /// it shows unlocked is not written to at all.
  public static func recordRefusalIfLocked(
    _ store: any AccountRepository, username: String, usernameKey: String, at now: Date,
    tally: ThrottleState? = nil
  ) throws(AccountsError) -> Date? {
    let known: ThrottleState
    if let tally {
      known = tally
    } else {
      known = try store.read { reader throws(AccountsError) in try reader.tally(key: usernameKey) }
    }
    guard known.lock(at: now) != nil else { return nil }
    return try store.recordLoginRefusal(
      username: username, usernameKey: usernameKey, at: now,
      detail: Messages.detail(Messages.detailLocked, origin: nil))
  }

  /// Records a successful login of the account with `usernameKey` in one transaction: the
  /// tally cleared, the last login stamped, `newHash` stored (a rehash, or with
  /// `requiredChange` the new password a login asked for, must-change cleared), logged.
  ///
  /// `expected` is the account as read before the password was checked: if it was removed,
  /// disabled, expired or given another password meanwhile (a stronger hash of the same password, from a
  /// concurrent login, is no change), or the name was locked, nothing changes but the log.
  public static func recordSuccess(
    _ store: any AccountRepository, username: String, usernameKey: String, at now: Date,
    expected: Account? = nil, newHash: String? = nil, requiredChange: Bool = false,
    completion: LoginCompletion = LoginCompletion()
  ) throws(AccountsError) -> LoginSuccessOutcome {
    try store.recordLoginSuccess(
      LoginSuccessRecord(
        username: username, usernameKey: usernameKey, now: now, expected: expected,
        newHash: newHash, requiredChange: requiredChange, completion: completion,
        goneDetail: Messages.detailInvalidCredentials,
        refusalDetail: Messages.detail(Messages.detailLocked, origin: nil),
        requiredChangeDetail: Messages.detailRequiredAtLogin,
        codesLeftDetails: Messages.detailsCodesLeft,
        failureCountResets: failureCountResets))
  }

  /// A failed login counted inside a write, by `LockoutPolicy`'s arithmetic.
  static func failure(_ record: LoginFailureRecord, writer: any AccountWriter)
    throws(AccountsError) -> LoginFailureOutcome
  {
    let (now, key) = (record.now, record.usernameKey)
    try writer.forgetTallies(
      lastFailureBefore: now.addingTimeInterval(-record.policy.forgetAfter), notLockedAt: now)
    if let until = try refusal(
      writer, username: record.username, key: key, at: now, detail: record.refusalDetail)
    {
      return .alreadyLocked(until: until)
    }
    let (next, lockedUntil) = record.policy.tally(afterFailure: try writer.tally(key: key), at: now)
    try writer.append(
      AuditRecord(
        .loginFailure, at: now, username: record.username, usernameKey: key,
        detail: record.detail))
    if let lockedUntil {
      try writer.append(
        AuditRecord(
          .lockout, at: now, username: record.username, usernameKey: key,
          detail: record.lockoutDetail(until: lockedUntil)))
    }
    try writer.setTally(next, key: key, at: now)
    return lockedUntil.map { .lockedNow(until: $0) } ?? .counted(failures: next.failures)
  }

  /// A successful login recorded inside a write (see `recordSuccess`).
  static func success(_ record: LoginSuccessRecord, writer: any AccountWriter)
    throws(AccountsError) -> LoginSuccessOutcome
  {
    let (now, key, completion) = (record.now, record.usernameKey, record.completion)
    if let until = try refusal(
      writer, username: record.username, key: key, at: now, detail: record.refusalDetail)
    {
      return .locked(until: until)
    }
    guard var account = try writer.account(key: key), !account.isDisabled,
      !account.isExpired(at: now),
      record.expected.map({
        $0.id == account.id && $0.passwordChangedAt == account.passwordChangedAt
      }) ?? true
    else {
      try writer.append(
        AuditRecord(
          .loginFailure, at: now, username: record.username, usernameKey: key,
          detail: record.goneDetail))
      return .gone
    }
    if let proof = completion.proof {
      guard
        try SecondFactorGate.accept(
          proof, writer: writer, account: account, at: now, detail: record.codesLeftDetail)
      else { return .codeAlreadyUsed }
    }
    let failuresSince = try writer.eventCount(
      key: key, kind: .loginFailure, afterLatestOf: record.failureCountResets)
    let previous = account.lastLoginAt
    account.lastLoginAt = now
    if let newHash = record.newHash {
      account.passwordHash = newHash
      account.updatedAt = now
    }
    if record.requiredChange {
      account.mustChangePassword = false
      account.passwordChangedAt = now
      try writer.append(
        AuditRecord(
          .passwordChanged, at: now, username: account.username, usernameKey: key,
          detail: record.requiredChangeDetail))
    }
    try writer.update(account)
    try writer.setTally(nil, key: key, at: now)
    try writer.append(
      AuditRecord(
        .loginSuccess, at: now, username: record.username, usernameKey: key,
        detail: record.successDetail))
    if let start = completion.session {
      try SessionBook.start(
        start, writer: writer, account: account, secondFactor: completion.proof != nil,
        endingOthers: record.requiredChange, at: now)
    } else if record.requiredChange {
      _ = try writer.endSessions(accountID: account.id, keeping: nil)
    }
    return .loggedIn(
      HomeScreen(
        fullName: account.fullName, previousLogin: previous, failuresSince: failuresSince))
  }

  /// Clears the failures and lock of `usernameKey` (an administrator's unlock) and logs it;
  /// returns the tally it had.
  @discardableResult
  public static func unlock(
    _ store: any AccountRepository, username: String, usernameKey: String, at now: Date
  ) throws(AccountsError) -> ThrottleState {
    try store.write { writer throws(AccountsError) -> ThrottleState in
      let tally = try writer.tally(key: usernameKey)
      try writer.setTally(nil, key: usernameKey, at: now)
      try writer.append(
        AuditRecord(.unlock, at: now, username: username, usernameKey: usernameKey))
      return tally
    }
  }

  /// Logs a refused attempt (with `detail`) and returns the lock's end when `key` is locked
  /// at `now`.
  static func refusal(
    _ writer: any AccountWriter, username: String, key: String, at now: Date, detail: String
  ) throws(AccountsError) -> Date? {
    guard let until = try writer.tally(key: key).lock(at: now) else { return nil }
    try writer.append(
      AuditRecord(.loginFailure, at: now, username: username, usernameKey: key, detail: detail))
    return until
  }
}
