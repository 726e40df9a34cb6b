import Foundation

/// What pam_exec hands `accounts pam-auth`.
public struct PamRequest: Equatable, Sendable {
  /// `PAM_USER`.
  public var username: String
  /// Standard input: the password (and, for an account with TOTP, the code right after it).
  public var secret: [UInt8]

  /// Creates a request.
  public init(username: String, secret: [UInt8]) {
    self.username = username
    self.secret = secret
  }
}

/// `accounts pam-auth`: a login's check for PAM's `pam_exec`, with nothing shown.
///
/// The same check, cost, counting and audit as `login` (no session); the environment's
/// `origin` says which PAM service and remote host the events came from. For an account with
/// a TOTP second factor the code follows the password in the one string PAM asks for.
public enum PamAuthFlow {
  /// Checks the request; throws `.invalidCredentials`, `.invalidVerificationCode`,
  /// `.replayedVerificationCode` or `.locked` when refused.
  public static func run(_ env: AccountsEnvironment, request: PamRequest) throws(AccountsError) {
    // PAM tells the person; nothing is said here, not even the refusal that earns a lock.
    var env = env
    env.console = QuietConsole(env.console)
    let store = try env.activatedStore()
    let authenticator = Authenticator(env: env, store: store)
    let gate = SecondFactorGate(authenticator)
    // Bytes no password can hold (not UTF-8, control characters such as a second NUL) are
    // refused before anything is counted, as at the prompts.
    guard let text = String(validating: request.secret, as: UTF8.self),
      TextRules.problem(.text(text), field: Messages.passwordPrompt, allowFormat: true) == nil
    else { throw .invalidCredentials }
    let username = TextRules.trimmed(request.username)
    // Which string is the password depends on whether the account has TOTP: read first (it
    // costs nothing next to the password's check, and a refusal is the same either way).
    var password = text
    var code: String?
    let factor = try UsernameRules.key(for: username).flatMap { key throws(AccountsError) in
      try store.read { reader throws(AccountsError) -> StoredSecondFactor? in
        guard let account = try reader.account(key: key) else { return nil }
        return try reader.secondFactor(accountID: account.id)
      }
    }
    if factor != nil, text.count > SecondFactor.digits,
      text.suffix(SecondFactor.digits).allSatisfy({ $0.isASCII && $0.isNumber })
    {
      password = String(text.dropLast(SecondFactor.digits))
      code = String(text.suffix(SecondFactor.digits))
    }
    if password.isEmpty || username.isEmpty { throw .invalidCredentials }
    let verified = try authenticator.check(
      username: username, password: PasswordRules.normalized(password))
    var proof: VerificationProof?
    if let factor = try gate.factor(of: verified.account) {
      guard let code else {
        try authenticator.fail(
          username: verified.typedName, key: verified.account.usernameKey,
          detail: Messages.detailNoCode, error: .invalidVerificationCode)
      }
      proof = try gate.check(code, verified: verified, factor: factor)
    }
    _ = try authenticator.logIn(
      verified, completion: LoginCompletion(proof: proof, origin: env.origin))
  }
}
