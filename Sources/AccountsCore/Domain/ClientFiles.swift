import AccountsCrypto
import FoundationEssentials

/// The key the TOTP secrets are sealed under (AES-256-GCM), kept outside the database.
public struct SealingKey: Equatable, Sendable {
  /// 32 bytes.
  public var bytes: [UInt8]
  /// What rows name it by: the first 8 bytes of the key's SHA-256, in hex (not secret).
  public var id: String

  /// A key from its bytes.
  public init(bytes: [UInt8]) throws(CryptoError) {
    self.bytes = bytes
    self.id = Hex.encode(Array(try SHA256.hash(bytes).prefix(8)))
  }
}

/// Where the sealing key lives: a file beside the database (AccountsStore's `KeyFile`), or
/// memory in tests.
public protocol SealingKeyStore: AnyObject {
  /// Where it is, as messages name it.
  var location: String { get }
  /// The key; nil when none was made yet.
  func existingKey() throws(AccountsError) -> SealingKey?
  /// The key, made now when there is none (two processes making it at once get the same one).
  func keyMakingIfNeeded() throws(AccountsError) -> SealingKey
}

/// What the client keeps of its session: which store, and the token.
public struct SavedSession: Equatable, Sendable {
  /// The database, as the keeper records it (`SessionKeeper.recorded`): the session means
  /// nothing to another one.
  public var database: String
  /// The identity of a PostgreSQL store (`userdb_setting.store_id`), read at login.
  ///
  /// Another URI of the same store keeps the session. Nil for SQLite, whose canonical path
  /// names its store.
  public var storeID: String?
  /// The 256-bit token.
  public var token: [UInt8]

  /// Creates a saved session.
  public init(database: String, storeID: String? = nil, token: [UInt8]) {
    self.database = database
    self.storeID = storeID
    self.token = token
  }
}

/// Where the client keeps its session: `$XDG_STATE_HOME/accounts/session` (AccountsStore's
/// `SessionFile`), or memory in tests.
public protocol SessionKeeper: AnyObject {
  /// Where it is, as messages name it.
  var location: String { get }
  /// The saved session; nil when there is none. Throws `.clientFile` when the file is not
  /// private or is damaged.
  func load() throws(AccountsError) -> SavedSession?
  /// Replaces the saved session, atomically.
  func save(_ session: SavedSession) throws(AccountsError)
  /// Forgets the saved session (nothing to do when there is none).
  func remove() throws(AccountsError)
  /// How the file names `database`, so that one database is one name however it was given
  /// (a path from another folder, through a link to a folder).
  func recorded(_ database: String) -> String
}

extension SessionKeeper {
  /// Keepers that record nothing on disk take the name as it is.
  public func recorded(_ database: String) -> String { database }
}

/// A sealing key held in memory (tests, and stores with no file).
public final class MemorySealingKeyStore: SealingKeyStore {
  public let location = "(memory)"
  private var key: SealingKey?

  /// An empty store, or one holding `key`.
  public init(key: SealingKey? = nil) { self.key = key }

  public func existingKey() -> SealingKey? { key }

  public func keyMakingIfNeeded() throws(AccountsError) -> SealingKey {
    if let key { return key }
    let made = try hashing { () throws(CryptoError) in
      try SealingKey(bytes: SecureRandom.bytes(AESGCM.keyByteCount))
    }
    key = made
    return made
  }
}

/// A session kept in memory (tests).
public final class MemorySessionKeeper: SessionKeeper {
  public let location = "(memory)"
  /// What is saved.
  public var saved: SavedSession?

  /// An empty keeper.
  public init(saved: SavedSession? = nil) { self.saved = saved }

  public func load() -> SavedSession? { saved }
  public func save(_ session: SavedSession) { saved = session }
  public func remove() { saved = nil }
}
