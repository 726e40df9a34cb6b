import FoundationEssentials

/// What PAM's stages decided about an account, as the audit log keeps it.
public enum PamDecision: Sendable, CaseIterable {
  /// A session opened that this module's auth did not start (a key login): a login.
  case login
  /// The account stage refused the account.
  case refused

  /// The kind of event it writes.
  public var kind: AuditEventKind {
    switch self {
    case .login: .loginSuccess
    case .refused: .accessRefused
    }
  }
}

/// A change of a host's user records, as the audit log keeps it.
public enum UserdbChange: Sendable, CaseIterable {
  /// `userdb enable`.
  case enabled
  /// `userdb disable`.
  case disabled
  /// `userdb sync` that wrote or removed a file.
  case synced

  /// The kind of event it writes.
  public var kind: AuditEventKind {
    switch self {
    case .enabled: .userdbEnabled
    case .disabled: .userdbDisabled
    case .synced: .userdbSynced
    }
  }
}

/// The steps behind `PamDecision` and `UserdbChange` over any repository's `write`: what
/// SQLite runs. PostgreSQL runs each as one call of a migration "v11" function
/// (`accounts.pam_account_event`, `accounts.userdb_event`), which a host role may call though
/// it may write no table.
extension AccountRepository {
  public func recordPamDecision(
    _ decision: PamDecision, of account: Account, at now: Date, detail: String?
  ) throws(AccountsError) -> Bool {
    try write { writer throws(AccountsError) -> Bool in
      guard var current = try writer.account(key: account.usernameKey), current.id == account.id
      else { return false }
      if decision == .login {
        guard !current.isDisabled, !current.isExpired(at: now) else { return false }
        current.lastLoginAt = now
        try writer.update(current)
      }
      try writer.append(
        AuditRecord(
          decision.kind, at: now, username: current.username, usernameKey: current.usernameKey,
          detail: detail))
      return true
    }
  }

  public func recordUserdbChange(_ change: UserdbChange, at now: Date, detail: String)
    throws(AccountsError)
  {
    try write { writer throws(AccountsError) in
      try writer.append(AuditRecord(change.kind, at: now, detail: detail))
    }
  }
}
