import AccountsCrypto
import FoundationEssentials

/// The second factor a login passed, to be accepted in the login's own transaction.
public enum VerificationProof: Equatable, Sendable {
  /// A TOTP code of this time step.
  case totp(step: UInt64)
  /// An unused recovery code with this hash.
  case recovery(hash: [UInt8])
  /// A TOTP code as typed, for the store's server to check (it keeps the secret); `moving`,
  /// the secret this host opened with its key file, for the server to keep from this login on
  /// when it still keeps it sealed under that key file.
  case serverCheck(code: String, moving: [UInt8]? = nil)
}

/// The second step after a right password: asking the code and checking it, for login, the
/// bare flow, `verify`, `passwd` and the `2fa` commands alike.
///
/// Checking writes nothing: a code is accepted by `accept`, inside the transaction that records
/// what it was for, with one conditional update, so of two processes with the same code one
/// wins. A wrong or replayed code counts toward the lockout as a wrong password does.
struct SecondFactorGate {
  let env: AccountsEnvironment
  let store: any AccountRepository
  let authenticator: Authenticator

  init(_ authenticator: Authenticator) {
    self.env = authenticator.env
    self.store = authenticator.store
    self.authenticator = authenticator
  }

  /// The account's second factor, if it has one.
  func factor(of account: Account) throws(AccountsError) -> StoredSecondFactor? {
    try store.read { reader throws(AccountsError) in
      try reader.secondFactor(accountID: account.id)
    }
  }

  /// Asks the verification code when the checked account has a second factor; nil when it has
  /// none.
  func askIfEnabled(_ verified: Authenticator.Verified, stage: InputStage)
    throws(AccountsError) -> VerificationProof?
  {
    guard let factor = verified.secondFactor else { return nil }
    return try ask(verified, factor: factor, stage: stage)
  }

  /// Asks the verification code (a TOTP code or a recovery code) and checks it.
  func ask(_ verified: Authenticator.Verified, factor: StoredSecondFactor, stage: InputStage)
    throws(AccountsError) -> VerificationProof
  {
    let typed = try Self.readCode(FieldReader(console: env.console, stage: stage))
    return try check(typed, verified: verified, factor: factor)
  }

  /// Reads one verification code; an empty one is an incomplete form.
  static func readCode(_ reader: FieldReader) throws(AccountsError) -> String {
    let field = try reader.read(Messages.verificationCodePrompt, flag: nil)
    if field.isBlank { throw .incompleteForm(empty: [Messages.verificationCodePrompt]) }
    if let problem = TextRules.problem(field, field: Messages.verificationCodePrompt) {
      throw .invalidForm(problem)
    }
    return TextRules.trimmed(field.textOrEmpty)
  }

  /// Checks `typed`: a recovery code first (it cannot be mistaken for six digits), else a TOTP
  /// code against the unsealed secret.
  func check(_ typed: String, verified: Authenticator.Verified, factor: StoredSecondFactor)
    throws(AccountsError) -> VerificationProof
  {
    let account = verified.account
    if let hash = try hashing({ () throws(CryptoError) in
      try SecondFactor.recoveryCodeHash(typed)
    }) {
      // The server reads the hashes and decides, in the transaction that marks it used.
      if factor.isServerHeld { return .recovery(hash: hash) }
      let unused = try store.read { reader throws(AccountsError) in
        try reader.hasRecoveryCode(accountID: account.id, hash: hash)
      }
      if unused { return .recovery(hash: hash) }
      try wrong(verified)
    }
    if factor.isServerHeld { return .serverCheck(code: typed, moving: keyFileSecret(verified)) }
    let secret = try Self.unseal(factor, keys: env.keys)
    let result = try hashing { () throws(CryptoError) in
      try SecondFactor.check(
        typed, secret: secret, at: env.now(), lastAcceptedStep: factor.lastStep)
    }
    switch result {
    case .accepted(let step): return .totp(step: step)
    case .replayed:
      try authenticator.fail(
        username: verified.typedName, key: account.usernameKey,
        detail: Messages.detailReplayedCode, error: .replayedVerificationCode)
    case .wrong, .clockOff: try wrong(verified)
    }
  }

