import AccountsCrypto
import FoundationEssentials

/// Logins from this host's login cache while the server cannot be reached: the same questions,
/// answers and lockout rule as online, checked against the entry the person's last online
/// login here wrote (`LoginCacheRefresh`), the events queued for the server.
///
/// A person the cache cannot answer for (never seen here, an entry older than the cache's
/// days, a new password required) is told the server cannot be reached, never that the
/// password is wrong.
public struct OfflineLogin {
  let env: AccountsEnvironment
  let cache: any LoginCache

  /// The seconds a host with a login cache waits for the server to answer a connection when
  /// neither the URI's `connect_timeout` nor PGCONNECT_TIMEOUT says.
  public static let connectTimeout = 3

  /// How long a failure to connect spares the next logins the wait (SSSD's `offline_timeout`).
  static let retryAfter: TimeInterval = 30

  /// A user name and password the cache took.
  struct Checked {
    /// The person's entry.
    var entry: CachedLogin
    /// The user name as typed.
    var typedName: String
    /// The password (NFKC): it opens the sealed secret.
    var password: String
    /// The credential drawn from it.
    var credential: OfflineCredential
  }

  /// Runs `online`, or `offline` when the server cannot be reached and this host keeps a
  /// login cache.
  ///
  /// Within `retryAfter` seconds of a failure to connect the server is not tried at all.
  /// `online` must fail to connect before it asks anything.
  static func orFromCache<T>(
    _ env: AccountsEnvironment, online: () throws(AccountsError) -> T,
    offline: (OfflineLogin) throws(AccountsError) -> T
  ) throws(AccountsError) -> T {
    guard let cache = LoginCacheRefresh.cache(env) else { return try online() }
    let login = OfflineLogin(env: env, cache: cache)
    if let until = try? cache.serverAwayUntil(), until > env.now() {
      return try offline(login)
    }
    let result: T
    do {
      result = try online()
    } catch {
      guard case .storage(.cannotConnect) = error else {
        OfflineEventDelivery.deliver(env)
        throw error
      }
      try? cache.markServerAway(until: env.now().addingTimeInterval(retryAfter))
      return try offline(login)
    }
    OfflineEventDelivery.deliver(env)
    return result
  }

  /// Reads the user name (refusing a locked one at once) and the password, as `Credentials.ask`
  /// does, and checks them against the cache.
  func ask(_ reader: FieldReader, username: String?) throws(AccountsError) -> Checked {
    let typed = try Credentials.read(
      reader, username: username, passwordPrompt: Messages.passwordPrompt
    ) { name, key throws(AccountsError) in try refuseIfLocked(username: name, key: key) }
    return try check(username: typed.username, password: typed.password)
  }

  /// Refuses `key` when its local tally is locked, the refusal queued.
  func refuseIfLocked(username: String, key: String) throws(AccountsError) {
    guard let until = try cache.tally(key: key).lock(at: env.now()) else { return }
    try cache.queue(
      AuditRecord(
        .loginFailure, at: env.now(), username: username, usernameKey: key,
        detail: Messages.detail(Messages.detailLocked, origin: env.origin), host: env.writingHost))
    throw env.lockedError(until: until)
  }

  /// Checks `password` (NFKC) for `username` against its entry; a wrong one is counted here.
  func check(
    username: String, password: String, exactName: Bool = false,
    systemName: SystemIdentity = .notAsked
  ) throws(AccountsError) -> Checked {
    let entry = try entry(of: username, exactName: exactName, systemName: systemName)
    let key = entry.usernameKey
    try refuseIfLocked(username: username, key: key)
    let credential = try hashing { () throws(CryptoError) in
      try OfflineCredential(
        password: password, salt: entry.salt, iterations: entry.iterations,
        meter: env.hasher.meter)
    }
    let right = try hashing { () throws(CryptoError) in
      try ConstantTime.equals(credential.verifier, entry.verifier)
    }
    guard right else {
      try fail(username: username, key: key, detail: Messages.detailInvalidCredentials)
    }
    if entry.isDisabled {
      try fail(username: username, key: key, detail: Messages.detailDisabled)
    }
    if let expiry = entry.expiresAt, expiry <= env.now() {
      try fail(username: username, key: key, detail: Messages.detailExpired)
    }
    return Checked(entry: entry, typedName: username, password: password, credential: credential)
  }

  /// The entry of `username` (exactly that name when `exactName`), younger than the cache's
  /// days, and allowed by NSS; else the server's absence is what the person is told.
  func entry(of username: String, exactName: Bool, systemName: SystemIdentity)
    throws(AccountsError) -> CachedLogin
  {
    guard let key = try UsernameRules.key(for: username),
      let entry = try cache.entry(key: key), !exactName || entry.username == username,
      systemName.allows(uid: entry.uid),
      env.now().timeIntervalSince(entry.refreshedAt) <= Double(try cache.status().days) * 86_400
    else { throw .serverAway(location: env.storeLocation) }
    return entry
  }

