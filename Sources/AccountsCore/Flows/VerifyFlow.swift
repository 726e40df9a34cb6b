/// `accounts verify`: a login's check for scripts, with nothing shown.
public enum VerifyFlow {
  /// Checks `username` and the password read as one line, showing nothing.
  ///
  /// Records it as a login does (cost, throttle, audit). Throws `.invalidCredentials` or
  /// `.locked` when refused.
  ///
  /// An account that must change its password still verifies: the password is right, and
  /// changing it needs a person at `accounts login` or `accounts passwd`.
  public static func run(_ env: AccountsEnvironment, username: String) throws(AccountsError) {
    var env = env
    env.console = QuietConsole(env.console)
    try OfflineLogin.orFromCache(
      env, online: { () throws(AccountsError) in try online(env, username: username) },
      offline: { login throws(AccountsError) in
        let checked = try login.ask(
          FieldReader(console: env.console, stage: .login), username: username)
        _ = try login.logIn(
          checked, proof: try login.askCode(checked, stage: .login), asksNewPassword: false)
      })
  }

  private static func online(_ env: AccountsEnvironment, username: String)
    throws(AccountsError)
  {
    let (store, prefetched) = try env.activatedStore(forLoginOf: Credentials.key(username))
    let authenticator = Authenticator(env: env, store: store)
    let reader = FieldReader(console: env.console, stage: .login)
    let verified = try Credentials.ask(
      reader, authenticator: authenticator, username: username,
      passwordPrompt: Messages.passwordPrompt, straightToLogIn: true, prefetched: prefetched)
    // With a second factor, its code is the next line.
    let proof = try SecondFactorGate(authenticator).askIfEnabled(verified, stage: .login)
    _ = try authenticator.logIn(verified, completion: LoginCompletion(proof: proof))
  }
}

/// A console that reads from another and says nothing on standard error.
final class QuietConsole: Console {
  private let inner: any Console
  init(_ inner: any Console) { self.inner = inner }
  var isInteractive: Bool { inner.isInteractive }
  func output(_ line: String) { inner.output(line) }
  func message(_ line: String) {}
  func readLine(prompt: String) -> ConsoleLine { inner.readLine(prompt: prompt) }
  func readSecret(prompt: String) -> ConsoleLine { inner.readSecret(prompt: prompt) }
}
