import AccountsCore
import FoundationEssentials

// One record type per table (GRDB's "Recommended Practices for Designing Record Types"): each
// knows its columns, how a row reads (`init(row:)`) and what it writes (`columnValues`). Dates
// are stored as `Timestamp` text (fixed width, so text order is time order). Rows are decoded by
// position from each record's own `selection`: a million accounts stream through `user list`.

/// A row of `account`.
struct AccountRecord: FetchableRecord {
  /// The columns `init(row:)` reads, in its order.
  static let selection = """
    account.id, account.username, account.username_key, account.full_name, account.email,
    account.password_hash, account.must_change_password, account.disabled_at,
    account.created_at, account.updated_at, account.password_changed_at, account.last_login_at,
    account.expires_at, account.uid, account.home, account.shell
    """
  static let columnCount = 16

  var id: Int64?
  var username: String
  var usernameKey: String
  var fullName: String
  var email: String
  var passwordHash: String
  var mustChangePassword: Bool
  var disabledAt: String?
  var createdAt: String
  var updatedAt: String
  var passwordChangedAt: String
  var lastLoginAt: String?
  var expiresAt: String?
  var uid: Int64?
  var home: String?
  var shell: String?

  init(row: Row) throws {
    id = try row[0]
    username = try row[1]
    usernameKey = try row[2]
    fullName = try row[3]
    email = try row[4]
    passwordHash = try row[5]
    mustChangePassword = try row[6]
    disabledAt = try row[7]
    createdAt = try row[8]
    updatedAt = try row[9]
    passwordChangedAt = try row[10]
    lastLoginAt = try row[11]
    expiresAt = try row[12]
    uid = try row[13]
    home = try row[14]
    shell = try row[15]
  }

  init(_ new: NewAccount, at date: Date) {
    let now = Timestamp.string(from: date)
    id = nil
    username = new.username
    usernameKey = new.usernameKey
    fullName = new.fullName
    email = new.email
    passwordHash = new.passwordHash
    mustChangePassword = new.mustChangePassword
    disabledAt = new.disabled ? now : nil
    createdAt = now
    updatedAt = now
    passwordChangedAt = now
    lastLoginAt = nil
    expiresAt = new.expiresAt.map(Timestamp.string(from:))
    uid = nil
    home = new.home
    shell = new.shell
  }

  init(_ account: Account) {
    id = account.id
    username = account.username
    usernameKey = account.usernameKey
    fullName = account.fullName
    email = account.email
    passwordHash = account.passwordHash
    mustChangePassword = account.mustChangePassword
    disabledAt = account.disabledAt.map(Timestamp.string(from:))
    createdAt = Timestamp.string(from: account.createdAt)
    updatedAt = Timestamp.string(from: account.updatedAt)
    passwordChangedAt = Timestamp.string(from: account.passwordChangedAt)
    lastLoginAt = account.lastLoginAt.map(Timestamp.string(from:))
    expiresAt = account.expiresAt.map(Timestamp.string(from:))
    uid = account.uid
    home = account.home
    shell = account.shell
  }

  /// The columns and the values written to them.
  var columnValues: [(String, DatabaseValue)] {
    [
      ("id", id.databaseValue),
      ("username", username.databaseValue),
      ("username_key", usernameKey.databaseValue),
      ("full_name", fullName.databaseValue),
      ("email", email.databaseValue),
      ("password_hash", passwordHash.databaseValue),
      ("must_change_password", mustChangePassword.databaseValue),
      ("disabled_at", disabledAt.databaseValue),
      ("created_at", createdAt.databaseValue),
      ("updated_at", updatedAt.databaseValue),
      ("password_changed_at", passwordChangedAt.databaseValue),
      ("last_login_at", lastLoginAt.databaseValue),
      ("expires_at", expiresAt.databaseValue),
      ("uid", uid.databaseValue),
      ("home", home.databaseValue),
      ("shell", shell.databaseValue),
    ]
  }

  /// The domain value; `isOwner` is told by the activation row.
  func account(isOwner: Bool) -> Account {
    Account(
      id: id ?? 0, username: username, usernameKey: usernameKey, fullName: fullName,
      email: email, passwordHash: passwordHash, isOwner: isOwner,
      mustChangePassword: mustChangePassword, disabledAt: disabledAt.flatMap(Timestamp.date),
      createdAt: Timestamp.date(from: createdAt) ?? .distantPast,
      updatedAt: Timestamp.date(from: updatedAt) ?? .distantPast,
      passwordChangedAt: Timestamp.date(from: passwordChangedAt) ?? .distantPast,
      lastLoginAt: lastLoginAt.flatMap(Timestamp.date),
      expiresAt: expiresAt.flatMap(Timestamp.date), uid: uid, home: home, shell: shell)
  }
}

