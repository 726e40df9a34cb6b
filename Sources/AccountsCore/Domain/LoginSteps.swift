import FoundationEssentials

/// What a login is decided on before the password is checked, read together in one go.
public struct LoginFacts: Equatable, Sendable {
  /// The account of the user name key, if any.
  public var account: Account?
  /// The key's failed-login tally (clear when none is stored, or no key).
  public var tally: ThrottleState
  /// The hash whose cost a failed check must match: the account's when it is the owner's,
  /// otherwise the owner's (nil on a Public device).
  public var referenceHash: String?
  /// The account's second factor, if it has one.
  public var secondFactor: StoredSecondFactor?

  /// Creates the facts.
  public init(
    account: Account?, tally: ThrottleState, referenceHash: String?,
    secondFactor: StoredSecondFactor?
  ) {
    self.account = account
    self.tally = tally
    self.referenceHash = referenceHash
    self.secondFactor = secondFactor
  }
}

/// A failed login to record: who, when, by which policy, and the audit log's words for it.
public struct LoginFailureRecord: Sendable {
  /// The user name as typed.
  public var username: String
  /// Its comparison key: whose tally counts.
  public var usernameKey: String
  /// When.
  public var now: Date
  /// How failures earn locks.
  public var policy: LockoutPolicy
  /// The failure event's detail (why, and where from).
  public var detail: String
  /// The detail of a refused attempt, when the name is already locked.
  public var refusalDetail: String
  /// The lockout event's detail, with `LoginFailureRecord.untilMark` where the lock's end goes.
  public var lockoutDetail: String

  /// Stands in `lockoutDetail` for the lock's end (the core's UTC text).
  public static let untilMark = "{until}"

  /// Creates a record.
  public init(
    username: String, usernameKey: String, now: Date, policy: LockoutPolicy, detail: String,
    refusalDetail: String, lockoutDetail: String
  ) {
    self.username = username
    self.usernameKey = usernameKey
    self.now = now
    self.policy = policy
    self.detail = detail
    self.refusalDetail = refusalDetail
    self.lockoutDetail = lockoutDetail
  }

  /// The lockout event's detail for a lock ending at `until`.
  public func lockoutDetail(until: Date) -> String {
    lockoutDetail.replacing(Self.untilMark, with: Timestamp.string(from: until))
  }
}

/// A successful password check to record (see `LoginRecorder.recordSuccess`).
public struct LoginSuccessRecord: Sendable {
  /// The user name as typed.
  public var username: String
  /// Its comparison key.
  public var usernameKey: String
  /// When.
  public var now: Date
  /// The account as read before the password was checked (nil: whatever account has the key).
  public var expected: Account?
  /// A hash to store: a stronger one of the same password, or a required new password's.
  public var newHash: String?
  /// True when `newHash` is the new password a login required (must-change cleared).
  public var requiredChange: Bool
  /// The second factor passed, the session to start, the origin.
  public var completion: LoginCompletion
  /// The detail of the failure logged when the account changed meanwhile.
  public var goneDetail: String
  /// The detail of a refused attempt, when the name was locked meanwhile.
  public var refusalDetail: String
  /// The detail of the `password_changed` event of a required change.
  public var requiredChangeDetail: String
  /// The detail of `recovery_code_used` for each count of codes left (index = count).
  public var codesLeftDetails: [String]
  /// The events after which failures no longer count as "since your last login".
  public var failureCountResets: [AuditEventKind]

  /// Creates a record.
  public init(
    username: String, usernameKey: String, now: Date, expected: Account?, newHash: String?,
    requiredChange: Bool, completion: LoginCompletion, goneDetail: String,
    refusalDetail: String, requiredChangeDetail: String, codesLeftDetails: [String],
    failureCountResets: [AuditEventKind]
  ) {
    self.username = username
    self.usernameKey = usernameKey
    self.now = now
    self.expected = expected
    self.newHash = newHash
    self.requiredChange = requiredChange
    self.completion = completion
    self.goneDetail = goneDetail
    self.refusalDetail = refusalDetail
    self.requiredChangeDetail = requiredChangeDetail
    self.codesLeftDetails = codesLeftDetails
    self.failureCountResets = failureCountResets
  }

  /// The `login_success` event's detail: the factors the login passed, then where it came from
  /// (`password and TOTP code; pam service=sshd …`).
  public var successDetail: String {
    Messages.detail(Messages.detailFactors(completion.proof), origin: completion.origin)
  }

  /// The detail of `recovery_code_used` with `left` codes left.
  public func codesLeftDetail(_ left: Int) -> String {
    codesLeftDetails.indices.contains(left) ? codesLeftDetails[left] : codesLeftDetails.last ?? ""
  }
}

/// The login steps done by the core's rules over any repository's `read` and `write`: what a
/// store that does not do them itself (SQLite) runs. PostgreSQL runs each as one call of a
/// function in the database (`accounts.login_failure`, …) with the same rules.
extension AccountRepository {
  public func loginFacts(key: String?) throws(AccountsError) -> LoginFacts {
    try read { reader throws(AccountsError) -> LoginFacts in
      guard let key else {
        return LoginFacts(
          account: nil, tally: .clear, referenceHash: try reader.owner()?.passwordHash,
          secondFactor: nil)
      }
      let account = try reader.account(key: key)
      let reference = account?.isOwner == true ? account : try reader.owner()
      return LoginFacts(
        account: account, tally: try reader.tally(key: key),
        referenceHash: reference?.passwordHash,
        secondFactor: try account.flatMap { account throws(AccountsError) in
          try reader.secondFactor(accountID: account.id)
        })
    }
  }

  public func recordLoginFailure(_ record: LoginFailureRecord) throws(AccountsError)
    -> LoginFailureOutcome
  {
    try write { writer throws(AccountsError) in try LoginRecorder.failure(record, writer: writer) }
  }

  public func recordLoginRefusal(
    username: String, usernameKey: String, at now: Date, detail: String
  )
    throws(AccountsError) -> Date?
  {
    try write { writer throws(AccountsError) -> Date? in
      try LoginRecorder.refusal(
        writer, username: username, key: usernameKey, at: now, detail: detail)
    }
  }

  public func recordLoginSuccess(_ record: LoginSuccessRecord) throws(AccountsError)
    -> LoginSuccessOutcome
  {
    try write { writer throws(AccountsError) in try LoginRecorder.success(record, writer: writer) }
  }
}
