import AccountsCrypto
import FoundationEssentials

/// Checks a user name and password: the one place that decides a login, for `login`, the bare
/// flow, `verify` and `passwd` alike.
///
/// Whatever was wrong (unknown name, wrong password, a disabled or expired account, a damaged
/// stored hash,
/// a name that cannot exist) the answer is the same and so is the work: as many PBKDF2
/// iterations as the store's current setting for new hashes or the owner's stored hash costs,
/// whichever is more (`workTarget`). A locked name is refused without checking the password,
/// and refused again after a right one when it was locked meanwhile.
/// Failures are counted per user name (known or not) and earn locks by `LockoutPolicy`.
struct Authenticator {
  let env: AccountsEnvironment
  let store: any AccountRepository

  /// A user name and password that were checked and are right; nothing recorded yet.
  struct Verified {
    /// The account, as read before the check.
    var account: Account
    /// The user name as typed.
    var typedName: String
    /// The password (NFKC), kept to rehash it or to compare a new one with.
    var password: String
    /// True when the stored hash is weaker than the policy's.
    var needsRehash: Bool
    /// The account's second factor as read with it, before the check.
    var secondFactor: StoredSecondFactor?
  }

  /// Refuses at once, logging the refused attempt, when `key` is locked.
  ///
  /// Used right after the user name is typed, so that nobody types a password in vain (unknown
  /// names lock the same way, so this tells nothing about which names exist). Returns what it
  /// read (or `known`, read before), for `check`.
  @discardableResult
  func refuseIfLocked(username: String, key: String, facts known: LoginFacts? = nil)
    throws(AccountsError) -> LoginFacts
  {
    let facts: LoginFacts
    if let known { facts = known } else { facts = try store.loginFacts(key: key) }
    if let until = try LoginRecorder.recordRefusalIfLocked(
      store, username: username, usernameKey: key, at: env.now(), tally: facts.tally)
    {
      throw env.lockedError(until: until)
    }
    return facts
  }

