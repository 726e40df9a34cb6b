import AccountsCrypto
import FoundationEssentials

extension PamModuleFlow {
  // MARK: - account

  /// May the account log in now: unknown (another module's user), disabled or expired, in
  /// none of the allowed groups, or due a new password, in that order.
  static func checkAccount(
    _ env: AccountsEnvironment, request: PamModuleRequest, conversation: any PamConversation
  ) throws(AccountsError) -> PamVerdict {
    guard let (store, account, groups) = try namedAccount(env, username: request.username)
    else {
      return .userUnknown
    }
    let refusal: (reason: String, verdict: PamVerdict, line: String)? =
      if account.isDisabled {
        (Messages.detailRefusedDisabled, .accountExpired, Messages.pamAccountExpired)
      } else if account.isExpired(at: env.now()) {
        (Messages.detailRefusedExpired, .accountExpired, Messages.pamAccountExpired)
      } else if !request.allowedGroups.isEmpty,
        Set(groups).isDisjoint(with: request.allowedGroups)
      {
        (Messages.detailRefusedGroups, .permissionDenied, Messages.pamNotInAllowedGroups)
      } else {
        nil
      }
    if let refusal {
      // Logged as its own kind, not as a failed login: no password was guessed, so no tally
      // (nor "failures since your last login") counts it. A store that cannot log it does not
      // turn the refusal into anything else.
      do {
        _ = try store.recordPamDecision(
          .refused, of: account, at: env.now(),
          detail: Messages.detail(refusal.reason, origin: env.origin))
      } catch {
        conversation.log(error.description)
      }
      conversation.error(refusal.line)
      return refusal.verdict
    }
    if account.mustChangePassword {
      conversation.error(Messages.mustChangePassword)
      return .newPasswordRequired
    }
    return .success
  }

  // MARK: - password

  /// A new password through PAM, with `accounts passwd`'s policy: the current password (and
  /// the code, unless this PAM handle's auth stage has just accepted the person for this forced
  /// change) checked as a login checks them; root sets another user's without them.
  static func changePassword(
    _ env: AccountsEnvironment, request: PamModuleRequest, conversation: any PamConversation
  ) throws(AccountsError) -> PamVerdict {
    guard let (store, account, _) = try namedAccount(env, username: request.username) else {
      return .userUnknown
    }
    if request.expiredOnly && !account.mustChangePassword { return .success }
    let reader = FieldReader(console: env.console, stage: .passwordChange)
    if request.callerIsRoot && !request.expiredOnly {
      try setByRoot(env, store: store, account: account, reader: reader)
      conversation.info(Messages.passwordChanged(account.username))
      return .success
    }
    let authenticator = Authenticator(env: env, store: store)
    let answer = conversation.oldPassword(prompt: Messages.currentPasswordPrompt + ": ")
    let verified = try authenticator.check(
      username: request.username,
      password: try acceptablePassword(answer, username: request.username), exactName: true,
      systemName: SystemIdentity.of(request.username, names: env.nameService))
    // A forced change after a key login (sshd never ran auth) is no proof of the second factor:
    // the code is asked unless auth accepted it in this handle moments ago.
    let skipCode = request.expiredOnly && request.authenticated
    let proof = skipCode ? nil : try secondFactor(verified, authenticator: authenticator)
    let newPassword = try reader.newPassword(
      for: verified.account, current: verified.password, blocklist: env.blocklist)
    try authenticator.changePassword(
      verified, to: newPassword, proof: proof, detail: env.origin)
    conversation.info(Messages.passwordChanged(account.username))
    return .success
  }

  /// Root's change of another user's password (`passwd NAME`): the new one typed twice, the
  /// policy's rules, every session ended, the tally cleared, as `accounts user passwd`.
  static func setByRoot(
    _ env: AccountsEnvironment, store: any AccountRepository, account: Account,
    reader: FieldReader
  ) throws(AccountsError) {
    try env.blocklist?.checkReadable()
    let password = try reader.newPassword(for: account, current: nil, blocklist: env.blocklist)
    let hash = try hashing { () throws(CryptoError) in try env.hasher.hash(password: password) }
    let changed = try store.write { writer throws(AccountsError) -> Bool in
      guard let current = try writer.account(key: account.usernameKey), current.id == account.id
      else { return false }
      try UserPasswordFlow.store(
        hash, for: current, mustChange: false, writer: writer, at: env.now(), detail: env.origin)
      return true
    }
    guard changed else { throw .invalidCredentials }
  }

  // MARK: - session

  /// The OS login or logout of an account in the audit log, with where it came from; nothing
  /// for a name that is not an account (another module's user).
  static func recordSession(
    _ env: AccountsEnvironment, request: PamModuleRequest, opened: Bool
  ) throws(AccountsError) -> PamVerdict {
    guard let (store, account, _) = try namedAccount(env, username: request.username) else {
      return .userUnknown
    }
    // The login is logged when the session opens, not at the account stage: `acct_mgmt` alone
    // (pamtester, a cron job, sudo's check) lets nobody in, while a session that opens is the
    // login itself, whichever module (or sshd's key check) accepted the person. A session whose
    // auth this module accepted in this handle was logged then, with its factors. A disabled
    // or expired account's session is no login (the store logs none): its session events stay.
    if opened, let login = request.sessionLogin {
      _ = try store.recordPamDecision(
        .login, of: account, at: env.now(),
        detail: Messages.detail(login.detail, origin: env.origin))
    }
    let recorded = try store.recordPamSession(
      of: account, opened: opened, at: env.now(), detail: env.origin)
    return recorded ? .success : .userUnknown
  }
}
