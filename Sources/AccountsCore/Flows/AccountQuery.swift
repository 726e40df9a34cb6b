/// `accounts user list` and `accounts user show` (administrator).
public enum AccountQuery {
  /// Calls `each` with every account, in user-name order, one at a time (constant memory).
  public static func list(_ env: AccountsEnvironment, each: (AccountListing) -> Void)
    throws(AccountsError)
  {
    guard let store = try env.readableStore() else { return }
    try store.read { reader throws(AccountsError) in
      try reader.forEachAccount { listing throws(AccountsError) in each(listing) }
    }
  }

  /// The account named `username`, with its tally; `.noSuchAccount` when there is none.
  public static func show(_ env: AccountsEnvironment, username: String) throws(AccountsError)
    -> AccountListing
  {
    let (name, key) = try DetailRules.username(.text(username))
    guard let store = try env.readableStore() else { throw .noSuchAccount(name) }
    return try store.read { reader throws(AccountsError) -> AccountListing in
      guard let account = try reader.account(key: key) else { throw .noSuchAccount(name) }
      return AccountListing(
        account: account, tally: try reader.tally(key: key),
        groups: try reader.groups(accountID: account.id))
    }
  }
}

/// The shared first step of every administrator command on one account: the name checked, the
/// store opened, the account found in the same transaction as the change.
enum AccountChange {
  /// Runs `body` in one write transaction with the account named `username`.
  static func run<T>(
    _ env: AccountsEnvironment, username: String,
    _ body: (any AccountWriter, Account) throws(AccountsError) -> T
  ) throws(AccountsError) -> T {
    let (name, key) = try DetailRules.username(.text(username))
    let store = try env.existingStore()
    return try store.write { writer throws(AccountsError) -> T in
      guard let account = try writer.account(key: key) else { throw .noSuchAccount(name) }
      return try body(writer, account)
    }
  }

  /// Looks the account up without writing (before a confirmation or a password prompt).
  static func find(_ env: AccountsEnvironment, username: String) throws(AccountsError)
    -> Account
  {
    let (name, key) = try DetailRules.username(.text(username))
    let store = try env.existingStore()
    return try store.read { reader throws(AccountsError) -> Account in
      guard let account = try reader.account(key: key) else { throw .noSuchAccount(name) }
      return account
    }
  }
}
