import FoundationEssentials

/// A new secret kept pending after a person's password was checked (`2fa enable --begin`).
public struct SecondFactorBegin: Sendable {
  /// The account as read before its password was checked.
  public var expected: Account
  /// When.
  public var now: Date
  /// The new secret, sealed for the account.
  public var sealedSecret: [UInt8]
  /// Which key sealed it.
  public var keyID: String
  /// How long it waits for its first code.
  public var lifetime: TimeInterval

  /// Creates a beginning.
  public init(
    expected: Account, now: Date, sealedSecret: [UInt8], keyID: String, lifetime: TimeInterval
  ) {
    self.expected = expected
    self.now = now
    self.sealedSecret = sealedSecret
    self.keyID = keyID
    self.lifetime = lifetime
  }
}

/// How keeping a pending secret ended.
public enum SecondFactorBeginOutcome: Equatable, Sendable {
  /// Kept (any earlier pending secret replaced), usable until then.
  case stored(expiresAt: Date)
  /// The account is gone, disabled or expired, or its password changed meanwhile.
  case gone
  /// The account has a second factor.
  case alreadyOn
}

/// A person's pending secret turned into their second factor after their password and a code
/// of it were checked (`2fa enable --confirm`).
public struct SecondFactorConfirmation: Sendable {
  /// What the right code proved.
  public struct Enabling: Sendable {
    /// The pending secret the code was checked against, as it was read.
    public var sealedSecret: [UInt8]
    /// The time step of the code.
    public var lastStep: UInt64
    /// The new recovery codes' hashes.
    public var codeHashes: [[UInt8]]
    /// The code as typed, for the store's server to check against the pending secret it keeps
    /// (then `sealedSecret` and `lastStep` are not used); nil when it was checked here.
    public var code: String?

    /// Creates what a right code proved.
    public init(
      sealedSecret: [UInt8], lastStep: UInt64, codeHashes: [[UInt8]], code: String? = nil
    ) {
      self.sealedSecret = sealedSecret
      self.lastStep = lastStep
      self.codeHashes = codeHashes
      self.code = code
    }
  }

  /// The account as read before its password was checked.
  public var expected: Account
  /// When.
  public var now: Date
  /// The second factor to turn on; nil only deletes a pending secret that expired.
  public var enabling: Enabling?
  /// The SHA-256 of the token of the client's own session, which stays when the others end.
  public var keeping: [UInt8]?

  /// Creates a confirmation.
  public init(expected: Account, now: Date, enabling: Enabling?, keeping: [UInt8]?) {
    self.expected = expected
    self.now = now
    self.enabling = enabling
    self.keeping = keeping
  }
}

/// How confirming a pending secret ended.
public enum SecondFactorConfirmOutcome: Equatable, Sendable {
  /// The second factor is on; the pending secret is gone.
  case changed
  /// The account is gone, disabled or expired, or its password changed meanwhile.
  case gone
  /// The account has a second factor already (the pending secret is kept until it expires).
  case alreadyOn
  /// The account has no pending secret.
  case noPending
  /// The pending secret had expired: it is deleted.
  case expired
  /// Another pending secret replaced the one the code was checked against.
  case replaced
  /// Nothing to enable was given and the pending secret has not expired: nothing done.
  case pending
  /// The store's server checked the code against the pending secret: not one of it.
  case codeWrong
  /// The store's server found the code right for a time `seconds` away from its clock.
  case clockOff(seconds: Int)
}

/// The two steps of `2fa enable --begin` and `--confirm`, done by the core's rules over any
/// repository's `write`: what SQLite runs. PostgreSQL runs each as one call of a migration
/// "v12" function (`accounts.second_factor_begin`, `accounts.second_factor_confirm`), which a
/// host role may call though it may write no table.
extension AccountRepository {
  public func beginSecondFactor(_ begin: SecondFactorBegin) throws(AccountsError)
    -> SecondFactorBeginOutcome
  {
    try write { writer throws(AccountsError) -> SecondFactorBeginOutcome in
      guard let account = try unchanged(begin.expected, writer: writer, at: begin.now) else {
        return .gone
      }
      guard try writer.secondFactor(accountID: account.id) == nil else { return .alreadyOn }
      let expiresAt = begin.now.addingTimeInterval(begin.lifetime)
      try writer.storePendingSecondFactor(
        PendingSecondFactor(
          accountID: account.id, sealedSecret: begin.sealedSecret, keyID: begin.keyID,
          expiresAt: expiresAt))
      return .stored(expiresAt: expiresAt)
    }
  }

  public func confirmSecondFactor(_ confirmation: SecondFactorConfirmation)
    throws(AccountsError) -> SecondFactorConfirmOutcome
  {
    try write { writer throws(AccountsError) -> SecondFactorConfirmOutcome in
      let now = confirmation.now
      guard let account = try unchanged(confirmation.expected, writer: writer, at: now) else {
        return .gone
      }
      guard let pending = try writer.pendingSecondFactor(accountID: account.id) else {
        return .noPending
      }
      if pending.expiresAt <= now {
        _ = try writer.removePendingSecondFactor(accountID: account.id)
        return .expired
      }
      guard let enabling = confirmation.enabling else { return .pending }
      guard pending.sealedSecret == enabling.sealedSecret else { return .replaced }
      guard try writer.secondFactor(accountID: account.id) == nil else { return .alreadyOn }
      try writer.storeSecondFactor(
        StoredSecondFactor(
          accountID: account.id, sealedSecret: pending.sealedSecret, keyID: pending.keyID,
          lastStep: enabling.lastStep, enabledAt: now),
        recoveryCodeHashes: enabling.codeHashes)
      _ = try writer.removePendingSecondFactor(accountID: account.id)
      try writer.append(
        AuditRecord(
          .secondFactorEnabled, at: now, username: account.username,
          usernameKey: account.usernameKey))
      let keeping = try confirmation.keeping.flatMap { hash throws(AccountsError) in
        try writer.session(tokenHash: hash)?.id
      }
      _ = try writer.endSessions(accountID: account.id, keeping: keeping)
      return .changed
    }
  }
}
