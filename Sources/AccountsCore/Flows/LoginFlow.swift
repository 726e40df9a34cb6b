import FoundationEssentials

/// Login: `accounts login`.
public enum LoginFlow {
  /// Asks for the user name and password and checks them; returns Home.
  ///
  /// Unknown names cost the same work and get the same answers as known ones. A name with too
  /// many failures is refused as soon as it is typed, without asking for or checking the
  /// password. An account that must change its password chooses a new one before Home.
  public static func run(_ env: AccountsEnvironment, options: LoginOptions)
    throws(AccountsError) -> HomeScreen
  {
    try run(env, options: options, stage: .login)
  }

  static func run(_ env: AccountsEnvironment, options: LoginOptions, stage: InputStage)
    throws(AccountsError) -> HomeScreen
  {
    try OfflineLogin.orFromCache(
      env,
      online: { () throws(AccountsError) -> HomeScreen in
        try online(env, options: options, stage: stage)
      },
      offline: { login throws(AccountsError) -> HomeScreen in
        // No session: it would live in the server's store.
        let checked = try login.ask(
          FieldReader(console: env.console, stage: stage), username: options.username)
        let proof = try login.askCode(checked, stage: stage)
        let home = try login.logIn(checked, proof: proof)
        if let proof { login.acknowledge(proof, checked) }
        return home
      })
  }

  private static func online(_ env: AccountsEnvironment, options: LoginOptions, stage: InputStage)
    throws(AccountsError) -> HomeScreen
  {
    let (store, prefetched) = try env.activatedStore(forLoginOf: Credentials.key(options.username))
    let authenticator = Authenticator(env: env, store: store)
    let reader = FieldReader(console: env.console, stage: stage)
    let verified = try Credentials.ask(
      reader, authenticator: authenticator, username: options.username,
      passwordPrompt: Messages.passwordPrompt, straightToLogIn: true, prefetched: prefetched)
    let proof = try SecondFactorGate(authenticator).askIfEnabled(verified, stage: stage)
    var newPassword: String?
    if verified.account.mustChangePassword {
      env.console.message(Messages.mustChangePassword)
      newPassword = try FieldReader(console: env.console, stage: .newPasswordAtLogin)
        .newPassword(for: verified.account, current: verified.password, blocklist: env.blocklist)
    }
    guard options.startsSession else {
      let home = try authenticator.logIn(
        verified, newPassword: newPassword, completion: LoginCompletion(proof: proof))
      if let proof {
        SecondFactorGate.acknowledge(proof, account: verified.account, env: env, store: store)
      }
      return home
    }
    let (token, hash) = try SessionBook.newToken()
    let start = SessionStart(
      tokenHash: hash, policy: env.sessionPolicy,
      replacing: SessionBook.previousTokenHash(env))
    let home = try authenticator.logIn(
      verified, newPassword: newPassword,
      completion: LoginCompletion(proof: proof, session: start))
    try SessionBook.keep(
      token: token, tokenHash: hash, storeID: home.storeID, env: env, store: store)
    if let proof {
      SecondFactorGate.acknowledge(proof, account: verified.account, env: env, store: store)
    }
    return home
  }
}

/// A user name and password read and checked: shared by `login`, `passwd` and the bare flow.
enum Credentials {
  /// The key of a user name given as a flag, as `ask` will take it; nil when there is none.
  static func key(_ flag: String?) -> String? {
    guard let flag, TextRules.problem(.text(flag), field: Messages.usernamePrompt) == nil,
      TextRules.trimmed(flag) == flag
    else { return nil }
    // A prefetch only: a name the library cannot normalize now is asked for and said later.
    return (try? UsernameRules.key(for: flag)) ?? nil
  }

  /// Reads the user name (refusing a locked one at once), then the password, and checks them.
  ///
  /// With `straightToLogIn`, the caller records the login next (see `Authenticator.check`).
  /// `prefetched` are the facts of the name given as a flag, read with the device's state.
  static func ask(
    _ reader: FieldReader, authenticator: Authenticator, username: String?,
    passwordPrompt: String, straightToLogIn: Bool = false, prefetched: LoginFacts? = nil
  ) throws(AccountsError) -> Authenticator.Verified {
    var facts: LoginFacts?
    let typed = try read(reader, username: username, passwordPrompt: passwordPrompt) {
      name, key throws(AccountsError) in
      facts = try authenticator.refuseIfLocked(
        username: name, key: key, facts: name == username ? prefetched : nil)
    }
    return try authenticator.check(
      username: typed.username, password: typed.password, facts: facts,
      straightToLogIn: straightToLogIn)
  }

  /// Reads the user name, then the password, as a form.
  ///
  /// Both given, neither malformed; the password NFKC. `named` is told the name and its key as
  /// soon as the name is read, so that a locked name is refused before the password is asked.
  static func read(
    _ reader: FieldReader, username: String?, passwordPrompt: String,
    named: (String, String) throws(AccountsError) -> Void
  ) throws(AccountsError) -> (username: String, password: String) {
    let usernameField = try reader.read(Messages.usernamePrompt, flag: username)
    if !usernameField.isBlank,
      TextRules.problem(usernameField, field: Messages.usernamePrompt) == nil
    {
      let name = TextRules.trimmed(usernameField.textOrEmpty)
      if let key = try UsernameRules.key(for: name) { try named(name, key) }
    }
    let passwordField = try reader.read(passwordPrompt, flag: nil, secret: true)
    let empty = [(Messages.usernamePrompt, usernameField), (passwordPrompt, passwordField)]
      .filter { $0.1.isBlank }.map(\.0)
    if !empty.isEmpty { throw .incompleteForm(empty: empty) }
    if let problem = TextRules.problem(usernameField, field: Messages.usernamePrompt) {
      throw .invalidForm(problem)
    }
    if let problem = TextRules.problem(passwordField, field: passwordPrompt, allowFormat: true) {
      throw .invalidForm(problem)
    }
    return (
      TextRules.trimmed(usernameField.textOrEmpty),
      try PasswordRules.normalized(passwordField.textOrEmpty)
    )
  }
}
