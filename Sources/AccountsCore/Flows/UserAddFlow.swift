/// `accounts user add`: one more account on an Activated device (administrator).
public enum UserAddFlow {
  /// Asks for the Activation Form's fields (flags skip prompts), with its rules and messages,
  /// and stores the account; returns its user name.
  @discardableResult
  public static func run(_ env: AccountsEnvironment, options: ActivationOptions)
    throws(AccountsError) -> String
  {
    guard try env.isActivated() else { throw .notActivated }
    let account = try AccountForm.ask(env, options: options)
    let store = try env.writableStore()
    try store.write { writer throws(AccountsError) in
      try writer.requireActivated()
      if try writer.account(key: account.usernameKey) != nil {
        throw .usernameTaken(account.username)
      }
      let added = try writer.insert(account, at: env.now())
      try writer.append(
        AuditRecord(
          .accountAdded, at: env.now(), username: added.username,
          usernameKey: added.usernameKey))
    }
    env.console.output(Messages.accountAdded(account.username))
    return account.username
  }
}
