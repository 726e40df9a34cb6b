/// `accounts user add`: one more account on an Activated device (administrator).
public enum UserAddFlow {
  /// Asks for the Activation Form's fields (flags skip prompts), with its rules and messages,
  /// and stores the account, a member of `groups` (each must exist: checked before the form
  /// and again in the write), expiring at `expiry`, with its uid when the store gives numbers;
  /// returns its user name.
  @discardableResult
  public static func run(
    _ env: AccountsEnvironment, options: ActivationOptions, groups: [String] = [],
    expiry: AccountExpiry = .never, home: String? = nil, shell: String? = nil
  ) throws(AccountsError) -> String {
    let home = try home.map { path throws(AccountsError) in try LinuxUser.path(path, "--home") }
    let shell = try shell.map { path throws(AccountsError) in try LinuxUser.path(path, "--shell") }
    guard try env.isActivated() else { throw .notActivated }
    if !groups.isEmpty, let store = try env.readableStore() {
      try store.read { reader throws(AccountsError) in
        for name in groups { _ = try GroupFlow.existing(name, reader: reader) }
      }
    }
    var account = try AccountForm.ask(env, options: options)
    account.expiresAt = expiry.date
    account.home = home
    account.shell = shell
    let systemNames = LinuxUser.systemNamesLike(account.username, env: env)
    let store = try env.writableStore()
    let said = try store.write { writer throws(AccountsError) -> [String] in
      try writer.requireActivated()
      if try writer.account(key: account.usernameKey) != nil {
        throw .usernameTaken(account.username)
      }
      try LinuxUser.refuse(account.username, like: systemNames, env: env, reader: writer)
      if let home { try LinuxUser.refuseTakenHome(home, account: nil, reader: writer) }
      let now = env.now()
      let added = try writer.insert(account, at: now)
      try writer.append(
        AuditRecord(
          .accountAdded, at: now, username: added.username, usernameKey: added.usernameKey,
          detail: expiry.date.map { Messages.detailExpiry(Timestamp.string(from: $0)) }))
      _ = try GroupFlow.join(added, groups: groups, writer: writer, at: now)
      var numbers = try PosixIDGiver(env, writer: writer, at: now)
      try numbers.number(added, writer: writer)
      return numbers.said
    }
    env.console.output(Messages.accountAdded(account.username))
    said.forEach(env.console.message)
    return account.username
  }
}
