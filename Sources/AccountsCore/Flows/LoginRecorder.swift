import Foundation

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

  /// Creates a completion.
  public init(
    proof: VerificationProof? = nil, session: SessionStart? = nil, origin: String? = nil
  ) {
    self.proof = proof
    self.session = session
    self.origin = origin
  }
}

/// A session a login starts.
public struct SessionStart: Equatable, Sendable {
  /// SHA-256 of the new token.
  public var tokenHash: [UInt8]
  /// How long it lasts.
  public var policy: SessionPolicy
  /// The session this client held before, ended now (a new token at every login).
  public var replacing: Int64?

  /// Creates a session start.
  public init(tokenHash: [UInt8], policy: SessionPolicy, replacing: Int64?) {
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
    try store.write { writer throws(AccountsError) -> LoginFailureOutcome in
      try writer.forgetTallies(
        lastFailureBefore: now.addingTimeInterval(-policy.forgetAfter), notLockedAt: now)
      if let until = try refusal(
        writer, username: username, key: usernameKey, at: now, origin: origin)
      {
        return .alreadyLocked(until: until)
      }
      let (next, lockedUntil) = policy.tally(
        afterFailure: try writer.tally(key: usernameKey), at: now)
      try writer.append(
        AuditRecord(
          .loginFailure, at: now, username: username, usernameKey: usernameKey,
          detail: Messages.detail(detail, origin: origin)))
      if let lockedUntil {
        try writer.append(
          AuditRecord(
            .lockout, at: now, username: username, usernameKey: usernameKey,
            detail: Messages.detailLockedUntil(Timestamp.string(from: lockedUntil))))
      }
      try writer.setTally(next, key: usernameKey, at: now)
      return lockedUntil.map { .lockedNow(until: $0) } ?? .counted(failures: next.failures)
    }
  }

  /// Logs a refused attempt and returns the lock's end when `usernameKey` is locked at `now`;
  /// writes nothing and returns nil otherwise.
  public static func recordRefusalIfLocked(
    _ store: any AccountRepository, username: String, usernameKey: String, at now: Date
  ) throws(AccountsError) -> Date? {
    let tally = try store.read { reader throws(AccountsError) in
      try reader.tally(key: usernameKey)
    }
    guard tally.lock(at: now) != nil else { return nil }
    return try store.write { writer throws(AccountsError) -> Date? in
      try refusal(writer, username: username, key: usernameKey, at: now)
    }
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
    try store.write { writer throws(AccountsError) -> LoginSuccessOutcome in
      if let until = try refusal(writer, username: username, key: usernameKey, at: now) {
        return .locked(until: until)
      }
      guard var account = try writer.account(key: usernameKey), !account.isDisabled,
        !account.isExpired(at: now),
        expected.map({ $0.id == account.id && $0.passwordChangedAt == account.passwordChangedAt })
          ?? true
      else {
        try writer.append(
          AuditRecord(
            .loginFailure, at: now, username: username, usernameKey: usernameKey,
            detail: Messages.detailInvalidCredentials))
        return .gone
      }
      if let proof = completion.proof {
        guard try SecondFactorGate.accept(proof, writer: writer, account: account, at: now)
        else { return .codeAlreadyUsed }
      }
      let failuresSince = try writer.eventCount(
        key: usernameKey, kind: .loginFailure, afterLatestOf: failureCountResets)
      let previous = account.lastLoginAt
      account.lastLoginAt = now
      if let newHash {
        account.passwordHash = newHash
        account.updatedAt = now
      }
      if requiredChange {
        account.mustChangePassword = false
        account.passwordChangedAt = now
        try writer.append(
          AuditRecord(
            .passwordChanged, at: now, username: account.username, usernameKey: usernameKey,
            detail: Messages.detailRequiredAtLogin))
      }
      try writer.update(account)
      try writer.setTally(nil, key: usernameKey, at: now)
      try writer.append(
        AuditRecord(
          .loginSuccess, at: now, username: username, usernameKey: usernameKey,
          detail: completion.origin))
      if let start = completion.session {
        try SessionBook.start(
          start, writer: writer, account: account, secondFactor: completion.proof != nil,
          endingOthers: requiredChange, at: now)
      } else if requiredChange {
        _ = try writer.endSessions(accountID: account.id, keeping: nil)
      }
      return .loggedIn(
        HomeScreen(
          fullName: account.fullName, previousLogin: previous, failuresSince: failuresSince))
    }
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

  /// Logs a refused attempt and returns the lock's end when `key` is locked at `now`.
  static func refusal(
    _ writer: any AccountWriter, username: String, key: String, at now: Date,
    origin: String? = nil
  ) throws(AccountsError) -> Date? {
    guard let until = try writer.tally(key: key).lock(at: now) else { return nil }
    try writer.append(
      AuditRecord(
        .loginFailure, at: now, username: username, usernameKey: key,
        detail: Messages.detail(Messages.detailLocked, origin: origin)))
    return until
  }
}
