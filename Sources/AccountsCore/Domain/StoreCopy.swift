import FoundationEssentials

/// The kinds of stored records, as `store copy` moves them, one record at a time.
///
/// In an order that keeps every reference valid (an account before its sessions, a second
/// factor before its recovery codes). The audit log's list of event kinds is not among them: it
/// belongs to the schema, not the data. Each store maps a kind to its own table and columns.
public enum StoreRecordKind: CaseIterable, Sendable {
  /// The device's one activation record.
  case activation
  /// The store's uid range (its one settings record; the store's identity is not copied).
  case userdbSettings
  /// Every uid and gid ever given (before the accounts and groups that hold them).
  case posixID
  /// Every home folder ever given, with its uid.
  case homePath
  /// Accounts.
  case account
  /// The accounts' SSH keys.
  case sshKey
  /// Groups of accounts.
  case group
  /// Which accounts belong to which groups.
  case groupMember
  /// Failed-login tallies, by user name key.
  case loginThrottle
  /// The audit log, each event with the id a host's login cache gave it when it answered the
  /// login offline (the mark `log` shows, and what keeps a delivered event from coming twice).
  case auditEvent
  /// Live logins.
  case session
  /// Second factors (sealed TOTP secrets).
  case secondFactor
  /// Recovery codes of the second factors.
  case recoveryCode

  /// How a field's values travel between stores.
  public enum FieldType: Sendable {
    /// A 64-bit whole number.
    case integer
    /// Text.
    case text
    /// A time, as `Timestamp` text (millisecond precision, UTC).
    case time
    /// True or false, as the integer 1 or 0.
    case boolean
    /// Bytes.
    case blob
  }

  /// The types of a record's fields, in the order its values travel; the first ones are its
  /// key.
  public var fields: [FieldType] {
    switch self {
    case .activation: return [.integer, .text, .integer, .time]
    case .userdbSettings: return [.integer, .integer, .integer]
    case .posixID: return [.integer, .text, .text, .time]
    case .homePath: return [.text, .integer, .time]
    case .account:
      return [
        .integer, .text, .text, .text, .text, .text, .boolean, .time, .time, .time, .time, .time,
        .time, .integer, .text, .text,
      ]
    case .sshKey: return [.integer, .integer, .text, .text, .text, .text, .time]
    case .group: return [.integer, .text, .time, .integer]
    case .groupMember: return [.integer, .integer]
    case .loginThrottle: return [.text, .integer, .integer, .time, .time]
    case .auditEvent: return [.integer, .time, .text, .text, .text, .text, .text, .text]
    case .session:
      return [.integer, .blob, .integer, .time, .time, .time, .integer, .time, .boolean, .text]
    case .secondFactor: return [.integer, .blob, .text, .integer, .time]
    case .recoveryCode: return [.integer, .blob, .time]
    }
  }

  /// True for the kinds `store copy` moves: every one but `session`.
  ///
  /// A session is a login on the old store; on the new one people log in again (its id
  /// sequence still moves on, so no id is given twice).
  public var isCopied: Bool { self != .session }

  /// True for the kinds held in one record that the target has already (the copy replaces its
  /// values rather than adding a record).
  public var isSingleRecord: Bool { self == .activation || self == .userdbSettings }
}

/// One stored value, as it travels between stores.
public enum StoreValue: Equatable, Sendable {
  case null
  case integer(Int64)
  case text(String)
  case blob([UInt8])
}

/// Where the next ids of the tables that never reuse one would start: the highest id ever
/// given (0 when none), deleted rows included.
public struct IDPositions: Equatable, Sendable {
  /// The last audit event id given.
  public var auditEvent: Int64
  /// The last session id given.
  public var session: Int64

  public init(auditEvent: Int64, session: Int64) {
    self.auditEvent = auditEvent
    self.session = session
  }
}
