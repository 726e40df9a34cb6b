/// `accounts user remove NAME` (administrator).
public enum UserRemoveFlow {
  /// Deletes the account (and its name's tally) after confirmation unless `confirmed`.
  ///
  /// The owner cannot be removed while other accounts exist (ownership moves first), and the
  /// last account cannot be removed (`reset` makes the device Public).
  public static func run(_ env: AccountsEnvironment, username: String, confirmed: Bool)
    throws(AccountsError)
  {
    let found = try AccountChange.find(env, username: username)
    if !confirmed {
      guard env.console.isInteractive else { throw .confirmationRequired(.removal) }
      env.console.message(Messages.removalWarning(found.username))
      let reader = FieldReader(console: env.console, stage: .removalConfirmation)
      guard try reader.confirm(Messages.removalPrompt, word: Messages.removalWord) else {
        throw .declined(.removal)
      }
    }
    let removed = try AccountChange.run(env, username: username) {
      writer, account throws(AccountsError) -> String in
      let count = try writer.accountCount()
      if count <= 1 { throw .lastAccount(account.username) }
      if account.isOwner { throw .ownerCannotBeRemoved(account.username) }
      try writer.delete(account)
      try writer.setTally(nil, key: account.usernameKey, at: env.now())
      try writer.append(
        AuditRecord(
          .accountRemoved, at: env.now(), username: account.username,
          usernameKey: account.usernameKey))
      return account.username
    }
    env.console.output(Messages.accountRemoved(removed))
  }
}
