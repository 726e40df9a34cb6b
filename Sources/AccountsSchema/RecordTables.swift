import AccountsCore

/// Where each kind of record `store copy` moves lives: the table and column names both stores'
/// schemas share (`schema.sql`, `schema-postgresql.sql`), kept here rather than in the core,
/// which speaks of records.
extension StoreRecordKind {
  /// The table.
  public var table: String {
    switch self {
    case .activation: return "activation"
    case .userdbSettings: return "userdb_setting"
    case .posixID: return "posix_id"
    case .homePath: return "home_path"
    case .account: return "account"
    case .sshKey: return "ssh_key"
    case .group: return "account_group"
    case .groupMember: return "group_member"
    case .loginThrottle: return "login_throttle"
    case .auditEvent: return "audit_event"
    case .session: return "session"
    case .secondFactor: return "second_factor"
    case .recoveryCode: return "recovery_code"
    }
  }

  /// The columns holding `fields`, in their order.
  public var columns: [String] {
    switch self {
    case .activation: return ["id", "state", "owner_id", "changed_at"]
    case .account:
      return [
        "id", "username", "username_key", "full_name", "email", "password_hash",
        "must_change_password", "disabled_at", "created_at", "updated_at",
        "password_changed_at", "last_login_at", "expires_at", "uid", "home", "shell",
      ]
    case .userdbSettings: return ["id", "first_uid", "last_uid"]
    case .posixID: return ["number", "kind", "name", "given_at"]
    case .homePath: return ["path", "uid", "given_at"]
    case .sshKey:
      return ["id", "account_id", "key_type", "key_data", "comment", "fingerprint", "added_at"]
    case .group: return ["id", "name", "created_at", "gid"]
    case .groupMember: return ["account_id", "group_id"]
    case .loginThrottle:
      return ["username_key", "failures", "lockouts", "locked_until", "updated_at"]
    case .auditEvent:
      return [
        "id", "occurred_at", "kind", "username", "username_key", "detail", "host", "offline_id",
      ]
    case .session:
      return [
        "id", "token_hash", "account_id", "created_at", "last_seen_at", "expires_at",
        "idle_seconds", "idle_until", "second_factor", "host",
      ]
    case .secondFactor:
      return ["account_id", "sealed_secret", "key_id", "last_step", "enabled_at"]
    case .recoveryCode: return ["account_id", "code_hash", "used_at"]
    }
  }

  /// The key the rows are read in order of.
  public var orderedBy: String {
    switch self {
    case .loginThrottle: return "username_key"
    case .secondFactor: return "account_id"
    case .recoveryCode: return "account_id, code_hash"
    case .groupMember: return "account_id, group_id"
    case .posixID: return "number"
    case .homePath: return "path"
    default: return "id"
    }
  }
}
