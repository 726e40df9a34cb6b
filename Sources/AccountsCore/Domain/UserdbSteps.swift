import FoundationEssentials

/// A host's own user record settings, done by the core's rules over any repository's `write`:
/// what SQLite runs. PostgreSQL runs each as a call of a migration "v13" function
/// (`accounts.userdb_host_keep`, `accounts.userdb_host_forget`), which a host role may call
/// though it may write no table: a host's `userdb enable`, `sync`, `status` and `disable` need
/// no administrator.
extension AccountRepository {
  public func reportHost(_ report: HostReport) throws(AccountsError) {}

  public func keepUserdbHost(_ host: UserdbHost) throws(AccountsError) -> String {
    try write { writer throws(AccountsError) -> String in
      if let existing = try writer.userdbHost(named: host.host), existing.folder != host.folder {
        return existing.folder
      }
      try writer.setUserdbHost(host)
      return host.folder
    }
  }

  public func forgetUserdbHost<T>(
    named host: String, at now: Date, _ body: () throws(AccountsError) -> (T, detail: String?)
  ) throws(AccountsError) -> T? {
    try write { writer throws(AccountsError) -> T? in
      guard try writer.removeUserdbHost(named: host) else { return nil }
      let (result, detail) = try body()
      if let detail {
        try writer.append(AuditRecord(UserdbChange.disabled.kind, at: now, detail: detail))
      }
      return result
    }
  }
}
