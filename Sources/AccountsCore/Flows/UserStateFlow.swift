/// `accounts user disable NAME` and `accounts user enable NAME` (administrator).
public enum UserStateFlow {
  /// Disables (`disabled` true) or enables the account; returns the sentence said.
  ///
  /// A disabled account cannot log in: the person is told `Invalid user name or password!`,
  /// the log says why.
  @discardableResult
  public static func run(_ env: AccountsEnvironment, username: String, disabled: Bool)
    throws(AccountsError) -> String
  {
    let said = try AccountChange.run(env, username: username) {
      writer, account throws(AccountsError) -> String in
      guard account.isDisabled != disabled else {
        return disabled
          ? Messages.alreadyDisabled(account.username) : Messages.notDisabled(account.username)
      }
      let now = env.now()
      var changed = account
      changed.disabledAt = disabled ? now : nil
      changed.updatedAt = now
      try writer.update(changed)
      // A disabled account is logged out everywhere.
      if disabled { _ = try writer.endSessions(accountID: account.id, keeping: nil) }
      try writer.append(
        AuditRecord(
          disabled ? .accountDisabled : .accountEnabled, at: now, username: account.username,
          usernameKey: account.usernameKey))
      return disabled
        ? Messages.accountDisabled(account.username) : Messages.accountEnabled(account.username)
    }
    env.console.output(said)
    return said
  }
}
