import AccountsCrypto
import FoundationEssentials

/// `accounts user passwd NAME`: an administrator sets a password without the old one.
public enum UserPasswordFlow {
  /// Sets the account's password from the new password typed twice.
  ///
  /// One line with `passwordFromStandardInput`. It is checked by the form's policy with the
  /// account's details; with `mustChange` the next login must choose another. The name's
  /// failed-login tally is cleared.
  public static func run(
    _ env: AccountsEnvironment, username: String, passwordFromStandardInput: Bool,
    mustChange: Bool
  ) throws(AccountsError) {
    let found = try AccountChange.find(env, username: username)
    try env.blocklist?.checkReadable()
    let password = try FieldReader(console: env.console, stage: .passwordChange).newPassword(
      for: found, current: nil, blocklist: env.blocklist, once: passwordFromStandardInput)
    let hash = try hashing { () throws(CryptoError) in try env.hasher.hash(password: password) }
    let name = try AccountChange.run(env, username: username) {
      writer, account throws(AccountsError) -> String in
      try store(
        hash, for: account, mustChange: mustChange, writer: writer, at: env.now(),
        detail: mustChange ? Messages.detailMustChange : nil)
      return account.username
    }
    env.console.output(Messages.passwordSet(name, mustChange: mustChange))
  }

  /// Stores an administrator's (or root's, through PAM) new password hash for `account`: the
  /// account logged out everywhere, its name's tally cleared, one `password_set` event.
  static func store(
    _ hash: EncodedPasswordHash, for account: Account, mustChange: Bool,
    writer: any AccountWriter, at now: Date, detail: String?
  ) throws(AccountsError) {
    var changed = account
    changed.passwordHash = hash.description
    changed.mustChangePassword = mustChange
    changed.updatedAt = now
    changed.passwordChangedAt = now
    try writer.update(changed)
    // A password set by an administrator logs the account out everywhere.
    _ = try writer.endSessions(accountID: account.id, keeping: nil)
    try writer.setTally(nil, key: account.usernameKey, at: now)
    try writer.append(
      AuditRecord(
        .passwordSet, at: now, username: account.username, usernameKey: account.usernameKey,
        detail: detail))
  }
}
