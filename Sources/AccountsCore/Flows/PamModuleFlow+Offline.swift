import FoundationEssentials

/// The module's stages while the server cannot be reached, answered by this host's login cache
/// (`OfflineLogin`): the same questions and verdicts; a person the cache cannot answer for is
/// `PAM_AUTHINFO_UNAVAIL`, as an absent store is.
extension PamModuleFlow {
  /// auth from the cache: the password (from the stack or asked), then the code.
  static func authenticateOffline(
    _ login: OfflineLogin, request: PamModuleRequest, conversation: any PamConversation
  ) throws(AccountsError) -> PamVerdict {
    let username = request.username
    let systemName = SystemIdentity.of(username, names: login.env.nameService)
    let answer = conversation.password(prompt: Messages.passwordPrompt + ": ")
    let checked: OfflineLogin.Checked
    do {
      checked = try login.check(
        username: username, password: try acceptablePassword(answer, username: username),
        exactName: true, systemName: systemName)
    } catch {
      guard case .invalidCredentials = error, case .stacked = answer else { throw error }
      let typed = conversation.password(prompt: Messages.passwordPrompt + ": ")
      guard case .typed = typed else { throw .invalidCredentials }
      checked = try login.check(
        username: username, password: try acceptablePassword(typed, username: username),
        exactName: true, systemName: systemName)
    }
    var proof: VerificationProof?
    if checked.entry.sealedSecret != nil {
      let typed: String
      do {
        typed = try SecondFactorGate.readCode(
          FieldReader(console: login.env.console, stage: .login))
      } catch {
        if case .storage = error { throw error }
        try login.fail(
          username: username, key: checked.entry.usernameKey, detail: Messages.detailNoCode,
          error: .invalidVerificationCode)
      }
      proof = try login.checkCode(typed, checked)
    }
    _ = try login.logIn(checked, proof: proof, asksNewPassword: false)
    if case .recovery = proof {
      conversation.info(
        Messages.recoveryCodeAccepted(left: max(checked.entry.recoveryCodeHashes.count - 1, 0)))
    }
    return .success
  }

  /// account from the cache: the entry's state and groups as the server last gave them.
  static func checkAccountOffline(
    _ login: OfflineLogin, request: PamModuleRequest, conversation: any PamConversation
  ) throws(AccountsError) -> PamVerdict {
    let entry = try login.entry(
      of: request.username, exactName: true,
      systemName: SystemIdentity.of(request.username, names: login.env.nameService))
    if entry.isDisabled || entry.expiresAt.map({ $0 <= login.env.now() }) == true {
      conversation.error(Messages.pamAccountExpired)
      return .accountExpired
    }
    if !request.allowedGroups.isEmpty, Set(entry.groups).isDisjoint(with: request.allowedGroups) {
      conversation.error(Messages.pamNotInAllowedGroups)
      return .permissionDenied
    }
    return .success
  }

  /// A session stage from the cache: nothing to record on the server; the person must be one
  /// the cache answers for.
  static func recordSessionOffline(_ login: OfflineLogin, request: PamModuleRequest)
    throws(AccountsError) -> PamVerdict
  {
    _ = try login.entry(
      of: request.username, exactName: true,
      systemName: SystemIdentity.of(request.username, names: login.env.nameService))
    return .success
  }
}