/// The one row of `activation`: the device's state and its owner.
struct ActivationRecord: FetchableRecord {
  /// The columns `init(row:)` reads.
  static let selection = "id, state, owner_id, changed_at"
  var id: Int64 = 1
  var state: String
  var ownerID: Int64?
  var changedAt: String

  init(row: Row) throws {
    id = try row["id"]
    state = try row["state"]
    ownerID = try row["owner_id"]
    changedAt = try row["changed_at"]
  }

  init(state: ActivationState, ownerID: Int64?, at date: Date) {
    self.state = state.rawValue
    self.ownerID = ownerID
    changedAt = Timestamp.string(from: date)
  }

  /// The columns and the values written to them.
  var columnValues: [(String, DatabaseValue)] {
    [
      ("id", id.databaseValue),
      ("state", state.databaseValue),
      ("owner_id", ownerID.databaseValue),
      ("changed_at", changedAt.databaseValue),
    ]
  }

  var status: DeviceStatus {
    DeviceStatus(
      state: ActivationState(rawValue: state) ?? .publicState,
      changedAt: Timestamp.date(from: changedAt))
  }
}

/// A row of `login_throttle`: one user name's failed-login tally.
struct ThrottleRecord: FetchableRecord {
  /// The columns `init(row:)` reads.
  static let selection = "username_key, failures, lockouts, locked_until, updated_at"
  var usernameKey: String
  var failures: Int
  var lockouts: Int
  var lockedUntil: String?
  var updatedAt: String

  init(row: Row) throws {
    usernameKey = try row["username_key"]
    failures = try row["failures"]
    lockouts = try row["lockouts"]
    lockedUntil = try row["locked_until"]
    updatedAt = try row["updated_at"]
  }

  init(key: String, tally: ThrottleState, at date: Date) {
    usernameKey = key
    failures = tally.failures
    lockouts = tally.lockouts
    lockedUntil = tally.lockedUntil.map(Timestamp.string(from:))
    updatedAt = Timestamp.string(from: date)
  }

  /// The columns and the values written to them.
  var columnValues: [(String, DatabaseValue)] {
    [
      ("username_key", usernameKey.databaseValue),
      ("failures", failures.databaseValue),
      ("lockouts", lockouts.databaseValue),
      ("locked_until", lockedUntil.databaseValue),
      ("updated_at", updatedAt.databaseValue),
    ]
  }

  var tally: ThrottleState {
    ThrottleState(
      failures: failures, lockouts: lockouts, lockedUntil: lockedUntil.flatMap(Timestamp.date))
  }
}

/// A row of `audit_event`.
struct AuditEventRecord: FetchableRecord {
  static let selection =
    "id, occurred_at, kind, username, username_key, detail, host, offline_id"
  var id: Int64?
  var occurredAt: String
  var kind: String
  var username: String?
  var usernameKey: String?
  var detail: String?
  var host: String?
  /// The id a host's login cache gave the event (migration "v14"): nil for an online one.
  var offlineID: String?

  init(row: Row) throws {
    id = try row[0]
    occurredAt = try row[1]
    kind = try row[2]
    username = try row[3]
    usernameKey = try row[4]
    detail = try row[5]
    host = try row[6]
    offlineID = try row[7]
  }

  init(_ event: AuditRecord, offlineID: String? = nil) {
    id = nil
    occurredAt = Timestamp.string(from: event.occurredAt)
    kind = event.kind.rawValue
    username = event.username
    usernameKey = event.usernameKey
    detail = event.detail
    host = event.host
    self.offlineID = offlineID
  }

  /// The columns and the values written to them.
  var columnValues: [(String, DatabaseValue)] {
    [
      ("id", id.databaseValue),
      ("occurred_at", occurredAt.databaseValue),
      ("kind", kind.databaseValue),
      ("username", username.databaseValue),
      ("username_key", usernameKey.databaseValue),
      ("detail", detail.databaseValue),
      ("host", host.databaseValue),
      ("offline_id", offlineID.databaseValue),
    ]
  }

  /// Inserts the row (its id chosen by SQLite) with one statement named column by column.
  func append(_ db: Database) throws {
    try db.execute(
      sql: """
        INSERT INTO audit_event (occurred_at, kind, username, username_key, detail, host,
                                 offline_id)
        VALUES (?, ?, ?, ?, ?, ?, ?)
        """,
      arguments: [occurredAt, kind, username, usernameKey, detail, host, offlineID])
  }

