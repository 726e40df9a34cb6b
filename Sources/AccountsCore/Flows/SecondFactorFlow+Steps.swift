import AccountsCrypto
import FoundationEssentials

/// `2fa enable` in two steps, for scripts: `--begin` keeps a new secret pending and shows it,
/// `--confirm` takes a code of it and turns the second factor on.
extension SecondFactorFlow {
  /// How long a pending secret waits for its first code.
  public static let pendingLifetime: TimeInterval = 600

  /// `2fa enable --begin`: after the password, a new secret kept pending for the account
  /// (replacing any), sealed as a second factor's, and shown (the QR code only on a terminal).
  public static func begin(_ env: AccountsEnvironment, username: String?, qr: QRStyle)
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
    let key = try sealingKey(env, store: store)
    let secret = try hashing { () throws(CryptoError) in try SecondFactor.newSecret() }
    let domain = try store.authenticatorDomain() ?? env.hostName
    let uri = SecondFactor.uri(secret: secret, account: "\(account.username)@\(domain)")
    let shown = qr == .terminal && env.console.outputIsTerminal
    let qrLines = shown ? try qrCode(uri).terminalLines() : []
    let (sealed, keyID) = try kept(secret, accountID: account.id, key: key)
    let outcome = try store.beginSecondFactor(
      SecondFactorBegin(
        expected: account, now: env.now(), sealedSecret: sealed, keyID: keyID,
        lifetime: pendingLifetime))
    let expiresAt: Date
    switch outcome {
    case .stored(let until): expiresAt = until
    case .alreadyOn: throw .secondFactorAlreadyOn(account.username)
    case .gone: throw .invalidCredentials
    }
    if shown {
      env.console.output(Messages.scanThis)
      for line in qrLines { env.console.outputDrawing(line) }
    }
    env.console.output(Messages.uriLine(uri))
    env.console.output(Messages.keyLine(Base32.encode(secret, padded: false)))
    env.console.output(
      Messages.pendingSecondFactorKept(account.username, until: Timestamp.string(from: expiresAt)))
  }

  /// `2fa enable --confirm`: after the password, a code of the pending secret turns it on.
  ///
  /// As `2fa enable` does: recovery codes shown once, other sessions ended. An expired pending
  /// secret is deleted; a wrong code keeps it.
  public static func confirm(_ env: AccountsEnvironment, username: String?)
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
    let found = try store.read { reader throws(AccountsError) in
      try reader.pendingSecondFactor(accountID: account.id)
    }
    guard let pending = found else { throw .noPendingSecondFactor(account.username) }
    if pending.expiresAt <= env.now() {
      // Deleted by the store, which judges the time itself (a fleet's server clock).
      let outcome = try store.confirmSecondFactor(
        SecondFactorConfirmation(expected: account, now: env.now(), enabling: nil, keeping: nil))
      if outcome != .pending { try refuse(outcome, account: account) }
    }
    if store.keepsSecondFactorsOnServer {
      return try confirmOnServer(env, store: store, account: account)
    }
    try checkSealingKey(env, store: store)
    let secret = try SecondFactorGate.unseal(
      StoredSecondFactor(
        accountID: account.id, sealedSecret: pending.sealedSecret, keyID: pending.keyID,
        lastStep: 0, enabledAt: pending.expiresAt),
      keys: env.keys)
    let step = try confirmEnrollment(env, secret: secret)
    let codes = try hashing { () throws(CryptoError) in try SecondFactor.newRecoveryCodes() }
    let outcome = try store.confirmSecondFactor(
      SecondFactorConfirmation(
        expected: account, now: env.now(),
        enabling: SecondFactorConfirmation.Enabling(
          sealedSecret: pending.sealedSecret, lastStep: step, codeHashes: try recoveryHashes(codes)
        ),
        keeping: SessionBook.previousTokenHash(env)))
    guard outcome == .changed else { try refuse(outcome, account: account) }
    announce(env, account: account, codes: codes)
  }

  /// `--confirm` on a store whose server keeps the pending secret: each code typed is sent for
  /// the server to check (at a terminal a few times; once from a pipe).
  private static func confirmOnServer(
    _ env: AccountsEnvironment, store: any AccountRepository, account: Account
  ) throws(AccountsError) {
    let attempts = env.console.isInteractive ? enrollmentAttempts : 1
    var attempt = 1
    while true {
      let typed = try SecondFactorGate.readCode(
        FieldReader(console: env.console, stage: .enrollment))
      let codes = try hashing { () throws(CryptoError) in try SecondFactor.newRecoveryCodes() }
      let outcome = try store.confirmSecondFactor(
        SecondFactorConfirmation(
          expected: account, now: env.now(),
          enabling: SecondFactorConfirmation.Enabling(
            sealedSecret: [], lastStep: 0, codeHashes: try recoveryHashes(codes), code: typed),
          keeping: SessionBook.previousTokenHash(env)))
      let refusal: AccountsError
      switch outcome {
      case .changed: return announce(env, account: account, codes: codes)
      case .codeWrong: refusal = .invalidVerificationCode
      case .clockOff(let seconds): refusal = .clockOff(seconds: seconds)
      default: try refuse(outcome, account: account)
      }
      guard attempt < attempts else { throw refusal }
      for line in refusal.lines { env.console.message(line) }
      attempt += 1
    }
  }

  /// What is said once the second factor is on: the sentence and the recovery codes.
  private static func announce(_ env: AccountsEnvironment, account: Account, codes: [String]) {
    env.console.output(Messages.secondFactorOn(account.username))
    env.console.output(Messages.recoveryCodesIntro)
    for code in codes { env.console.output("  " + code) }
  }

  /// The error of a confirmation that did not turn the second factor on.
  private static func refuse(_ outcome: SecondFactorConfirmOutcome, account: Account)
    throws(AccountsError) -> Never
  {
    switch outcome {
    case .alreadyOn: throw .secondFactorAlreadyOn(account.username)
    case .noPending: throw .noPendingSecondFactor(account.username)
    case .expired: throw .pendingSecondFactorExpired(account.username)
    // The code was checked against a secret another `--begin` replaced meanwhile.
    case .replaced, .codeWrong: throw .invalidVerificationCode
    case .clockOff(let seconds): throw .clockOff(seconds: seconds)
    case .gone, .changed, .pending: throw .invalidCredentials
    }
  }
}
