import AccountsCrypto
import AccountsStore
import Foundation

/// Checks a user name and password: the one place that decides a login.
///
/// Whatever was wrong (unknown name, wrong password, a damaged stored hash, a name that cannot
/// exist) the answer is the same and so is the work: as many PBKDF2 iterations as the stored
/// hash costs, whatever `ACCOUNTS_PBKDF2_ITERATIONS` says (it sets the cost of new hashes only).
/// A locked name is refused without checking the password.
struct Authenticator {
  let env: AccountsEnvironment
  let store: AccountStore

  /// Refuses at once, logging the refused attempt, when `key` is locked; used right after the
  /// user name is typed, so that nobody types a password in vain (unknown names lock the same
  /// way, so this tells nothing about which names exist).
  func refuseIfLocked(username: String, key: String) throws(AccountsError) {
    let record = try storing { () throws(StoreError) in try store.loginRecord(usernameKey: key) }
    guard record.tally.lock(at: env.now()) != nil else { return }
    let until = try storing { () throws(StoreError) in
      try store.recordRefusalIfLocked(username: username, usernameKey: key, at: env.now())
    }
    if let until { throw LoginFlow.lockedError(env, until: until) }
  }

  /// Logs `username` in with `password` (already NFKC-normalized); returns Home.
  func logIn(username: String, password: String) throws(AccountsError) -> HomeScreen {
    // A name that breaks the naming rules cannot exist: nothing is looked up or written for
    // it (nobody can fill the database with junk names), but it costs the same work.
    let key = UsernameRules.key(for: username)
    let record = try storing { () throws(StoreError) in
      try store.loginRecord(usernameKey: key ?? "")
    }
    let workTarget = Self.workTarget(referenceHash: record.referenceHash)
    guard let key else {
      _ = try hashing { () throws(CryptoError) in
        try env.hasher.verifyAgainstDummy(password: password, iterations: workTarget)
      }
      throw .invalidCredentials
    }
    if record.tally.lock(at: env.now()) != nil {
      try fail(username: username, key: key, detail: Messages.detailInvalidCredentials)
    }
    let stored = record.user.flatMap { EncodedPasswordHash(parsing: $0.passwordHash) }
    let verification = try hashing { () throws(CryptoError) -> PasswordVerification in
      if let stored, password.unicodeScalars.count <= PasswordRules.maximumLength {
        return try env.hasher.verify(password: password, against: stored, workTarget: workTarget)
      }
      return try env.hasher.verifyAgainstDummy(password: password, iterations: workTarget)
    }
    guard verification.isValid, let user = record.user else {
      let damaged = record.user != nil && stored == nil
      try fail(
        username: username, key: key,
        detail: damaged ? Messages.detailDamagedHash : Messages.detailInvalidCredentials)
    }
    let outcome = try storing { () throws(StoreError) in
      try store.recordLoginSuccess(username: username, usernameKey: key, at: env.now())
    }
    switch outcome {
    case .locked(let until):
      throw LoginFlow.lockedError(env, until: until)
    case .loggedIn(let previousLogin, let failuresSince):
      if verification.needsRehash {
        // A stronger hash is a bonus: failing to write it never fails the login.
        if let fresh = try? env.hasher.hash(password: password) {
          try? store.updatePasswordHash(usernameKey: key, to: fresh.description, at: env.now())
        }
      }
      return HomeScreen(
        fullName: user.fullName, previousLogin: previousLogin, failuresSince: failuresSince)
    }
  }

  /// The work a failed check must cost: the stored hash's iteration count, or Django's current
  /// count when there is no usable stored hash.
  static func workTarget(referenceHash: String?) -> Int {
    referenceHash.flatMap(EncodedPasswordHash.init(parsing:))?.iterations
      ?? PasswordHasher.defaultIterations
  }

  private func fail(username: String, key: String, detail: String) throws(AccountsError) -> Never {
    let outcome = try storing { () throws(StoreError) in
      try store.recordLoginFailure(
        username: username, usernameKey: key, at: env.now(), policy: env.lockout, detail: detail)
    }
    switch outcome {
    case .counted:
      throw .invalidCredentials
    case .lockedNow(let until):
      env.console.message(Messages.invalidCredentials)
      throw LoginFlow.lockedError(env, until: until)
    case .alreadyLocked(let until):
      throw LoginFlow.lockedError(env, until: until)
    }
  }
}
