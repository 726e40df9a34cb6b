import Foundation

/// The stored tables, as `store copy` moves them, row by row.
///
/// In an order that keeps every reference valid (an account before its sessions, a second
/// factor before its recovery codes). `audit_kind` is not among them: it belongs to the schema,
/// not the data.
public enum StoreTable: String, CaseIterable, Sendable {
  case activation
  case account
  case loginThrottle = "login_throttle"
  case auditEvent = "audit_event"
  case session
  case secondFactor = "second_factor"
  case recoveryCode = "recovery_code"

  /// How a column's values travel between stores.
  public enum ColumnType: Sendable {
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

  /// The table's columns, in the order rows carry them; the first ones are its key.
  public var columns: [(name: String, type: ColumnType)] {
    switch self {
    case .activation:
      return [("id", .integer), ("state", .text), ("owner_id", .integer), ("changed_at", .time)]
    case .account:
      return [
        ("id", .integer), ("username", .text), ("username_key", .text), ("full_name", .text),
        ("email", .text), ("password_hash", .text), ("must_change_password", .boolean),
        ("disabled_at", .time), ("created_at", .time), ("updated_at", .time),
        ("password_changed_at", .time), ("last_login_at", .time),
      ]
    case .loginThrottle:
      return [
        ("username_key", .text), ("failures", .integer), ("lockouts", .integer),
        ("locked_until", .time), ("updated_at", .time),
      ]
    case .auditEvent:
      return [
        ("id", .integer), ("occurred_at", .time), ("kind", .text), ("username", .text),
        ("username_key", .text), ("detail", .text),
      ]
    case .session:
      return [
        ("id", .integer), ("token_hash", .blob), ("account_id", .integer), ("created_at", .time),
        ("last_seen_at", .time), ("expires_at", .time), ("idle_seconds", .integer),
        ("idle_until", .time), ("second_factor", .boolean),
      ]
    case .secondFactor:
      return [
        ("account_id", .integer), ("sealed_secret", .blob), ("key_id", .text),
        ("last_step", .integer), ("enabled_at", .time),
      ]
    case .recoveryCode:
      return [("account_id", .integer), ("code_hash", .blob), ("used_at", .time)]
    }
  }

  /// True for the tables `store copy` moves: every one but `session`.
  ///
  /// A session is a login on the old store; on the new one people log in again (its id
  /// sequence still moves on, so no id is given twice).
  public var isCopied: Bool { self != .session }

  /// The column whose key the table's rows are ordered by.
  public var orderedBy: String {
    switch self {
    case .loginThrottle: return "username_key"
    case .secondFactor: return "account_id"
    case .recoveryCode: return "account_id, code_hash"
    default: return "id"
    }
  }
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
