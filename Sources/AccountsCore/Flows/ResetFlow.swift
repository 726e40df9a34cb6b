/// The administrator's reset: `accounts reset`.
public enum ResetFlow {
  /// Returns the device to Public and deletes every account.
  ///
  /// Asks for confirmation unless `confirmed`. The audit log stays.
  public static func run(_ env: AccountsEnvironment, confirmed: Bool) throws(AccountsError) {
    guard try env.isActivated() else {
      env.console.output(Messages.alreadyPublic)
      return
    }
    let store = try env.writableStore()
    if !confirmed {
      guard env.console.isInteractive else { throw .confirmationRequired(.reset) }
      let count = try store.read { reader throws(AccountsError) in try reader.accountCount() }
      env.console.message(Messages.resetWarning(accounts: count))
      let reader = FieldReader(console: env.console, stage: .resetConfirmation)
      guard try reader.confirm(Messages.resetPrompt, word: Messages.resetWord) else {
        throw .declined(.reset)
      }
    }
    let changed = try store.write { writer throws(AccountsError) -> Bool in
      guard try writer.deviceStatus().state == .activated else { return false }
      let owner = try writer.owner()
      let deleted = try writer.makePublic(at: env.now())
      try writer.append(
        AuditRecord(
          .reset, at: env.now(), username: owner?.username, usernameKey: owner?.usernameKey,
          detail: Messages.detailAccountsDeleted(deleted)))
      return true
    }
    env.console.output(changed ? Messages.resetDone : Messages.alreadyPublic)
  }
}