  /// Asks the verification code when the entry keeps a second factor, and checks it.
  func askCode(_ checked: Checked, stage: InputStage) throws(AccountsError) -> VerificationProof? {
    guard checked.entry.sealedSecret != nil else { return nil }
    let typed = try SecondFactorGate.readCode(FieldReader(console: env.console, stage: stage))
    return try checkCode(typed, checked)
  }

  /// Checks a TOTP code against the sealed secret, or a recovery code against the kept hashes.
  func checkCode(_ typed: String, _ checked: Checked) throws(AccountsError) -> VerificationProof {
    let entry = checked.entry
    if let hash = try hashing({ () throws(CryptoError) in
      try SecondFactor.recoveryCodeHash(typed)
    }) {
      if entry.recoveryCodeHashes.contains(hash) { return .recovery(hash: hash) }
      try wrongCode(checked)
    }
    guard let sealed = entry.sealedSecret,
      let secret = try? AESGCM.open(
        sealed, key: checked.credential.sealingKey,
        associatedData: LoginCacheRefresh.associatedData(entry.usernameKey))
    else { throw .serverAway(location: env.storeLocation) }
    let result = try hashing { () throws(CryptoError) in
      try SecondFactor.check(
        typed, secret: secret, at: env.now(), lastAcceptedStep: entry.lastStep ?? 0)
    }
    switch result {
    case .accepted(let step): return .totp(step: step)
    case .replayed:
      try fail(
        username: checked.typedName, key: entry.usernameKey, detail: Messages.detailReplayedCode,
        error: .replayedVerificationCode)
    case .wrong, .clockOff: try wrongCode(checked)
    }
  }

  private func wrongCode(_ checked: Checked) throws(AccountsError) -> Never {
    try fail(
      username: checked.typedName, key: checked.entry.usernameKey,
      detail: Messages.detailWrongCode, error: .invalidVerificationCode)
  }

  /// Records the login here and returns Home; a proof used meanwhile is a replay.
  ///
  /// `asksNewPassword` refuses an entry that must choose a new password: that needs the
  /// server.
  func logIn(_ checked: Checked, proof: VerificationProof?, asksNewPassword: Bool = true)
    throws(AccountsError) -> HomeScreen
  {
    let entry = checked.entry
    if asksNewPassword && entry.mustChangePassword {
      throw .serverAway(location: env.storeLocation)
    }
    let now = env.now()
    let tally = try cache.tally(key: entry.usernameKey)
    var events = [
      AuditRecord(
        .loginSuccess, at: now, username: checked.typedName, usernameKey: entry.usernameKey,
        detail: Messages.detail(Messages.detailFactors(proof), origin: env.origin),
        host: env.writingHost)
    ]
    if case .recovery = proof {
      events.append(
        AuditRecord(
          .recoveryCodeUsed, at: now, username: entry.username, usernameKey: entry.usernameKey,
          detail: Messages.detailCodesLeft(max(entry.recoveryCodeHashes.count - 1, 0)),
          host: env.writingHost))
    }
    guard try cache.recordSuccess(key: entry.usernameKey, proof: proof, events: events) else {
      try fail(
        username: checked.typedName, key: entry.usernameKey, detail: Messages.detailReplayedCode,
        error: .replayedVerificationCode)
    }
    return HomeScreen(
      fullName: entry.fullName, previousLogin: entry.refreshedAt,
      failuresSince: tally.failures)
  }

  /// Says the second step passed, as `SecondFactorGate.acknowledge` does online.
  func acknowledge(_ proof: VerificationProof, _ checked: Checked) {
    env.console.message(Messages.successfullyAuthorized)
    var left = checked.entry.recoveryCodeHashes.count
    if case .recovery = proof {
      left -= 1
      env.console.message(Messages.recoveryCodeAccepted(left: left))
    }
    if left <= 2 { env.console.message(Messages.fewRecoveryCodesLeft(left)) }
  }

  /// Counts a failure here by the lockout policy and throws what the person is told, as
  /// `Authenticator.fail` does online.
  func fail(
    username: String, key: String, detail: String, error: AccountsError = .invalidCredentials
  ) throws(AccountsError) -> Never {
    let outcome = try cache.recordFailure(
      LoginFailureRecord(
        username: username, usernameKey: key, now: env.now(), policy: env.lockout,
        detail: Messages.detail(detail, origin: env.origin),
        refusalDetail: Messages.detail(Messages.detailLocked, origin: env.origin),
        lockoutDetail: Messages.detailLockedUntil(LoginFailureRecord.untilMark)))
    switch outcome {
    case .counted:
      throw error
    case .lockedNow(let until):
      for line in error.lines { env.console.message(line) }
      throw env.lockedError(until: until)
    case .alreadyLocked(let until):
      throw env.lockedError(until: until)
    }
  }
}