  /// The checked account's secret, opened, while its store's server keeps it sealed under the
  /// key file this host holds.
  ///
  /// Nil otherwise: most hosts hold no key file, and nothing more is asked of the store then.
  /// A secret this returns is the one sealed for this account: the key file's key opened it,
  /// and the seal is bound to the account's id.
  private func keyFileSecret(_ verified: Authenticator.Verified) -> [UInt8]? {
    guard let key = try? env.keys.existingKey(),
      let kept = try? store.keyFileSealedSecret(
        key: verified.account.usernameKey, proof: verified.account.passwordHash),
      kept.keyID == key.id
    else { return nil }
    let factor = StoredSecondFactor(
      accountID: verified.account.id, sealedSecret: kept.sealed, keyID: kept.keyID, lastStep: 0,
      enabledAt: Date(timeIntervalSince1970: 0))
    return try? Self.unseal(factor, keys: env.keys)
  }

  private func wrong(_ verified: Authenticator.Verified) throws(AccountsError) -> Never {
    try authenticator.fail(
      username: verified.typedName, key: verified.account.usernameKey,
      detail: Messages.detailWrongCode, error: .invalidVerificationCode)
  }

  /// Accepts `proof` for `account` inside a write; false when another login used it first.
  ///
  /// The step is stored if it is later than the last one, or the recovery code marked used (and
  /// logged); nothing is written when it was used first.
  static func accept(
    _ proof: VerificationProof, writer: any AccountWriter, account: Account, at now: Date,
    detail: (Int) -> String = Messages.detailCodesLeft
  ) throws(AccountsError) -> Bool {
    switch proof {
    case .totp(let step):
      return try writer.acceptStep(step, accountID: account.id)
    case .recovery(let hash):
      guard try writer.useRecoveryCode(accountID: account.id, hash: hash, at: now) else {
        return false
      }
      let left = try writer.recoveryCodesLeft(accountID: account.id)
      try writer.append(
        AuditRecord(
          .recoveryCodeUsed, at: now, username: account.username,
          usernameKey: account.usernameKey, detail: detail(left)))
      return true
    case .serverCheck:
      // Only a store whose server keeps the secret is handed a code to check.
      return false
    }
  }

  /// Refuses a login or change whose code the store's server found wrong: counted as a
  /// failure, as a wrong code checked here is.
  func refuseWrongCode(_ verified: Authenticator.Verified) throws(AccountsError) -> Never {
    try wrong(verified)
  }

  /// What is said after a second step: the acknowledgment, a used recovery code, few left.
  static func acknowledge(
    _ proof: VerificationProof, account: Account, env: AccountsEnvironment,
    store: any AccountRepository
  ) {
    env.console.message(Messages.successfullyAuthorized)
    // A count for the person's information: a failing read does not undo the login.
    guard
      let left = try? store.read({ reader throws(AccountsError) in
        try reader.recoveryCodesLeft(accountID: account.id)
      })
    else { return }
    if case .recovery = proof { env.console.message(Messages.recoveryCodeAccepted(left: left)) }
    if left <= 2 { env.console.message(Messages.fewRecoveryCodesLeft(left)) }
  }

  // MARK: - The sealed secret

  /// What a sealed secret is bound to, besides the key: its account (a row copied to another
  /// account does not open).
  static func associatedData(accountID: Int64) -> [UInt8] {
    Array("accounts totp secret v1, account \(accountID)".utf8)
  }

  /// `secret` sealed for `accountID` under `key`.
  static func seal(_ secret: [UInt8], accountID: Int64, key: SealingKey) throws(AccountsError)
    -> [UInt8]
  {
    try hashing { () throws(CryptoError) in
      try AESGCM.seal(
        secret, key: key.bytes, associatedData: associatedData(accountID: accountID))
    }
  }

  /// The secret of `factor`, opened with the key file's key.
  static func unseal(_ factor: StoredSecondFactor, keys: any SealingKeyStore)
    throws(AccountsError) -> [UInt8]
  {
    guard let key = try keys.existingKey() else {
      throw .clientFile(.keyMissing(path: keys.location))
    }
    guard key.id == factor.keyID else { throw .clientFile(.wrongKey(path: keys.location)) }
    do {
      return try AESGCM.open(
        factor.sealedSecret, key: key.bytes,
        associatedData: associatedData(accountID: factor.accountID))
    } catch {
      throw .clientFile(.wrongKey(path: keys.location))
    }
  }
}
