import AccountsCrypto
import FoundationEssentials

/// Keeps this host's login cache in step with what the server answers: each successful online
/// login writes the person's entry, and a failure the server gives a password the entry
/// still takes (a password changed there) or an account it no longer lets in removes it.
///
/// Best effort: the server decided, and a cache that cannot be written (missing, not root's,
/// not private, damaged) never turns a login into a failure or a failure into anything else.
enum LoginCacheRefresh {
  /// The cache, when this host keeps one and this process may open it.
  static func cache(_ env: AccountsEnvironment) -> (any LoginCache)? {
    guard let files = env.loginCacheFiles, let cache = (try? files.open()) ?? nil else {
      return nil
    }
    cache.writingHost = env.writingHost
    return cache
  }

  /// Writes the entry of a login the server just recorded: `password` is the one now valid
  /// (the new one when a change was required), `proof` the second factor it accepted, `learned`
  /// the secret and step a server that keeps the second factors gave back with a code it took,
  /// `learnedCodes` the unused recovery codes' hashes it gave back with a second step it took.
  ///
  /// Where the server keeps the secrets, the host learns one only from a login with password and
  /// code: after another login (a recovery code) an entry whose secret still holds is kept as
  /// it was, and one whose secret cannot be sealed again is removed.
  static func afterLogin(
    _ env: AccountsEnvironment, store: any AccountRepository, verified: Authenticator.Verified,
    password: String, proof: VerificationProof?, learned: LearnedSecondFactor?,
    learnedCodes: [[UInt8]]? = nil
  ) {
    guard let cache = cache(env) else { return }
    let account = verified.account
    do {
      let iterations = Authenticator.workTarget(
        referenceHash: account.passwordHash, setting: env.hasher.iterations)
      // The entry's verifier and sealed secret still hold while the server's hash, the second
      // factor and the cost are those they were made from (the password is the one the server
      // just took): kept, without a second PBKDF2 of the same password.
      let factor = verified.secondFactor
      let still = ((try? cache.entry(key: account.usernameKey)) ?? nil).flatMap { entry in
        let same = try? ConstantTime.equals(
          entry.mark, mark(account, factor: factor, iterations: iterations, salt: entry.salt))
        return same == true && entry.iterations == iterations
          && (entry.sealedSecret != nil) == (factor != nil) ? entry : nil
      }
      // A new verifier gets a new salt.
      let salt =
        try still?.salt ?? hashing { () throws(CryptoError) in try OfflineCredential.makeSalt() }
      let entryMark = try mark(account, factor: factor, iterations: iterations, salt: salt)
      var verifier = still?.verifier ?? []
      var sealed = still?.sealedSecret
      var lastStep: UInt64?
      var codes: [[UInt8]] = []
      if still == nil {
        let credential = try hashing { () throws(CryptoError) in
          try OfflineCredential(
            password: password, salt: salt, iterations: iterations, meter: env.hasher.meter)
        }
        verifier = credential.verifier
        if let factor = verified.secondFactor {
          let secret: [UInt8]
          if store.keepsSecondFactorsOnServer {
            guard let learned else {
              _ = try? cache.forget(key: account.usernameKey)
              return
            }
            secret = learned.secret
          } else {
            secret = try SecondFactorGate.unseal(factor, keys: env.keys)
          }
          sealed = try hashing { () throws(CryptoError) in
            try AESGCM.seal(
              secret, key: credential.sealingKey,
              associatedData: associatedData(account.usernameKey))
          }
        }
      }
      if let factor = verified.secondFactor {
        lastStep = max(factor.lastStep, learned?.step ?? 0)
        if case .totp(let step) = proof { lastStep = max(step, factor.lastStep) }
        // A host role reads no recovery code's hash: the server hands them to the login.
        codes =
          learnedCodes
          ?? (try? store.read { reader throws(AccountsError) in
            try reader.unusedRecoveryCodeHashes(accountID: account.id)
          }) ?? []
      }
      let groups =
        (try? store.read { reader throws(AccountsError) in
          try reader.groups(accountID: account.id)
        }) ?? []
      try cache.refresh(
        CachedLogin(
          accountID: account.id, username: account.username, usernameKey: account.usernameKey,
          fullName: account.fullName, uid: account.uid, groups: groups,
          isDisabled: account.isDisabled, expiresAt: account.expiresAt,
          mustChangePassword: account.mustChangePassword && password == verified.password,
          iterations: iterations, salt: salt,
          verifier: verifier, mark: entryMark, sealedSecret: sealed, lastStep: lastStep,
          recoveryCodeHashes: codes, refreshedAt: env.now()))
    } catch {
      // The login stands; the entry stays as it was.
    }
  }

  /// After the server refused `password` for `key`: the entry goes when the password is the
  /// one it keeps (changed on the server since), or whatever the password when `always` (the
  /// account is disabled or expired there).
  ///
  /// On a host that keeps a cache, every refusal costs one derivation of the password here,
  /// entry or none, and whether or not it is needed: at `cost` rounds (what an entry made now
  /// would take) under a fixed salt when there is no entry. Otherwise a wrong password of a
  /// person cached here would cost twice what anybody else's costs, and a right password of a
  /// disabled account less than a wrong one.
  static func afterFailure(
    _ env: AccountsEnvironment, key: String, password: String, cost: Int, always: Bool = false
  ) {
    guard let cache = cache(env) else { return }
    let entry = (try? cache.entry(key: key)) ?? nil
    let credential = try? OfflineCredential(
      password: password, salt: entry?.salt ?? unusedSalt,
      iterations: entry?.iterations ?? cost, meter: env.hasher.meter)
    guard let entry else { return }
    if !always {
      guard let credential, (try? ConstantTime.equals(credential.verifier, entry.verifier)) == true
      else { return }
    }
    _ = try? cache.forget(key: key)
  }

  /// The salt a refusal without an entry derives under (its result is thrown away).
  private static let unusedSalt = [UInt8](repeating: 0, count: OfflineCredential.saltByteCount)

  /// The entry's mark, HMAC-SHA256 under the entry's salt.
  ///
  /// Over the server's password hash (as this host reads it), when the second factor was turned
  /// on, and the verifier's cost. Neither the hash nor its digest: without the hash itself the
  /// mark checks nothing.
  static func mark(
    _ account: Account, factor: StoredSecondFactor?, iterations: Int, salt: [UInt8]
  ) throws(AccountsError) -> [UInt8] {
    let factorTime = factor.map { Timestamp.string(from: $0.enabledAt) } ?? "-"
    let text = "accounts offline mark\n\(account.passwordHash)\n\(factorTime)\n\(iterations)"
    return try hashing { () throws(CryptoError) in
      try HMAC.sha256(key: salt, message: Array(text.utf8))
    }
  }

  /// What a sealed secret is bound to: the person it belongs to.
  static func associatedData(_ usernameKey: String) -> [UInt8] {
    Array("accounts offline totp \(usernameKey)".utf8)
  }
}
