import FoundationEssentials

/// The management group `pam_accounts.so` runs the helper for.
public enum PamStage: String, Sendable, CaseIterable {
  /// `pam_sm_authenticate`: the password, then the second factor.
  case auth
  /// `pam_sm_acct_mgmt`: may this account log in now?
  case account
  /// `pam_sm_chauthtok` (its update phase): a new password.
  case password
  /// `pam_sm_open_session`: the OS login, in the audit log.
  case openSession = "open-session"
  /// `pam_sm_close_session`: the OS logout, in the audit log.
  case closeSession = "close-session"
}

/// How a PAM session that this module's auth did not start let the person in (`open-session
/// --session-login`): the module tells, from what root's program set in the PAM handle.
public enum PamSessionLogin: String, Sendable, CaseIterable {
  /// sshd accepted a key (its `SSH_AUTH_INFO_0` names `publickey`).
  case sshKey = "ssh-key"
  /// Any other way: another module's auth, or none (root's `su` through pam_rootok).
  case pamSession = "pam-session"

  /// The words the `login_success` event's detail starts with.
  var detail: String {
    switch self {
    case .sshKey: Messages.detailKeyLogin
    case .pamSession: Messages.detailSessionLogin
    }
  }
}

/// What the module hands its helper besides the conversation: PAM's items and the service
/// line's options.
public struct PamModuleRequest: Equatable, Sendable {
  /// PAM_USER, exactly as the program set it.
  public var username: String
  /// PAM_SERVICE, PAM_RHOST and PAM_TTY, for the audit detail.
  public var service: String?
  /// PAM_RHOST.
  public var remoteHost: String?
  /// PAM_TTY.
  public var tty: String?
  /// `allow_groups=G1,G2` (account stage): empty allows every group.
  public var allowedGroups: [String]
  /// PAM_CHANGE_EXPIRED_AUTHTOK (password stage): change only a password that must change.
  public var expiredOnly: Bool
  /// With `expiredOnly`: this PAM handle's auth stage accepted the person just before.
  ///
  /// The code is then not asked again (it was, second factor included). Without it (a key
  /// login to sshd, which never ran auth), the code is asked with the current password.
  public var authenticated: Bool
  /// True when root runs the program (password stage): root sets another password without the
  /// current one, as with pam_unix.
  public var callerIsRoot: Bool
  /// Open-session: the session is a login this module's auth did not accept in this handle,
  /// made this way; nil when it did (its login is logged already).
  public var sessionLogin: PamSessionLogin?

  /// Creates a request.
  public init(
    username: String, service: String? = nil, remoteHost: String? = nil, tty: String? = nil,
    allowedGroups: [String] = [], expiredOnly: Bool = false, authenticated: Bool = false,
    callerIsRoot: Bool = false, sessionLogin: PamSessionLogin? = nil
  ) {
    self.username = username
    self.service = service
    self.remoteHost = remoteHost
    self.tty = tty
    self.allowedGroups = allowedGroups
    self.expiredOnly = expiredOnly
    self.authenticated = authenticated
    self.callerIsRoot = callerIsRoot
    self.sessionLogin = sessionLogin
  }

  /// Where the request came from, as audit details say it (`pam service=sshd rhost=… tty=…`).
  var origin: String {
    PamAuthFlow.origin(
      of: PamRequest(
        username: username, secret: [], service: service, remoteHost: remoteHost, tty: tty))
  }
}

