import AccountsCrypto
import Foundation

/// Checks a user name and password: the one place that decides a login, for `login`, the bare
/// flow, `verify` and `passwd` alike.
///
/// Whatever was wrong (unknown name, wrong password, a disabled account, a damaged stored hash,
/// a name that cannot exist) the answer is the same and so is the work: as many PBKDF2
/// iterations as the owner's stored hash costs, whatever `ACCOUNTS_PBKDF2_ITERATIONS` says (it
/// sets the cost of new hashes only). A locked name is refused without checking the password.
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
  }

  /// Refuses at once, logging the refused attempt, when `key` is locked; used right after the
  /// user name is typed, so that nobody types a password in vain (unknown names lock the same
  /// way, so this tells nothing about which names exist).
  func refuseIfLocked(username: String, key: String) throws(AccountsError) {
    let tally = try store.read { reader throws(AccountsError) in try reader.tally(key: key) }
    guard tally.lock(at: env.now()) != nil else { return }
    let until = try store.write { writer throws(AccountsError) -> Date? in
      try refusal(writer, username: username, key: key)
    }
    if let until { throw env.lockedError(until: until) }
  }

  /// Checks `password` (already NFKC-normalized) for `username`; counts and logs a failure.
  func check(username: String, password: String) throws(AccountsError) -> Verified {
    // A name that breaks the naming rules cannot exist: nothing is looked up or written for
    // it (nobody can fill the database with junk names), but it costs the same work.
    let key = UsernameRules.key(for: username)
    let (account, tally, reference) = try store.read {
      reader throws(AccountsError) -> (Account?, ThrottleState, String?) in
      guard let key else { return (nil, .clear, try reader.owner()?.passwordHash) }
      let account = try reader.account(key: key)
      let reference = account?.isOwner == true ? account : try reader.owner()
      return (account, try reader.tally(key: key), reference?.passwordHash)
    }
    let workTarget = Self.workTarget(referenceHash: reference)
    guard let key else {
      _ = try hashing { () throws(CryptoError) in
        try env.hasher.verifyAgainstDummy(password: password, iterations: workTarget)
      }
      throw .invalidCredentials
    }
    if tally.lock(at: env.now()) != nil {
      try fail(username: username, key: key, detail: Messages.detailInvalidCredentials)
    }
    let stored = account.flatMap { EncodedPasswordHash(parsing: $0.passwordHash) }
    let verification = try hashing { () throws(CryptoError) -> PasswordVerification in
      if let stored, password.unicodeScalars.count <= PasswordRules.maximumLength {
        return try env.hasher.verify(password: password, against: stored, workTarget: workTarget)
      }
      return try env.hasher.verifyAgainstDummy(password: password, iterations: workTarget)
    }
    guard verification.isValid, let account else {
      let damaged = account != nil && stored == nil
      try fail(
        username: username, key: key,
        detail: damaged ? Messages.detailDamagedHash : Messages.detailInvalidCredentials)
    }
    if account.isDisabled {
      try fail(username: username, key: key, detail: Messages.detailDisabled)
    }
    return Verified(
      account: account, typedName: username, password: password,
      needsRehash: verification.needsRehash)
  }

  /// Records a successful login in one transaction (the tally cleared, the last login stamped,
  /// a weak hash replaced, a required new password stored) and returns Home.
  ///
  /// If another process locked the name, disabled or removed the account meanwhile, the login
  /// is refused instead.
  func logIn(_ verified: Verified, newPassword: String? = nil) throws(AccountsError)
    -> HomeScreen
  {
    let secret = newPassword ?? (verified.needsRehash ? verified.password : nil)
    // Hashed before the transaction, so that no write waits on PBKDF2.
    let fresh = try secret.map { password throws(AccountsError) in
      try hashing { () throws(CryptoError) in try env.hasher.hash(password: password) }
    }
    let key = verified.account.usernameKey
    let name = verified.typedName
    enum Outcome {
      case home(HomeScreen)
      case locked(Date)
      case gone
    }
    let outcome = try store.write { writer throws(AccountsError) -> Outcome in
      let now = env.now()
      if let until = try refusal(writer, username: name, key: key) { return .locked(until) }
      guard var account = try writer.account(key: key), account.id == verified.account.id,
        !account.isDisabled
      else {
        try writer.append(
          AuditRecord(
            .loginFailure, at: now, username: name, usernameKey: key,
            detail: Messages.detailInvalidCredentials))
        return .gone
      }
      let failuresSince = try writer.eventCount(
        key: key, kind: .loginFailure,
        afterLatestOf: [.loginSuccess, .activation, .accountAdded])
      let previous = account.lastLoginAt
      account.lastLoginAt = now
      if let fresh, account.passwordHash == verified.account.passwordHash {
        account.passwordHash = fresh.description
        account.updatedAt = now
      }
      if newPassword != nil {
        account.mustChangePassword = false
        try writer.append(
          AuditRecord(
            .passwordChanged, at: now, username: account.username, usernameKey: key,
            detail: Messages.detailRequiredAtLogin))
      }
      try writer.update(account)
      try writer.setTally(nil, key: key, at: now)
      try writer.append(AuditRecord(.loginSuccess, at: now, username: name, usernameKey: key))
      return .home(
        HomeScreen(
          fullName: account.fullName, previousLogin: previous, failuresSince: failuresSince))
    }
    switch outcome {
    case .home(let home): return home
    case .locked(let until): throw env.lockedError(until: until)
    case .gone: throw .invalidCredentials
    }
  }

  /// Stores `newPassword` for a checked account (`passwd`): the hash replaced, must-change
  /// cleared, the name's tally cleared, one event; refused if the password was changed by
  /// another process meanwhile.
  func changePassword(_ verified: Verified, to newPassword: String) throws(AccountsError) {
    let fresh = try hashing { () throws(CryptoError) in
      try env.hasher.hash(password: newPassword)
    }
    let key = verified.account.usernameKey
    let changed = try store.write { writer throws(AccountsError) -> Bool in
      let now = env.now()
      guard var account = try writer.account(key: key), account.id == verified.account.id,
        account.passwordHash == verified.account.passwordHash, !account.isDisabled
      else { return false }
      account.passwordHash = fresh.description
      account.mustChangePassword = false
      account.updatedAt = now
      try writer.update(account)
      try writer.setTally(nil, key: key, at: now)
      try writer.append(
        AuditRecord(.passwordChanged, at: now, username: account.username, usernameKey: key))
      return true
    }
    if !changed { throw .invalidCredentials }
  }

  /// The work a failed check must cost: the stored hash's iteration count, or Django's current
  /// count when there is no usable stored hash.
  static func workTarget(referenceHash: String?) -> Int {
    referenceHash.flatMap(EncodedPasswordHash.init(parsing:))?.iterations
      ?? PasswordHasher.defaultIterations
  }

  /// Logs a refused attempt and returns the lock's end when `key` is locked now.
  private func refusal(_ writer: any AccountWriter, username: String, key: String)
    throws(AccountsError) -> Date?
  {
    let now = env.now()
    guard let until = try writer.tally(key: key).lock(at: now) else { return nil }
    try writer.append(
      AuditRecord(.loginFailure, at: now, username: username, usernameKey: key, detail: "locked"))
    return until
  }

  /// Counts a failure of `key` (the policy's arithmetic), logs it with `detail`, and throws
  /// what the person is told.
  private func fail(username: String, key: String, detail: String) throws(AccountsError) -> Never {
    enum Outcome {
      case counted
      case lockedNow(Date)
      case alreadyLocked(Date)
    }
    let outcome = try store.write { writer throws(AccountsError) -> Outcome in
      let now = env.now()
      // Every name's history is forgotten alike a while after its last failure (unless a lock
      // is in force), so that what is kept tells nothing about which names exist.
      try writer.forgetTallies(
        lastFailureBefore: now.addingTimeInterval(-env.lockout.forgetAfter), notLockedAt: now)
      if let until = try refusal(writer, username: username, key: key) {
        return .alreadyLocked(until)
      }
      let (next, lockedUntil) = env.lockout.tally(
        afterFailure: try writer.tally(key: key), at: now)
      try writer.append(
        AuditRecord(.loginFailure, at: now, username: username, usernameKey: key, detail: detail))
      if let lockedUntil {
        try writer.append(
          AuditRecord(
            .lockout, at: now, username: username, usernameKey: key,
            detail: "locked until \(Timestamp.string(from: lockedUntil))"))
      }
      try writer.setTally(next, key: key, at: now)
      return lockedUntil.map(Outcome.lockedNow) ?? .counted
    }
    switch outcome {
    case .counted:
      throw .invalidCredentials
    case .lockedNow(let until):
      env.console.message(Messages.invalidCredentials)
      throw env.lockedError(until: until)
    case .alreadyLocked(let until):
      throw env.lockedError(until: until)
    }
  }
}
