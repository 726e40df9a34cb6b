import FoundationEssentials

/// A login that lasts until logout: what the store keeps of it (never the token itself).
public struct Session: Equatable, Sendable {
  /// The number administrators name it by.
  public var id: Int64
  /// The account it is a login of.
  public var accountID: Int64
  /// When the login happened.
  public var createdAt: Date
  /// When it was last used (written at most once a minute).
  public var lastSeenAt: Date
  /// The absolute end, whatever the use.
  public var expiresAt: Date
  /// How long it may go unused.
  public var idleSeconds: Int
  /// `lastSeenAt` + `idleSeconds`: the end if unused until then.
  public var idleUntil: Date
  /// True when the login passed a second factor.
  public var secondFactor: Bool
  /// The host it was started on; nil for a session a version before hosts started.
  public var host: String?

  /// Creates a session as stored.
  public init(
    id: Int64, accountID: Int64, createdAt: Date, lastSeenAt: Date, expiresAt: Date,
    idleSeconds: Int, idleUntil: Date, secondFactor: Bool, host: String? = nil
  ) {
    self.id = id
    self.accountID = accountID
    self.createdAt = createdAt
    self.lastSeenAt = lastSeenAt
    self.expiresAt = expiresAt
    self.idleSeconds = idleSeconds
    self.idleUntil = idleUntil
    self.secondFactor = secondFactor
    self.host = host
  }

  /// When it ends if not used again: the sooner of the two limits.
  public var endsAt: Date { min(expiresAt, idleUntil) }

  /// True while `now` is before both limits.
  public func isLive(at now: Date) -> Bool { now < expiresAt && now < idleUntil }
}

/// A session to store: the hash of its token and its limits.
public struct NewSession: Equatable, Sendable {
  /// SHA-256 of the token's bytes.
  public var tokenHash: [UInt8]
  /// The account logged in.
  public var accountID: Int64
  /// The login's time.
  public var createdAt: Date
  /// The absolute end.
  public var expiresAt: Date
  /// How long it may go unused.
  public var idleSeconds: Int
  /// True when the login passed a second factor.
  public var secondFactor: Bool
  /// The host it is started on: the store's writer sets it (`AccountRepository.writingHost`)
  /// when it is nil, so no flow has to.
  public var host: String?

  /// Creates a session to store.
  public init(
    tokenHash: [UInt8], accountID: Int64, createdAt: Date, expiresAt: Date, idleSeconds: Int,
    secondFactor: Bool, host: String? = nil
  ) {
    self.tokenHash = tokenHash
    self.accountID = accountID
    self.createdAt = createdAt
    self.expiresAt = expiresAt
    self.idleSeconds = idleSeconds
    self.secondFactor = secondFactor
    self.host = host
  }
}

/// A live session with its account's user name, as `session list` shows it.
public struct SessionListing: Equatable, Sendable {
  /// The session.
  public var session: Session
  /// Its account's user name.
  public var username: String

  /// Creates a listing.
  public init(session: Session, username: String) {
    self.session = session
    self.username = username
  }
}

/// How long sessions last (NIST SP 800-63B-4, AAL2: at most 24 hours, 1 hour idle).
public struct SessionPolicy: Equatable, Sendable {
  /// The absolute lifetime.
  public var lifetime: TimeInterval
  /// The idle timeout.
  public var idle: TimeInterval
  /// How stale `last_seen_at` may get before a use writes it again.
  public var touchInterval: TimeInterval = 60

  /// The longest lifetime, and the default.
  public static let longestLifetime: TimeInterval = 24 * 3600
  /// The longest idle timeout, and the default.
  public static let longestIdle: TimeInterval = 3600
  /// The shortest either may be set to.
  public static let shortest: TimeInterval = 5 * 60
  /// The defaults: the longest allowed.
  public static let standard = SessionPolicy(lifetime: longestLifetime, idle: longestIdle)

  /// Creates a policy.
  public init(lifetime: TimeInterval, idle: TimeInterval) {
    self.lifetime = lifetime
    self.idle = idle
  }
}

/// A new TOTP secret waiting for its first code (`2fa enable --begin`): sealed as a second
/// factor's is, but no second factor until `2fa enable --confirm` turns it into one.
public struct PendingSecondFactor: Equatable, Sendable {
  /// The account it belongs to.
  public var accountID: Int64
  /// The secret, AES-256-GCM sealed (nonce, ciphertext, tag).
  public var sealedSecret: [UInt8]
  /// Which key sealed it (see `SealingKey.id`).
  public var keyID: String
  /// When it stops being usable.
  public var expiresAt: Date

  /// Creates a pending secret.
  public init(accountID: Int64, sealedSecret: [UInt8], keyID: String, expiresAt: Date) {
    self.accountID = accountID
    self.sealedSecret = sealedSecret
    self.keyID = keyID
    self.expiresAt = expiresAt
  }
}

/// A TOTP second factor as stored: the secret sealed, the last step accepted.
public struct StoredSecondFactor: Equatable, Sendable {
  /// The account it belongs to.
  public var accountID: Int64
  /// The secret, AES-256-GCM sealed (nonce, ciphertext, tag).
  public var sealedSecret: [UInt8]
  /// Which key sealed it (see `SealingKey.id`).
  public var keyID: String
  /// The last time step a code was accepted for.
  public var lastStep: UInt64
  /// When it was turned on.
  public var enabledAt: Date

  /// Creates a stored second factor.
  public init(
    accountID: Int64, sealedSecret: [UInt8], keyID: String, lastStep: UInt64, enabledAt: Date
  ) {
    self.accountID = accountID
    self.sealedSecret = sealedSecret
    self.keyID = keyID
    self.lastStep = lastStep
    self.enabledAt = enabledAt
  }

  /// The key id of a secret the store's server keeps and checks itself (a PostgreSQL store):
  /// a host reads no secret then, and hands a new one over in the clear under this id.
  public static let serverKeyID = "server-encrypted"

  /// Whether the store's server keeps the secret and checks codes itself.
  public var isServerHeld: Bool { keyID == Self.serverKeyID }

  /// The account, secret and key id of a `second_factor` row.
  ///
  /// As a store's rows are walked or copied (`forEachRow(of: .secondFactor)`); nil for any other
  /// row. Its step and time are not read (zero).
  init?(secretOf values: [StoreValue]) {
    guard values.count == 5, case .integer(let accountID) = values[0],
      case .blob(let secret) = values[1], case .text(let keyID) = values[2]
    else { return nil }
    self.init(
      accountID: accountID, sealedSecret: secret, keyID: keyID, lastStep: 0,
      enabledAt: Date(timeIntervalSince1970: 0))
  }
}
