import AccountsCore
import FoundationEssentials
import GRDB

// One record type per table (GRDB's "Recommended Practices for Designing Record Types"): each
// knows its table, its columns and how a row reads and writes. Dates are stored as
// `Timestamp` text (fixed width, so text order is time order). Rows are decoded by position
// from each record's own `selection`: a million accounts stream through `user list`.

/// A row of `account`.
struct AccountRecord: FetchableRecord, MutablePersistableRecord {
  static let databaseTableName = "account"
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

  init(row: Row) {
    id = row[0]
    username = row[1]
    usernameKey = row[2]
    fullName = row[3]
    email = row[4]
    passwordHash = row[5]
    mustChangePassword = row[6]
    disabledAt = row[7]
    createdAt = row[8]
    updatedAt = row[9]
    passwordChangedAt = row[10]
    lastLoginAt = row[11]
    expiresAt = row[12]
    uid = row[13]
    home = row[14]
    shell = row[15]
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

  func encode(to container: inout PersistenceContainer) {
    container["id"] = id
    container["username"] = username
    container["username_key"] = usernameKey
    container["full_name"] = fullName
    container["email"] = email
    container["password_hash"] = passwordHash
    container["must_change_password"] = mustChangePassword
    container["disabled_at"] = disabledAt
    container["created_at"] = createdAt
    container["updated_at"] = updatedAt
    container["password_changed_at"] = passwordChangedAt
    container["last_login_at"] = lastLoginAt
    container["expires_at"] = expiresAt
    container["uid"] = uid
    container["home"] = home
    container["shell"] = shell
  }

  mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

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
struct ActivationRecord: FetchableRecord, PersistableRecord {
  static let databaseTableName = "activation"
  /// The columns `init(row:)` reads.
  static let selection = "id, state, owner_id, changed_at"
  var id: Int64 = 1
  var state: String
  var ownerID: Int64?
  var changedAt: String

  init(row: Row) {
    id = row["id"]
    state = row["state"]
    ownerID = row["owner_id"]
    changedAt = row["changed_at"]
  }

  init(state: ActivationState, ownerID: Int64?, at date: Date) {
    self.state = state.rawValue
    self.ownerID = ownerID
    changedAt = Timestamp.string(from: date)
  }

  func encode(to container: inout PersistenceContainer) {
    container["id"] = id
    container["state"] = state
    container["owner_id"] = ownerID
    container["changed_at"] = changedAt
  }

  var status: DeviceStatus {
    DeviceStatus(
      state: ActivationState(rawValue: state) ?? .publicState,
      changedAt: Timestamp.date(from: changedAt))
  }
}

/// A row of `login_throttle`: one user name's failed-login tally.
struct ThrottleRecord: FetchableRecord, PersistableRecord {
  static let databaseTableName = "login_throttle"
  /// The columns `init(row:)` reads.
  static let selection = "username_key, failures, lockouts, locked_until, updated_at"
  var usernameKey: String
  var failures: Int
  var lockouts: Int
  var lockedUntil: String?
  var updatedAt: String

  init(row: Row) {
    usernameKey = row["username_key"]
    failures = row["failures"]
    lockouts = row["lockouts"]
    lockedUntil = row["locked_until"]
    updatedAt = row["updated_at"]
  }

  init(key: String, tally: ThrottleState, at date: Date) {
    usernameKey = key
    failures = tally.failures
    lockouts = tally.lockouts
    lockedUntil = tally.lockedUntil.map(Timestamp.string(from:))
    updatedAt = Timestamp.string(from: date)
  }

  func encode(to container: inout PersistenceContainer) {
    container["username_key"] = usernameKey
    container["failures"] = failures
    container["lockouts"] = lockouts
    container["locked_until"] = lockedUntil
    container["updated_at"] = updatedAt
  }

  var tally: ThrottleState {
    ThrottleState(
      failures: failures, lockouts: lockouts, lockedUntil: lockedUntil.flatMap(Timestamp.date))
  }
}

/// A row of `audit_event`.
struct AuditEventRecord: FetchableRecord, MutablePersistableRecord {
  static let databaseTableName = "audit_event"
  static let selection = "id, occurred_at, kind, username, username_key, detail, host"
  var id: Int64?
  var occurredAt: String
  var kind: String
  var username: String?
  var usernameKey: String?
  var detail: String?
  var host: String?

  init(row: Row) {
    id = row[0]
    occurredAt = row[1]
    kind = row[2]
    username = row[3]
    usernameKey = row[4]
    detail = row[5]
    host = row[6]
  }

  init(_ event: AuditRecord) {
    id = nil
    occurredAt = Timestamp.string(from: event.occurredAt)
    kind = event.kind.rawValue
    username = event.username
    usernameKey = event.usernameKey
    detail = event.detail
    host = event.host
  }

  func encode(to container: inout PersistenceContainer) {
    container["id"] = id
    container["occurred_at"] = occurredAt
    container["kind"] = kind
    container["username"] = username
    container["username_key"] = usernameKey
    container["detail"] = detail
    container["host"] = host
  }

  /// Inserts the row (its id chosen by SQLite) with one statement named column by column;
  /// GRDB's `insert` would look the table's primary key up in the schema first.
  func append(_ db: Database) throws {
    try db.execute(
      sql: """
        INSERT INTO audit_event (occurred_at, kind, username, username_key, detail, host)
        VALUES (?, ?, ?, ?, ?, ?)
        """,
      arguments: [occurredAt, kind, username, usernameKey, detail, host])
  }

  var event: AuditEvent {
    AuditEvent(
      id: id ?? 0, occurredAt: Timestamp.date(from: occurredAt) ?? .distantPast,
      kind: AuditEventKind(rawValue: kind), username: username, detail: detail, host: host)
  }
}

/// A row of `audit_kind`: a kind of event the log may hold.
struct AuditKindRecord: FetchableRecord, PersistableRecord {
  static let databaseTableName = "audit_kind"
  var name: String

  init(row: Row) { name = row["name"] }
  init(_ kind: AuditEventKind) { name = kind.rawValue }

  func encode(to container: inout PersistenceContainer) { container["name"] = name }
}

/// A row of `session`.
struct SessionRecord: FetchableRecord, MutablePersistableRecord {
  static let databaseTableName = "session"
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

  init(row: Row) {
    id = row[0]
    tokenHash = nil
    accountID = row[1]
    createdAt = row[2]
    lastSeenAt = row[3]
    expiresAt = row[4]
    idleSeconds = row[5]
    idleUntil = row[6]
    secondFactor = row[7]
    host = row[8]
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

  func encode(to container: inout PersistenceContainer) {
    container["id"] = id
    container["token_hash"] = tokenHash
    container["account_id"] = accountID
    container["created_at"] = createdAt
    container["last_seen_at"] = lastSeenAt
    container["expires_at"] = expiresAt
    container["idle_seconds"] = idleSeconds
    container["idle_until"] = idleUntil
    container["second_factor"] = secondFactor
    container["host"] = host
  }

  mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

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
struct SecondFactorRecord: FetchableRecord, PersistableRecord {
  static let databaseTableName = "second_factor"
  /// The columns `init(row:)` reads.
  static let selection = "account_id, sealed_secret, key_id, last_step, enabled_at"

  var accountID: Int64
  var sealedSecret: Data
  var keyID: String
  var lastStep: Int64
  var enabledAt: String

  init(row: Row) {
    accountID = row["account_id"]
    sealedSecret = row["sealed_secret"]
    keyID = row["key_id"]
    lastStep = row["last_step"]
    enabledAt = row["enabled_at"]
  }

  init(_ factor: StoredSecondFactor) {
    accountID = factor.accountID
    sealedSecret = Data(factor.sealedSecret)
    keyID = factor.keyID
    lastStep = Int64(clamping: factor.lastStep)
    enabledAt = Timestamp.string(from: factor.enabledAt)
  }

  func encode(to container: inout PersistenceContainer) {
    container["account_id"] = accountID
    container["sealed_secret"] = sealedSecret
    container["key_id"] = keyID
    container["last_step"] = lastStep
    container["enabled_at"] = enabledAt
  }

  var factor: StoredSecondFactor {
    StoredSecondFactor(
      accountID: accountID, sealedSecret: [UInt8](sealedSecret), keyID: keyID,
      lastStep: UInt64(max(lastStep, 0)),
      enabledAt: Timestamp.date(from: enabledAt) ?? .distantPast)
  }
}
