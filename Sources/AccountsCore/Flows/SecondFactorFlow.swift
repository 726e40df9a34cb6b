import AccountsCrypto
import DynamicLibrary
import FoundationEssentials
import QREncoder

/// How `2fa enable` shows the QR code.
public enum QRStyle: String, CaseIterable, Sendable {
  /// Unicode half blocks with explicit colours.
  case terminal
  /// No QR code (the URI and the key are still shown).
  case none
}

/// An account's second factor as `2fa status` tells it.
public struct SecondFactorStatus: Equatable, Sendable {
  /// The account's user name.
  public var username: String
  /// When it was turned on; nil when it is off.
  public var enabledAt: Date?
  /// Unused recovery codes.
  public var recoveryCodesLeft: Int
  /// Until when a new secret waits for its first code (`2fa enable --begin`); nil when none
  /// does (or it expired).
  public var pendingUntil: Date? = nil
}

/// The person's `2fa` commands and the administrator's `user reset-2fa`.
public enum SecondFactorFlow {
  /// Codes typed at a terminal before `2fa enable` gives up.
  public static let enrollmentAttempts = 3

  /// `2fa enable`: after the password, a new secret shown (QR code, URI, key).
  ///
  /// It is stored with ten recovery codes once a code from the app is right; nothing is stored
  /// before that.
  public static func enable(_ env: AccountsEnvironment, username: String?, qr: QRStyle)
    throws(AccountsError)
  {
    let store = try env.activatedStore()
    let authenticator = Authenticator(env: env, store: store)
    let verified = try Credentials.ask(
      FieldReader(console: env.console, stage: .login), authenticator: authenticator,
      username: username, passwordPrompt: Messages.passwordPrompt)
    let account = verified.account
    if try SecondFactorGate(authenticator).factor(of: account) != nil {
      throw .secondFactorAlreadyOn(account.username)
    }
    try checkSealingKey(env, store: store)
    let secret = try hashing { () throws(CryptoError) in try SecondFactor.newSecret() }
    let domain = try store.authenticatorDomain() ?? env.hostName
    let uri = SecondFactor.uri(secret: secret, account: "\(account.username)@\(domain)")
    let qrLines = qr == .terminal ? try qrCode(uri).terminalLines() : []
    env.console.output(qrLines.isEmpty ? Messages.typeThis : Messages.scanThis)
    for line in qrLines { env.console.outputDrawing(line) }
    env.console.output(Messages.uriLine(uri))
    env.console.output(Messages.keyLine(Base32.encode(secret, padded: false)))
    let step = try confirmEnrollment(env, secret: secret)
    // Made only now, once a code proved the secret reached the app.
    let key = try sealingKey(env, store: store)
    let codes = try hashing { () throws(CryptoError) in try SecondFactor.newRecoveryCodes() }
    let hashes = try recoveryHashes(codes)
    let (sealed, keyID) = try kept(secret, accountID: account.id, key: key)
    let outcome = try store.changeOwnSecondFactor(
      SecondFactorChange(
        .enable(sealedSecret: sealed, keyID: keyID, lastStep: step, codeHashes: hashes),
        expected: account, now: env.now(), proof: nil,
        keeping: SessionBook.previousTokenHash(env)))
    switch outcome {
    case .changed: break
    case .alreadyOn: throw .secondFactorAlreadyOn(account.username)
    case .gone, .notOn, .codeAlreadyUsed, .codeWrong: throw .invalidCredentials
    }
    env.console.output(Messages.secondFactorOn(account.username))
    env.console.output(Messages.recoveryCodesIntro)
    for code in codes { env.console.output("  " + code) }
  }

  /// `uri` as a QR code; `.qrEncoderUnavailable` when libqrencode cannot make one.
  static func qrCode(_ uri: String) throws(AccountsError) -> QRCode {
    do throws(DynamicLibrary.Failure) {
      return try QRCode.encode(uri)
    } catch {
      throw .qrEncoderUnavailable(library: error.library, reason: error.reason)
    }
  }

