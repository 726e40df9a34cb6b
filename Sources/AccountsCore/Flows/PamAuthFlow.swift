import FoundationEssentials

/// What pam_exec hands `accounts pam-auth`.
public struct PamRequest: Equatable, Sendable {
  /// `PAM_USER`.
  public var username: String
  /// Standard input: the password (and, for an account with TOTP, the code right after it).
  public var secret: [UInt8]
  /// `PAM_SERVICE`, for the audit detail.
  public var service: String?
  /// `PAM_RHOST`.
  public var remoteHost: String?
  /// `PAM_TTY`.
  public var tty: String?

  /// Creates a request.
  public init(
    username: String, secret: [UInt8], service: String? = nil, remoteHost: String? = nil,
    tty: String? = nil
  ) {
    self.username = username
    self.secret = secret
    self.service = service
    self.remoteHost = remoteHost
    self.tty = tty
  }
}

/// `accounts pam-auth`: a login's check for PAM's `pam_exec`, with nothing shown.
///
/// The same check, cost, counting and audit as `login` (no session), for the exact user name
/// only; the events say which PAM service, remote host and terminal they came from. For an
/// account with a TOTP second factor the code follows the password in the one string PAM asks
/// for.
public enum PamAuthFlow {
  /// The most bytes of each PAM item (service, remote host, terminal) kept in the audit detail.
  public static let originItemLimit = 255
  /// The most bytes standard input may hold (more is refused, nothing counted).
  public static let inputLimit = 4096
  /// The seconds the whole check may take by default: pam_exec has no timeout of its own, and
  /// a login must not hang on a stuck store.
  public static let defaultTimeLimit: UInt32 = 5
  /// The time limits a PAM line may set (a slow device's PBKDF2 cost may need more than 5).
  public static let timeLimits: ClosedRange<UInt32> = 1...300

  /// Drops what ends pam_exec's standard input but is no part of the password, in place (no
  /// copy of the secret is made): a final NUL (Linux-PAM before 1.4 appends one), then a final
  /// newline and carriage return.
  public static func dropTerminator(_ input: inout [UInt8]) {
    if input.last == 0 { input.removeLast() }
    if input.last == UInt8(ascii: "\n") { input.removeLast() }
    if input.last == UInt8(ascii: "\r") { input.removeLast() }
  }

  /// True for a store location root may be pointed at: an absolute path or a PostgreSQL URI
  /// (never one resolved against the caller's working folder).
  public static func acceptsLocation(_ location: String) -> Bool {
    location.hasPrefix("/") || StoreLocation.isPostgres(location)
  }

  /// Where the request came from, as the audit detail says it: each item cut to
  /// `originItemLimit` bytes (between characters) and marked as cut.
  public static func origin(of request: PamRequest) -> String {
    Messages.pamOrigin(
      service: request.service.map(capped), remoteHost: request.remoteHost.map(capped),
      tty: request.tty.map(capped))
  }

  /// `item` whole when it fits in `originItemLimit` bytes; else its longest run of whole
  /// characters that fits, marked as cut.
  static func capped(_ item: String) -> String {
    guard item.utf8.count > originItemLimit else { return item }
    var bytes = 0
    let kept = item.prefix { character in
      bytes += character.utf8.count
      return bytes <= originItemLimit
    }
    return Messages.pamItemCut(String(kept))
  }

  /// Checks the request; throws `.invalidCredentials`, `.invalidVerificationCode`,
  /// `.replayedVerificationCode` or `.locked` when refused.
  public static func run(_ env: AccountsEnvironment, request: PamRequest) throws(AccountsError) {
    // PAM tells the person; nothing is said here, not even the refusal that earns a lock.
    var env = env
    env.console = QuietConsole(env.console)
    env.origin = origin(of: request)
    // PAM_USER as given, untrimmed: other programs on the host take it as it is, so only the
    // stored name itself (byte for byte) is the account; another case, width or spacing of it
    // is a name no account has.
    let username = request.username
    let key = try UsernameRules.key(for: username)
    // The name the calling program will run a session as: an account reached only when NSS
    // gives that name no user or the account's own uid (never `root` through an account
    // named so).
    let systemName = SystemIdentity.of(username, names: env.nameService)
    try OfflineLogin.orFromCache(
      env,
      online: { () throws(AccountsError) in
        try online(env, request: request, key: key, systemName: systemName)
      },
      offline: { login throws(AccountsError) in
        try offline(login, request: request, systemName: systemName)
      })
  }