/// `accounts pam-helper STAGE`: the checks behind `pam_accounts.so`, one stage a run.
///
/// The same authenticator as `login` and `pam-auth` (cost, counting, locks, disabled and
/// expired accounts, the second factor, the audit), asked through the PAM conversation; the
/// answer is a `PamVerdict`, never a thrown error: what went wrong is logged for the
/// administrator and the verdict says what the calling program needs to know.
public enum PamModuleFlow {
  /// Runs `stage` for `request`; errors become verdicts (and lines for the log or the person).
  public static func run(
    _ env: AccountsEnvironment, stage: PamStage, request: PamModuleRequest,
    conversation: any PamConversation
  ) -> PamVerdict {
    var env = env
    env.console = PamConsole(conversation)
    env.origin = request.origin
    // A user of /etc/passwd, or one NSS gives from a directory rather than a user record, is
    // never an account's: answered before the store is reached, so that the system's own users
    // (root above all) pass the stack through pam_unix whatever the store's state (a
    // PostgreSQL server away, a damaged file). Auth refuses (the user exists: its password is
    // another module's to check); the other stages leave it to the next module.
    if SystemIdentity.of(request.username, names: env.nameService).isNeverAnAccount {
      return stage == .auth ? .authenticationError : .userUnknown
    }
    do {
      switch stage {
      case .auth:
        return try OfflineLogin.orFromCache(
          env,
          online: { () throws(AccountsError) in
            try authenticate(env, request: request, conversation: conversation)
          },
          offline: { login throws(AccountsError) in
            try authenticateOffline(login, request: request, conversation: conversation)
          })
      case .account:
        return try OfflineLogin.orFromCache(
          env,
          online: { () throws(AccountsError) in
            try checkAccount(env, request: request, conversation: conversation)
          },
          offline: { login throws(AccountsError) in
            try checkAccountOffline(login, request: request, conversation: conversation)
          })
      case .password:
        return try changePassword(env, request: request, conversation: conversation)
      case .openSession, .closeSession:
        return try OfflineLogin.orFromCache(
          env,
          online: { () throws(AccountsError) in
            try recordSession(env, request: request, opened: stage == .openSession)
          },
          offline: { login throws(AccountsError) in
            try recordSessionOffline(login, request: request)
          })
      }
    } catch {
      return verdict(for: error, stage: stage, conversation: conversation)
    }
  }

  /// The verdict for an error a stage threw, after telling the person or the log what helps.
  static func verdict(
    for error: AccountsError, stage: PamStage, conversation: any PamConversation
  ) -> PamVerdict {
    switch error {
    case .locked:
      // Unknown names lock the same way, so saying it tells nothing about which names exist.
      conversation.error(error.description)
      return .maximumTries
    case .notActivated:
      return stage == .auth ? .authenticationError : .userUnknown
    case .invalidCredentials, .invalidVerificationCode, .replayedVerificationCode:
      return stage == .password ? .passwordRecoveryError : .authenticationError
    case .inputEnded:
      // Only a new password's questions end that way (an unanswered code is counted as wrong).
      return stage == .password ? .passwordChangeError : .authenticationError
    case .invalidForm, .incompleteForm:
      guard stage == .password else { return .authenticationError }
      for line in error.lines { conversation.error(line) }
      return .passwordChangeError
    default:
      conversation.log(error.description)
      return error.exitStatus == .storage ? .storeUnavailable : .systemError
    }
  }

  // MARK: - auth

  /// The password (from the stack or asked), then the code for an account with a second
  /// factor; a success recorded as `pam-auth` records it.
  static func authenticate(
    _ env: AccountsEnvironment, request: PamModuleRequest, conversation: any PamConversation
  ) throws(AccountsError) -> PamVerdict {
    let username = request.username
    let systemName = SystemIdentity.of(username, names: env.nameService)
    let (store, facts) = try env.activatedStore(forLoginOf: try UsernameRules.key(for: username))
    let authenticator = Authenticator(env: env, store: store)
    let verified: Authenticator.Verified
    let answer = conversation.password(prompt: Messages.passwordPrompt + ": ")
    do {
      verified = try authenticator.check(
        username: username, password: try acceptablePassword(answer, username: username),
        exactName: true, systemName: systemName, facts: facts, straightToLogIn: true)
    } catch {
      // A token an earlier module had (try_first_pass) is not this account's password: the
      // person is asked once. Under use_first_pass the module answers with the same token
      // again, which is not checked (nor counted) twice.
      guard case .invalidCredentials = error, case .stacked = answer else { throw error }
      let typed = conversation.password(prompt: Messages.passwordPrompt + ": ")
      guard case .typed = typed else { throw .invalidCredentials }
      verified = try authenticator.check(
        username: username, password: try acceptablePassword(typed, username: username),
        exactName: true, systemName: systemName, straightToLogIn: true)
    }
    let proof = try secondFactor(verified, authenticator: authenticator)
    _ = try authenticator.logIn(
      verified, completion: LoginCompletion(proof: proof, origin: env.origin))
    if let proof { acknowledge(proof, account: verified.account, store: store, conversation) }
    return .success
  }