  var event: AuditEvent {
    AuditEvent(
      id: id ?? 0, occurredAt: Timestamp.date(from: occurredAt) ?? .distantPast,
      kind: AuditEventKind(rawValue: kind), username: username, detail: detail, host: host,
      offline: offlineID != nil)
  }
}

/// A row of `audit_kind`: a kind of event the log may hold.
struct AuditKindRecord: FetchableRecord {
  var name: String

  init(row: Row) throws { name = try row["name"] }
  init(_ kind: AuditEventKind) { name = kind.rawValue }

  var columnValues: [(String, DatabaseValue)] { [("name", name.databaseValue)] }
}

/// A row of `session`.
struct SessionRecord: FetchableRecord {
  static let selection = """
    session.id, session.account_id, session.created_at, session.last_seen_at,
    session.expires_at, session.idle_seconds, session.idle_until, session.second_factor,
    session.host
    """
  static let columnCount = 9

  var id: Int64?
  var tokenHash: Data?
  var accountID: Int64
  var createdAt: String
  var lastSeenAt: String
  var expiresAt: String
  var idleSeconds: Int
  var idleUntil: String
  var secondFactor: Bool
  var host: String?

  init(row: Row) throws {
    id = try row[0]
    tokenHash = nil
    accountID = try row[1]
    createdAt = try row[2]
    lastSeenAt = try row[3]
    expiresAt = try row[4]
    idleSeconds = try row[5]
    idleUntil = try row[6]
    secondFactor = try row[7]
    host = try row[8]
  }

  init(_ new: NewSession) {
    id = nil
    tokenHash = Data(new.tokenHash)
    accountID = new.accountID
    createdAt = Timestamp.string(from: new.createdAt)
    lastSeenAt = createdAt
    expiresAt = Timestamp.string(from: new.expiresAt)
    idleSeconds = new.idleSeconds
    idleUntil = Timestamp.string(
      from: new.createdAt.addingTimeInterval(TimeInterval(new.idleSeconds)))
    secondFactor = new.secondFactor
    host = new.host
  }

  /// The columns and the values written to them.
  var columnValues: [(String, DatabaseValue)] {
    [
      ("id", id.databaseValue),
      ("token_hash", tokenHash.databaseValue),
      ("account_id", accountID.databaseValue),
      ("created_at", createdAt.databaseValue),
      ("last_seen_at", lastSeenAt.databaseValue),
      ("expires_at", expiresAt.databaseValue),
      ("idle_seconds", idleSeconds.databaseValue),
      ("idle_until", idleUntil.databaseValue),
      ("second_factor", secondFactor.databaseValue),
      ("host", host.databaseValue),
    ]
  }

  var session: Session {
    Session(
      id: id ?? 0, accountID: accountID, createdAt: Self.date(createdAt),
      lastSeenAt: Self.date(lastSeenAt), expiresAt: Self.date(expiresAt),
      idleSeconds: idleSeconds, idleUntil: Self.date(idleUntil), secondFactor: secondFactor,
      host: host)
  }

  /// A stored time; a damaged one reads as long past (the session is not live).
  private static func date(_ text: String) -> Date { Timestamp.date(from: text) ?? .distantPast }
}

/// A row of `second_factor`.
struct SecondFactorRecord: FetchableRecord {
  /// The columns `init(row:)` reads.
  static let selection = "account_id, sealed_secret, key_id, last_step, enabled_at"

  var accountID: Int64
  var sealedSecret: Data
  var keyID: String
  var lastStep: Int64
  var enabledAt: String

  init(row: Row) throws {
    accountID = try row["account_id"]
    sealedSecret = try row["sealed_secret"]
    keyID = try row["key_id"]
    lastStep = try row["last_step"]
    enabledAt = try row["enabled_at"]
  }

  init(_ factor: StoredSecondFactor) {
    accountID = factor.accountID
    sealedSecret = Data(factor.sealedSecret)
    keyID = factor.keyID
    lastStep = Int64(clamping: factor.lastStep)
    enabledAt = Timestamp.string(from: factor.enabledAt)
  }

  /// The columns and the values written to them.
  var columnValues: [(String, DatabaseValue)] {
    [
      ("account_id", accountID.databaseValue),
      ("sealed_secret", sealedSecret.databaseValue),
      ("key_id", keyID.databaseValue),
      ("last_step", lastStep.databaseValue),
      ("enabled_at", enabledAt.databaseValue),
    ]
  }

  var factor: StoredSecondFactor {
    StoredSecondFactor(
      accountID: accountID, sealedSecret: [UInt8](sealedSecret), keyID: keyID,
      lastStep: UInt64(max(lastStep, 0)),
      enabledAt: Timestamp.date(from: enabledAt) ?? .distantPast)
  }
}