  /// Checks `password` (already NFKC-normalized) for `username`; counts and logs a failure.
  ///
  /// With `exactName`, an account whose stored name is not `username` byte for byte (only the
  /// same key) is treated as no account at all (`pam-auth`), and so is one that `systemName`
  /// (what NSS said of the name, for the PAM paths) does not allow: the same answer and cost. `facts` are what was read for this
  /// name when it was typed (read now when nil). With `straightToLogIn`, the caller records the
  /// login next unless a question follows (a second factor, a required new password): then the
  /// lock is read again in the login's own transaction instead of here.
  func check(
    username: String, password: String, exactName: Bool = false,
    systemName: SystemIdentity = .notAsked, facts: LoginFacts? = nil,
    straightToLogIn: Bool = false
  ) throws(AccountsError) -> Verified {
    // A name that breaks the naming rules cannot exist: nothing is looked up or written for
    // it (nobody can fill the database with junk names), but it costs the same work.
    let key = try UsernameRules.key(for: username)
    let read: LoginFacts
    if let facts { read = facts } else { read = try store.loginFacts(key: key) }
    let account = read.account.flatMap {
      (exactName && !$0.isNamed(exactly: username)) || !systemName.allows($0) ? nil : $0
    }
    let (tally, reference) = (read.tally, read.referenceHash)
    let workTarget = Self.workTarget(referenceHash: reference, setting: env.hasher.iterations)
    guard let key else {
      _ = try hashing { () throws(CryptoError) in
        try env.hasher.verifyAgainstDummy(password: password, iterations: workTarget)
      }
      throw .invalidCredentials
    }
    if tally.lock(at: env.now()) != nil {
      try fail(username: username, key: key, detail: Messages.detailInvalidCredentials)
    }
    // A host role on a PostgreSQL store reads each hash sealed: the hash is then recomputed
    // from its masked form and its digest compared, and the whole hash, now known, is what the
    // store's steps take as proof that the password was checked.
    let sealed = account.flatMap { SealedPasswordHash(parsing: $0.passwordHash) }
    let readable = account.map { sealed?.masked ?? $0.passwordHash }
    let stored = readable.flatMap(EncodedPasswordHash.init(parsing:))
    let imported = readable.flatMap { stored == nil ? Self.importedHash($0) : nil }
    let verification = try hashing { () throws(CryptoError) -> PasswordVerification in
      let withinLimit = password.unicodeScalars.count <= PasswordRules.maximumLength
      if let stored, withinLimit {
        return try env.hasher.verify(
          password: password, against: stored, workTarget: workTarget, sealed: sealed)
      }
      if let imported, withinLimit {
        // A crypt(3) hash brought in by `user import`: checked by libxcrypt, then the usual
        // PBKDF2 work as well, so that it costs no less than an unknown name; replaced by a
        // PBKDF2 hash at this first successful login.
        let typed = Array(password.utf8)
        var whole: String?
        let valid: Bool
        if let sealed {
          whole = try CryptHash.verify(password: typed, sealed: sealed)
          valid = whole != nil
        } else {
          valid = try CryptHash.verify(password: typed, hash: imported)
        }
        _ = try env.hasher.verifyAgainstDummy(password: password, iterations: workTarget)
        return PasswordVerification(isValid: valid, needsRehash: true, whole: whole)
      }
      return try env.hasher.verifyAgainstDummy(password: password, iterations: workTarget)
    }
    guard verification.isValid, var account else {
      let damaged = account != nil && stored == nil && imported == nil
      LoginCacheRefresh.afterFailure(env, key: key, password: password, cost: workTarget)
      try fail(
        username: username, key: key,
        detail: damaged ? ImportedHash.damageDetail(readable) : Messages.detailInvalidCredentials)
    }
    if let whole = verification.whole { account.passwordHash = whole }
    // The lock is read again now that the password is known to be right: logins that started
    // together may have locked the name while this one hashed, and whatever comes next (the
    // code question above all) would tell that this password is the right one. A login with
    // nothing more to ask reads it in its own transaction.
    let factor = read.secondFactor.flatMap { $0.accountID == account.id ? $0 : nil }
    if !straightToLogIn || factor != nil || account.mustChangePassword {
      if let until = try LoginRecorder.recordRefusalIfLocked(
        store, username: username, usernameKey: key, at: env.now())
      {
        throw env.lockedError(until: until)
      }
    }
    if account.isDisabled {
      LoginCacheRefresh.afterFailure(
        env, key: key, password: password, cost: workTarget, always: true)
      try fail(username: username, key: key, detail: Messages.detailDisabled)
    }
    // An expired account is refused as a disabled one is: same answer, same cost, counted.
    if account.isExpired(at: env.now()) {
      LoginCacheRefresh.afterFailure(
        env, key: key, password: password, cost: workTarget, always: true)
      try fail(username: username, key: key, detail: Messages.detailExpired)
    }
    return Verified(
      account: account, typedName: username, password: password,
      needsRehash: verification.needsRehash, secondFactor: factor)
  }

