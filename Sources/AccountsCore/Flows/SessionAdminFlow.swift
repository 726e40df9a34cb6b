import FoundationEssentials

/// `accounts session list` and `accounts session revoke` (administrator).
public enum SessionAdminFlow {
  /// Calls `each` with every live session (of `username`'s account, or all), in id order.
  public static func list(
    _ env: AccountsEnvironment, username: String?, each: (SessionListing) -> Void
  ) throws(AccountsError) {
    let accountID: Int64?
    if let username {
      accountID = try AccountQuery.show(env, username: username).account.id
    } else {
      accountID = nil
    }
    guard let store = try env.readableStore() else { return }
    let now = env.now()
    try store.read { reader throws(AccountsError) in
      try reader.forEachSession(accountID: accountID, liveAt: now) {
        listing throws(AccountsError) in each(listing)
      }
    }
  }

  /// Ends live session `id`; logs it; returns the sentence said.
  @discardableResult
  public static func revoke(_ env: AccountsEnvironment, id: Int64) throws(AccountsError)
    -> String
  {
    guard try env.storeForChange() != nil else { throw .noSuchSession(id) }
    let store = try env.writableStore()
    let said = try store.write { writer throws(AccountsError) -> String in
      let now = env.now()
      guard let session = try writer.session(id: id), session.isLive(at: now),
        let account = try writer.account(id: session.accountID)
      else { throw .noSuchSession(id) }
      _ = try writer.endSession(id: id)
      try writer.append(
        AuditRecord(
          .sessionRevoked, at: now, username: account.username, usernameKey: account.usernameKey,
          detail: Messages.detailSession(id)))
      return Messages.sessionEnded(id, username: account.username)
    }
    env.console.output(said)
    return said
  }

  /// Ends every session of `username`'s account; logs each; returns the sentence said.
  @discardableResult
  public static func revoke(_ env: AccountsEnvironment, username: String) throws(AccountsError)
    -> String
  {
    let said = try AccountChange.run(env, username: username) {
      writer, account throws(AccountsError) -> String in
      let now = env.now()
      try writer.endSessions(deadAt: now)
      let ended = try writer.endSessions(accountID: account.id, keeping: nil)
      for id in ended {
        try writer.append(
          AuditRecord(
            .sessionRevoked, at: now, username: account.username,
            usernameKey: account.usernameKey, detail: Messages.detailSession(id)))
      }
      return Messages.sessionsEnded(ended.count, username: account.username)
    }
    env.console.output(said)
    return said
  }
}