  /// The answer as a password to check: NFKC, and refused before anything is counted when it
  /// is missing, empty, or holds bytes no password can (as `pam-auth` refuses them).
  static func acceptablePassword(_ answer: PamAnswer, username: String) throws(AccountsError)
    -> String
  {
    guard let bytes = answer.bytes, !bytes.isEmpty, !username.isEmpty,
      let text = String(validating: bytes, as: UTF8.self),
      TextRules.problem(.text(text), field: Messages.passwordPrompt, allowFormat: true) == nil
    else { throw .invalidCredentials }
    return try PasswordRules.normalized(text)
  }

  /// Asks and checks the code when the account has a second factor.
  ///
  /// A missing or empty code counts as a wrong one: otherwise the question itself would tell a
  /// right password apart at no cost to whoever guesses.
  static func secondFactor(_ verified: Authenticator.Verified, authenticator: Authenticator)
    throws(AccountsError) -> VerificationProof?
  {
    let gate = SecondFactorGate(authenticator)
    guard let factor = verified.secondFactor else { return nil }
    let typed: String
    do {
      typed = try SecondFactorGate.readCode(
        FieldReader(console: authenticator.env.console, stage: .login))
    } catch {
      if case .storage = error { throw error }
      try authenticator.fail(
        username: verified.typedName, key: verified.account.usernameKey,
        detail: Messages.detailNoCode, error: .invalidVerificationCode)
    }
    return try gate.check(typed, verified: verified, factor: factor)
  }

  /// After a second step: a used recovery code and few codes left, as information lines.
  static func acknowledge(
    _ proof: VerificationProof, account: Account, store: any AccountRepository,
    _ conversation: any PamConversation
  ) {
    // A count for the person's information: a failing read does not undo the login.
    guard
      let left = try? store.read({ reader throws(AccountsError) in
        try reader.recoveryCodesLeft(accountID: account.id)
      })
    else { return }
    if case .recovery = proof { conversation.info(Messages.recoveryCodeAccepted(left: left)) }
    if left <= 2 { conversation.info(Messages.fewRecoveryCodesLeft(left)) }
  }

  // MARK: - Shared reads

  /// The account PAM_USER names exactly (byte for byte, as `pam-auth` takes it), with its
  /// groups; nil when there is none (or the device is Public), and when NSS gives the name a
  /// user other than the account's own record (`SystemIdentity`).
  static func namedAccount(_ env: AccountsEnvironment, username: String)
    throws(AccountsError) -> (store: any AccountRepository, account: Account, groups: [String])?
  {
    guard let key = try UsernameRules.key(for: username) else { return nil }
    let systemName = SystemIdentity.of(username, names: env.nameService)
    let store = try env.activatedStore()
    let found = try store.read { reader throws(AccountsError) -> (Account, [String])? in
      guard let account = try reader.account(key: key), account.isNamed(exactly: username),
        systemName.allows(account)
      else { return nil }
      return (account, try reader.groups(accountID: account.id))
    }
    return found.map { (store, $0.0, $0.1) }
  }
}

/// The console the core's readers and messages see inside the module: every question is asked
/// with echo off through the conversation; lines meant for a terminal are not shown (the stage
/// says what the person needs through the conversation itself).
final class PamConsole: Console {
  private let conversation: any PamConversation
  init(_ conversation: any PamConversation) { self.conversation = conversation }
  var isInteractive: Bool { false }
  func output(_ line: String) {}
  func message(_ line: String) {}
  func readLine(prompt: String) -> ConsoleLine { readSecret(prompt: prompt) }
  func readSecret(prompt: String) -> ConsoleLine {
    guard let bytes = conversation.secret(prompt: prompt).bytes else { return .endOfInput }
    return .bytes(bytes)
  }
}
