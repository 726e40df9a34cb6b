import FoundationEssentials

/// Sessions ended by their holder (`logout`, a session found ended): found by the SHA-256 of the
/// client's token, so that only the holder of a token can end its session.
public struct SessionEnding: Sendable {
  /// The SHA-256 of the client's token.
  public var tokenHash: [UInt8]
  /// True: every session of the session's account.
  public var all: Bool
  /// When.
  public var now: Date
  /// True: nothing logged (a session already ended, forgotten).
  public var quiet: Bool

  /// Creates an ending.
  public init(tokenHash: [UInt8], all: Bool, now: Date, quiet: Bool) {
    self.tokenHash = tokenHash
    self.all = all
    self.now = now
    self.quiet = quiet
  }

  /// The logout event's detail for one session (`id`) or, with `all`, for `count` sessions.
  public func detail(id: Int64, count: Int) -> String {
    all ? Messages.detailSessions(count) : Messages.detailSession(id)
  }

  /// The logout event's details for a store that fills them in itself: one session (`{id}`
  /// standing for its id), all of one session, all of more (`{count}` standing for how many).
  public static let detailTemplates = [
    Messages.detailSession("{id}"), Messages.detailSessions(1),
    Messages.detailManySessions("{count}"),
  ]
}

/// A person's own new password after the current one was checked (`passwd`, PAM's password
/// stage).
public struct PasswordChangeRecord: Sendable {
  /// The account as read before the current password was checked.
  public var expected: Account
  /// When.
  public var now: Date
  /// The new password's hash.
  public var newHash: String
  /// The second factor passed for the change, if one was asked.
  public var proof: VerificationProof?
  /// The SHA-256 of the token of the client's own session, which stays; every other ends.
  public var keeping: [UInt8]?
  /// The `password_changed` event's detail: where a change through PAM came from
  /// (`pam service=passwd tty=…`); nil for one through `accounts`.
  public var detail: String?

  /// Creates a record.
  public init(
    expected: Account, now: Date, newHash: String, proof: VerificationProof?, keeping: [UInt8]?,
    detail: String? = nil
  ) {
    self.expected = expected
    self.now = now
    self.newHash = newHash
    self.proof = proof
    self.keeping = keeping
    self.detail = detail
  }
}

/// How a person's own password change ended.
public enum PasswordChangeOutcome: Equatable, Sendable {
  /// Stored.
  case changed
  /// The account is gone, disabled or expired, or its password changed meanwhile.
  case gone
  /// Another process used the second factor's code first.
  case codeAlreadyUsed
  /// The store's server checked the code (or recovery code) and found it wrong.
  case codeWrong
}

/// The steps a fleet host takes besides a login's, done by the core's rules over any
/// repository's `read` and `write`: what SQLite runs. PostgreSQL runs each as one call of a
/// migration "v6" function (`accounts.session_end`, …), which a host role may call though it
/// may write no table.
extension AccountRepository {
  public func touchSession(tokenHash: [UInt8], at now: Date) throws(AccountsError) -> Bool {
    try write { writer throws(AccountsError) -> Bool in
      guard let session = try writer.session(tokenHash: tokenHash), session.isLive(at: now),
        session.lastSeenAt <= now
      else { return false }
      try writer.touchSession(
        id: session.id, at: now,
        idleUntil: now.addingTimeInterval(TimeInterval(session.idleSeconds)))
      return true
    }
  }

  public func endSessions(_ ending: SessionEnding) throws(AccountsError) -> Int {
    try write { writer throws(AccountsError) -> Int in
      guard let session = try writer.session(tokenHash: ending.tokenHash) else { return 0 }
      let account = try writer.account(id: session.accountID)
      let ended: Int
      if ending.all {
        ended = try writer.endSessions(accountID: session.accountID, keeping: nil).count
      } else {
        ended = try writer.endSession(id: session.id) ? 1 : 0
      }
      if !ending.quiet {
        try writer.append(
          AuditRecord(
            .logout, at: ending.now, username: account?.username,
            usernameKey: account?.usernameKey, detail: ending.detail(id: session.id, count: ended)
          ))
      }
      return ended
    }
  }

  public func changeOwnPassword(_ record: PasswordChangeRecord) throws(AccountsError)
    -> PasswordChangeOutcome
  {
    let key = record.expected.usernameKey
    return try write { writer throws(AccountsError) -> PasswordChangeOutcome in
      let now = record.now
      guard var account = try unchanged(record.expected, writer: writer, at: now) else {
        return .gone
      }
      if let proof = record.proof {
        guard try SecondFactorGate.accept(proof, writer: writer, account: account, at: now)
        else { return .codeAlreadyUsed }
      }
      account.passwordHash = record.newHash
      account.mustChangePassword = false
      account.updatedAt = now
      account.passwordChangedAt = now
      try writer.update(account)
      try writer.setTally(nil, key: key, at: now)
      try writer.append(
        AuditRecord(
          .passwordChanged, at: now, username: account.username, usernameKey: key,
          detail: record.detail))
      let keeping = try record.keeping.flatMap { hash throws(AccountsError) in
        try writer.session(tokenHash: hash)?.id
      }
      _ = try writer.endSessions(accountID: account.id, keeping: keeping)
      return .changed
    }
  }