  /// Records a successful login in one transaction (the tally cleared, the last login stamped,
  /// a weak hash replaced, a required new password stored) and returns Home.
  ///
  /// If another process locked the name, disabled or removed the account meanwhile, or it
  /// expired, the login is refused instead.
  func logIn(
    _ verified: Verified, newPassword: String? = nil,
    completion: LoginCompletion = LoginCompletion()
  ) throws(AccountsError) -> HomeScreen {
    // Hashed before the transaction, so that no write waits on PBKDF2. A stronger hash for a
    // weak one is a bonus: failing to make it never fails the login.
    let fresh: EncodedPasswordHash?
    if let newPassword {
      fresh = try hashing { () throws(CryptoError) in try env.hasher.hash(password: newPassword) }
    } else {
      fresh = verified.needsRehash ? try? env.hasher.hash(password: verified.password) : nil
    }
    var completion = completion
    completion.keepsRecoveryCodes = env.loginCacheFiles != nil
    let outcome: LoginSuccessOutcome
    do {
      outcome = try LoginRecorder.recordSuccess(
        store, username: verified.typedName, usernameKey: verified.account.usernameKey,
        at: env.now(), expected: verified.account, newHash: fresh?.description,
        requiredChange: newPassword != nil, completion: completion)
    } catch  where newPassword == nil && fresh != nil {
      // The stronger hash could not be written: the login is recorded without it.
      outcome = try LoginRecorder.recordSuccess(
        store, username: verified.typedName, usernameKey: verified.account.usernameKey,
        at: env.now(), expected: verified.account, completion: completion)
    }
    switch outcome {
    case .loggedIn(let home):
      LoginCacheRefresh.afterLogin(
        env, store: store, verified: verified, password: newPassword ?? verified.password,
        proof: completion.proof, learned: home.learnedSecondFactor,
        learnedCodes: home.learnedRecoveryCodes)
      return home
    case .locked(let until): throw env.lockedError(until: until)
    case .gone: throw .invalidCredentials
    case .codeAlreadyUsed:
      try fail(
        username: verified.typedName, key: verified.account.usernameKey,
        detail: Messages.detailReplayedCode, error: .replayedVerificationCode)
    case .codeWrong:
      try fail(
        username: verified.typedName, key: verified.account.usernameKey,
        detail: Messages.detailWrongCode, error: .invalidVerificationCode)
    }
  }

  /// Stores `newPassword` for a checked account (`passwd`): the hash replaced, must-change
  /// cleared, the name's tally cleared, one event, every session of the account ended but the
  /// one whose token hashes to `keeping`; refused if the password was changed by another process
  /// meanwhile (not if a concurrent login only rehashed it).
  ///
  /// The event's detail is `detail`: where a change through PAM came from.
  func changePassword(
    _ verified: Verified, to newPassword: String, proof: VerificationProof? = nil,
    keeping: [UInt8]? = nil, detail: String? = nil
  ) throws(AccountsError) {
    let fresh = try hashing { () throws(CryptoError) in
      try env.hasher.hash(password: newPassword)
    }
    let outcome = try store.changeOwnPassword(
      PasswordChangeRecord(
        expected: verified.account, now: env.now(), newHash: fresh.description, proof: proof,
        keeping: keeping, detail: detail))
    switch outcome {
    case .changed: return
    case .codeAlreadyUsed:
      try fail(
        username: verified.typedName, key: verified.account.usernameKey,
        detail: Messages.detailReplayedCode, error: .replayedVerificationCode)
    case .codeWrong:
      try fail(
        username: verified.typedName, key: verified.account.usernameKey,
        detail: Messages.detailWrongCode, error: .invalidVerificationCode)
    case .gone: throw .invalidCredentials
    }
  }

  /// `hash` when it is a crypt(3) hash of a kept scheme (an imported account's), well formed
  /// and within its scheme's cost ceiling.
  static func importedHash(_ hash: String) -> String? { ImportedHash.usableCrypt(hash) }

  /// The work a failed check must cost: the store's current setting (the count new hashes are
  /// made with), or the owner's stored count when that is higher, or Django's current count
  /// when there is no usable stored hash.
  ///
  /// The setting raises the cost and never lowers it: a lowered `ACCOUNTS_PBKDF2_ITERATIONS` in
  /// the caller's environment cannot make a failure cheaper than the owner's hash, and an
  /// unknown name costs what an account made under today's setting costs.
  static func workTarget(referenceHash: String?, setting: Int) -> Int {
    let stored =
      referenceHash.map(SealedPasswordHash.readable).flatMap(EncodedPasswordHash.init(parsing:))?
      .iterations
      ?? PasswordHasher.defaultIterations
    return min(max(stored, setting), PasswordHasher.maximumIterations)
  }

  /// Counts a failure of `key` (the policy's arithmetic), logs it with `detail`, and throws
  /// what the person is told: `error` while counting, the lock once it locks.
  func fail(
    username: String, key: String, detail: String,
    error: AccountsError = .invalidCredentials
  ) throws(AccountsError) -> Never {
    let outcome = try LoginRecorder.recordFailure(
      store, username: username, usernameKey: key, at: env.now(), policy: env.lockout,
      detail: detail, origin: env.origin)
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