  /// Refuses early (before a secret is shown) what `sealingKey` would refuse.
  static func checkSealingKey(_ env: AccountsEnvironment, store: any AccountRepository)
    throws(AccountsError)
  {
    if store.keepsSecondFactorsOnServer { return }
    let inUse = try store.read { reader throws(AccountsError) in
      try reader.secondFactorKeyIDs()
    }
    guard !inUse.isEmpty else {
      _ = try env.keys.existingKey()  // a key file that is there must be usable
      return
    }
    guard let key = try env.keys.existingKey() else {
      throw .clientFile(.keyMissing(path: env.keys.location))
    }
    if !inUse.contains(key.id) { throw .clientFile(.wrongKey(path: env.keys.location)) }
  }

  /// The key to seal a new secret under: the key file's, made on first use.
  ///
  /// Never a second key while secrets are sealed under one that is missing or another (restoring
  /// the right key file from a backup must keep working for them).
  /// Nil for a store whose server keeps the secrets: no key file is read or made then.
  static func sealingKey(_ env: AccountsEnvironment, store: any AccountRepository)
    throws(AccountsError) -> SealingKey?
  {
    if store.keepsSecondFactorsOnServer { return nil }
    // Checked again: another process may have enrolled, or the file changed, meanwhile.
    try checkSealingKey(env, store: store)
    return try env.keys.keyMakingIfNeeded()
  }

  /// `secret` as the store is handed it: sealed under `key`, or, without one, in the clear
  /// for the server to encrypt (`StoredSecondFactor.serverKeyID`); nothing of it kept here.
  static func kept(_ secret: [UInt8], accountID: Int64, key: SealingKey?)
    throws(AccountsError) -> (sealed: [UInt8], keyID: String)
  {
    guard let key else { return (secret, StoredSecondFactor.serverKeyID) }
    return (try SecondFactorGate.seal(secret, accountID: accountID, key: key), key.id)
  }

  /// Asks codes until one is right for the new secret (at a terminal a few times; once from a
  /// pipe); returns its time step.
  static func confirmEnrollment(_ env: AccountsEnvironment, secret: [UInt8])
    throws(AccountsError) -> UInt64
  {
    let attempts = env.console.isInteractive ? enrollmentAttempts : 1
    var attempt = 1
    while true {
      let typed = try SecondFactorGate.readCode(
        FieldReader(console: env.console, stage: .enrollment))
      let result = try hashing { () throws(CryptoError) in
        try SecondFactor.check(
          typed, secret: secret, at: env.now(), lastAcceptedStep: nil, enrolling: true)
      }
      let refusal: AccountsError
      switch result {
      case .accepted(let step): return step
      case .clockOff(let seconds): refusal = .clockOff(seconds: seconds)
      case .wrong, .replayed: refusal = .invalidVerificationCode
      }
      guard attempt < attempts else { throw refusal }
      for line in refusal.lines { env.console.message(line) }
      attempt += 1
    }
  }

  /// `2fa disable`: after the password and a code, the second factor and its recovery codes
  /// are deleted; the account's other sessions end.
  public static func disable(_ env: AccountsEnvironment, username: String?)
    throws(AccountsError)
  {
    let name = try changeWithCode(env, username: username, .disable)
    env.console.output(Messages.secondFactorOff(name))
  }

  /// `2fa recovery-codes`: after the password and a code, a new set replaces the old one.
  public static func newRecoveryCodes(_ env: AccountsEnvironment, username: String?)
    throws(AccountsError)
  {
    let codes = try hashing { () throws(CryptoError) in try SecondFactor.newRecoveryCodes() }
    let hashes = try recoveryHashes(codes)
    let name = try changeWithCode(
      env, username: username, .newRecoveryCodes(codeHashes: hashes))
    env.console.output(Messages.newRecoveryCodesIntro(name))
    for code in codes { env.console.output("  " + code) }
  }