  /// `expected` as it stands now, if it is still the account whose password was checked: not
  /// removed, disabled or given another password meanwhile, and not expired by `now`.
  func unchanged(_ expected: Account, writer: any AccountWriter, at now: Date)
    throws(AccountsError) -> Account?
  {
    guard let account = try writer.account(key: expected.usernameKey), account.id == expected.id,
      account.passwordChangedAt == expected.passwordChangedAt, !account.isDisabled,
      !account.isExpired(at: now)
    else { return nil }
    return account
  }

  public func recordPamSession(
    of account: Account, opened: Bool, at now: Date, detail: String?
  ) throws(AccountsError) -> Bool {
    try write { writer throws(AccountsError) -> Bool in
      guard let current = try writer.account(key: account.usernameKey), current.id == account.id
      else { return false }
      try writer.append(
        AuditRecord(
          opened ? .pamSessionOpened : .pamSessionClosed, at: now,
          username: current.username, usernameKey: current.usernameKey, detail: detail))
      return true
    }
  }
}

/// A person's own change of their second factor (`2fa enable`, `disable`, `recovery-codes`),
/// after their password (and, but to enable, a code) was checked.
public struct SecondFactorChange: Sendable {
  /// What changes.
  public enum Kind: Sendable {
    /// A new second factor (sealed secret, key, the step the app's code proved) and its codes.
    case enable(sealedSecret: [UInt8], keyID: String, lastStep: UInt64, codeHashes: [[UInt8]])
    /// The second factor and its recovery codes deleted.
    case disable
    /// A new set of recovery codes for the old one.
    case newRecoveryCodes(codeHashes: [[UInt8]])
  }

  /// What changes.
  public var kind: Kind
  /// The account as read before its password was checked.
  public var expected: Account
  /// When.
  public var now: Date
  /// The code passed for the change (all but `enable`).
  public var proof: VerificationProof?
  /// The SHA-256 of the token of the client's own session, which stays when the others end.
  public var keeping: [UInt8]?

  /// Creates a change.
  public init(
    _ kind: Kind, expected: Account, now: Date, proof: VerificationProof?, keeping: [UInt8]?
  ) {
    self.kind = kind
    self.expected = expected
    self.now = now
    self.proof = proof
    self.keeping = keeping
  }
}

/// How a person's own second factor change ended.
public enum SecondFactorChangeOutcome: Equatable, Sendable {
  /// Done.
  case changed
  /// The account is gone, disabled or expired, or its password changed meanwhile.
  case gone
  /// `enable`, but another process enabled one first.
  case alreadyOn
  /// `disable` or new codes, but there is no second factor (any more).
  case notOn
  /// Another process used the code first.
  case codeAlreadyUsed
  /// The store's server checked the code (or recovery code) and found it wrong.
  case codeWrong
}

extension AccountRepository {
  public func changeOwnSecondFactor(_ change: SecondFactorChange) throws(AccountsError)
    -> SecondFactorChangeOutcome
  {
    try write { writer throws(AccountsError) -> SecondFactorChangeOutcome in
      let now = change.now
      guard let account = try unchanged(change.expected, writer: writer, at: now) else {
        return .gone
      }
      let hasFactor = try writer.secondFactor(accountID: account.id) != nil
      let endsSessions: Bool
      switch change.kind {
      case .enable(let sealed, let keyID, let lastStep, let hashes):
        guard !hasFactor else { return .alreadyOn }
        try writer.storeSecondFactor(
          StoredSecondFactor(
            accountID: account.id, sealedSecret: sealed, keyID: keyID, lastStep: lastStep,
            enabledAt: now),
          recoveryCodeHashes: hashes)
        try writer.append(
          AuditRecord(
            .secondFactorEnabled, at: now, username: account.username,
            usernameKey: account.usernameKey))
        endsSessions = true
      case .disable, .newRecoveryCodes:
        guard hasFactor else { return .notOn }
        if let proof = change.proof {
          guard try SecondFactorGate.accept(proof, writer: writer, account: account, at: now)
          else { return .codeAlreadyUsed }
        }
        if case .newRecoveryCodes(let hashes) = change.kind {
          try writer.replaceRecoveryCodes(accountID: account.id, hashes: hashes)
          try writer.append(
            AuditRecord(
              .recoveryCodesMade, at: now, username: account.username,
              usernameKey: account.usernameKey))
          endsSessions = false
        } else {
          _ = try writer.removeSecondFactor(accountID: account.id)
          try writer.append(
            AuditRecord(
              .secondFactorDisabled, at: now, username: account.username,
              usernameKey: account.usernameKey))
          endsSessions = true
        }
      }
      if endsSessions {
        let keeping = try change.keeping.flatMap { hash throws(AccountsError) in
          try writer.session(tokenHash: hash)?.id
        }
        _ = try writer.endSessions(accountID: account.id, keeping: keeping)
      }
      return .changed
    }
  }
}
