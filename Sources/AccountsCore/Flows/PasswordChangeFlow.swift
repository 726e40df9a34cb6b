/// The person's own password change: `accounts passwd`.
public enum PasswordChangeFlow {
  /// Asks the user name, the current password and the new one twice; returns the user name.
  ///
  /// The current password is checked as a login checks it (same cost, same answer for unknown
  /// names, failures counted and locked); the new one by the form's policy, and must differ.
  @discardableResult
  public static func run(_ env: AccountsEnvironment, username: String?) throws(AccountsError)
    -> String
  {
    let store = try env.activatedStore()
    let authenticator = Authenticator(env: env, store: store)
    let reader = FieldReader(console: env.console, stage: .passwordChange)
    let verified = try Credentials.ask(
      reader, authenticator: authenticator, username: username,
      passwordPrompt: Messages.currentPasswordPrompt)
    let proof = try SecondFactorGate(authenticator).askIfEnabled(verified, stage: .passwordChange)
    let newPassword = try reader.newPassword(
      for: verified.account, current: verified.password, blocklist: env.blocklist)
    // Every other session of the account ends; this client's own, if it is one, stays.
    let keeping = SessionBook.previousTokenHash(env)
    try authenticator.changePassword(verified, to: newPassword, proof: proof, keeping: keeping)
    env.console.output(Messages.passwordChanged(verified.account.username))
    return verified.account.username
  }
}