  private static func online(
    _ env: AccountsEnvironment, request: PamRequest, key: String?, systemName: SystemIdentity
  ) throws(AccountsError) {
    let username = request.username
    let (store, prefetched) = try env.activatedStore(forLoginOf: key)
    let authenticator = Authenticator(env: env, store: store)
    let text = try secretText(request)
    // Which string is the password depends on whether the account has TOTP: read first (it
    // costs nothing next to the password's check, and a refusal is the same either way).
    var facts = prefetched
    if facts == nil, let key { facts = try store.loginFacts(key: key) }
    let reached = facts?.account.flatMap {
      $0.isNamed(exactly: username) && systemName.allows($0) ? $0 : nil
    }
    let (password, code) = split(text, hasCode: reached != nil && facts?.secondFactor != nil)
    if password.isEmpty || username.isEmpty { throw .invalidCredentials }
    let verified = try authenticator.check(
      username: username, password: try PasswordRules.normalized(password), exactName: true,
      systemName: systemName, facts: facts, straightToLogIn: true)
    var proof: VerificationProof?
    if let factor = verified.secondFactor {
      guard let code else {
        try authenticator.fail(
          username: verified.typedName, key: verified.account.usernameKey,
          detail: Messages.detailNoCode, error: .invalidVerificationCode)
      }
      proof = try SecondFactorGate(authenticator).check(code, verified: verified, factor: factor)
    }
    _ = try authenticator.logIn(
      verified, completion: LoginCompletion(proof: proof, origin: env.origin))
  }

  /// The same check against this host's login cache, while the server is away.
  private static func offline(
    _ login: OfflineLogin, request: PamRequest, systemName: SystemIdentity
  ) throws(AccountsError) {
    let username = request.username
    let text = try secretText(request)
    let entry = try UsernameRules.key(for: username).flatMap { key throws(AccountsError) in
      try login.cache.entry(key: key)
    }
    let (password, code) = split(text, hasCode: entry?.sealedSecret != nil)
    if password.isEmpty || username.isEmpty { throw .invalidCredentials }
    let checked = try login.check(
      username: username, password: try PasswordRules.normalized(password), exactName: true,
      systemName: systemName)
    var proof: VerificationProof?
    if checked.entry.sealedSecret != nil {
      guard let code else {
        try login.fail(
          username: username, key: checked.entry.usernameKey, detail: Messages.detailNoCode,
          error: .invalidVerificationCode)
      }
      proof = try login.checkCode(code, checked)
    }
    _ = try login.logIn(checked, proof: proof, asksNewPassword: false)
  }

  /// What pam_exec passed, as text.
  ///
  /// Bytes no password can hold (not UTF-8, control characters such as a second NUL) are
  /// refused before anything is counted, as at the prompts.
  private static func secretText(_ request: PamRequest) throws(AccountsError) -> String {
    guard let text = String(validating: request.secret, as: UTF8.self),
      TextRules.problem(.text(text), field: Messages.passwordPrompt, allowFormat: true) == nil
    else { throw .invalidCredentials }
    return text
  }

  /// `text` as the password and, for an account with a second factor, the code typed right
  /// after it (its last `SecondFactor.digits` characters, when they are digits).
  private static func split(_ text: String, hasCode: Bool) -> (password: String, code: String?) {
    guard hasCode, text.count > SecondFactor.digits,
      text.suffix(SecondFactor.digits).allSatisfy({ $0.isASCII && $0.isNumber })
    else { return (text, nil) }
    return (String(text.dropLast(SecondFactor.digits)), String(text.suffix(SecondFactor.digits)))
  }
}