  /// The password, then a code (TOTP or recovery), then `change` (in the transaction that
  /// accepts the code); returns the user name.
  private static func changeWithCode(
    _ env: AccountsEnvironment, username: String?, _ change: SecondFactorChange.Kind
  ) throws(AccountsError) -> String {
    let store = try env.activatedStore()
    let authenticator = Authenticator(env: env, store: store)
    let verified = try Credentials.ask(
      FieldReader(console: env.console, stage: .secondFactorChange),
      authenticator: authenticator, username: username, passwordPrompt: Messages.passwordPrompt)
    let gate = SecondFactorGate(authenticator)
    guard let factor = try gate.factor(of: verified.account) else {
      throw .secondFactorNotOn(verified.account.username)
    }
    let proof = try gate.ask(verified, factor: factor, stage: .secondFactorChange)
    let outcome = try store.changeOwnSecondFactor(
      SecondFactorChange(
        change, expected: verified.account, now: env.now(), proof: proof,
        keeping: SessionBook.previousTokenHash(env)))
    switch outcome {
    case .changed: break
    case .gone, .alreadyOn: throw .invalidCredentials
    case .notOn: throw .secondFactorNotOn(verified.account.username)
    case .codeAlreadyUsed:
      try authenticator.fail(
        username: verified.typedName, key: verified.account.usernameKey,
        detail: Messages.detailReplayedCode, error: .replayedVerificationCode)
    case .codeWrong: try gate.refuseWrongCode(verified)
    }
    return verified.account.username
  }

  static func recoveryHashes(_ codes: [String]) throws(AccountsError) -> [[UInt8]] {
    var hashes: [[UInt8]] = []
    for code in codes {
      guard
        let hash = try hashing({ () throws(CryptoError) in
          try SecondFactor.recoveryCodeHash(code)
        })
      else { throw .crypto(.invalidParameter("a recovery code")) }
      hashes.append(hash)
    }
    return hashes
  }

  /// `2fa status`: of the logged-in account, or (`username`) of any account.
  public static func status(_ env: AccountsEnvironment, username: String?)
    throws(AccountsError) -> SecondFactorStatus
  {
    let account: Account
    if let username {
      account = try AccountQuery.show(env, username: username).account
    } else {
      account = try SessionFlow.whoami(env).account
    }
    guard let store = try env.readableStore() else { throw .notLoggedIn }
    return try store.read { reader throws(AccountsError) -> SecondFactorStatus in
      let factor = try reader.secondFactor(accountID: account.id)
      let pending = try reader.pendingSecondFactor(accountID: account.id)
      return SecondFactorStatus(
        username: account.username, enabledAt: factor?.enabledAt,
        recoveryCodesLeft: factor == nil ? 0 : try reader.recoveryCodesLeft(accountID: account.id),
        pendingUntil: pending.map(\.expiresAt).flatMap { $0 > env.now() ? $0 : nil })
    }
  }

  /// `user reset-2fa NAME` (administrator, a lost phone): the second factor and any pending
  /// secret deleted, every session of the account ended, logged.
  public static func reset(_ env: AccountsEnvironment, username: String) throws(AccountsError) {
    let name = try AccountChange.run(env, username: username) {
      writer, account throws(AccountsError) -> String in
      let removed = try writer.removeSecondFactor(accountID: account.id)
      // A pending secret goes too: the person starts again with `2fa enable --begin`.
      guard try writer.removePendingSecondFactor(accountID: account.id) || removed else {
        throw .secondFactorNotOn(account.username)
      }
      let now = env.now()
      _ = try writer.endSessions(accountID: account.id, keeping: nil)
      try writer.append(
        AuditRecord(
          .secondFactorReset, at: now, username: account.username,
          usernameKey: account.usernameKey))
      return account.username
    }
    env.console.output(Messages.secondFactorReset(name))
  }
}
