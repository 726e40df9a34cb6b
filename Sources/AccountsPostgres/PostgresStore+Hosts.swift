import AccountsCore
import AccountsCrypto
import FoundationEssentials

/// A host's steps besides a login's, each one statement: a call of the migration "v6" function
/// that does the whole step in the database, so that a host role, which may write no table,
/// can take them.
extension PostgresStore {
  public func touchSession(tokenHash: [UInt8], at now: Date) throws(AccountsError) -> Bool {
    let (rows, access) = try statement(
      "SELECT accounts.session_touch($1::bytea, $2::timestamptz, $3::integer)",
      [.bytes(tokenHash), PGValue(now), waitMilliseconds], for: .readWrite)
    return try access.decoded { () throws(PGUnreadableValue) in
      try rows.decode(Bool.self, 0, 0)
    }
  }

  public func endSessions(_ ending: SessionEnding) throws(AccountsError) -> Int {
    let (rows, access) = try statement(
      """
      SELECT accounts.session_end($1::bytea, $2::boolean, $3::timestamptz, $4::integer,
        $5::boolean, $6::text[], $7)
      """,
      [
        .bytes(ending.tokenHash), PGValue(ending.all), PGValue(ending.now), waitMilliseconds,
        PGValue(ending.quiet), PostgresAccess.textArray(SessionEnding.detailTemplates),
        PGValue(writingHost),
      ], for: .readWrite)
    return try access.decoded { () throws(PGUnreadableValue) in
      try rows.decode(Int.self, 0, 0)
    }
  }

  public func changeOwnPassword(_ record: PasswordChangeRecord) throws(AccountsError)
    -> PasswordChangeOutcome
  {
    let (step, recovery, code) = PGValue.secondStep(record.proof)
    let (rows, access) = try statement(
      """
      SELECT accounts.change_password($1, $2::timestamptz, $3::integer, $4::bigint, $5, $6,
        $7::bigint, $8::bytea, $9::text[], $10::bytea, $11, $12, $13, $14)
      """,
      [
        .text(record.expected.usernameKey), PGValue(record.now), waitMilliseconds,
        PGValue(record.expected.id),
        .text(Timestamp.string(from: record.expected.passwordChangedAt)),
        .text(record.newHash), step, recovery,
        PostgresAccess.textArray(
          (0...SecondFactor.recoveryCodeCount).map(Messages.detailCodesLeft)),
        record.keeping.map { .bytes($0) } ?? .null, PGValue(record.detail),
        PGValue(writingHost), .text(record.expected.passwordHash), code,
      ], for: .readWrite)
    return try access.decoded { () throws(PGUnreadableValue) in
      switch try rows.decode(String.self, 0, 0) {
      case "changed": return .changed
      case "gone": return .gone
      case "code_used": return .codeAlreadyUsed
      case "code_wrong": return .codeWrong
      default: throw PGUnreadableValue(reason: "change_password gave no known outcome")
      }
    }
  }

  public func recordPamSession(
    of account: Account, opened: Bool, at now: Date, detail: String?
  ) throws(AccountsError) -> Bool {
    let (rows, access) = try statement(
      """
      SELECT accounts.pam_session_event($1, $2::bigint, $3::boolean, $4::timestamptz,
        $5::integer, $6, $7)
      """,
      [
        .text(account.usernameKey), PGValue(account.id), PGValue(opened), PGValue(now),
        waitMilliseconds, PGValue(detail), PGValue(writingHost),
      ], for: .readWrite)
    return try access.decoded { () throws(PGUnreadableValue) in
      try rows.decode(Bool.self, 0, 0)
    }
  }

  public func changeOwnSecondFactor(_ change: SecondFactorChange) throws(AccountsError)
    -> SecondFactorChangeOutcome
  {
    let (step, recovery, code) = PGValue.secondStep(change.proof)
    let kind: String
    var (sealed, keyID, lastStep, hashes): (PGValue, PGValue, PGValue, [[UInt8]]) =
      (.null, .null, .null, [])
    switch change.kind {
    case .enable(let secret, let key, let last, let codes):
      (kind, sealed, keyID, lastStep, hashes) = (
        "enable", .bytes(secret), .text(key), PGValue(Int64(clamping: last)), codes
      )
    case .disable: kind = "disable"
    case .newRecoveryCodes(let codes): (kind, hashes) = ("new_codes", codes)
    }
    let (rows, access) = try statement(
      """
      SELECT accounts.second_factor_change($1, $2, $3::bigint, $4, $5::timestamptz,
        $6::integer, $7::bytea, $8, $9::bigint, $10::text[]::bytea[], $11::bigint, $12::bytea,
        $13::text[], $14::bytea, $15, $16, $17)
      """,
      [
        .text(kind), .text(change.expected.usernameKey), PGValue(change.expected.id),
        .text(Timestamp.string(from: change.expected.passwordChangedAt)), PGValue(change.now),
        waitMilliseconds, sealed, keyID, lastStep,
        PostgresAccess.textArray(hashes.map { "\\x" + Hex.encode($0) }), step, recovery,
        PostgresAccess.textArray(
          (0...SecondFactor.recoveryCodeCount).map(Messages.detailCodesLeft)),
        change.keeping.map { .bytes($0) } ?? .null, PGValue(writingHost),
        .text(change.expected.passwordHash), code,
      ], for: .readWrite)
    return try access.decoded { () throws(PGUnreadableValue) in
      switch try rows.decode(String.self, 0, 0) {
      case "changed": return .changed
      case "gone": return .gone
      case "already_on": return .alreadyOn
      case "not_on": return .notOn
      case "code_used": return .codeAlreadyUsed
      case "code_wrong": return .codeWrong
      default: throw PGUnreadableValue(reason: "second_factor_change gave no known outcome")
      }
    }
  }
}

/// `2fa enable --begin` and `--confirm`, each one call of a migration "v12" function.
extension PostgresStore {
  public func beginSecondFactor(_ begin: SecondFactorBegin) throws(AccountsError)
    -> SecondFactorBeginOutcome
  {
    let (rows, access) = try statement(
      """
      SELECT r_outcome, r_until FROM accounts.second_factor_begin($1, $2::bigint, $3,
        $4::timestamptz, $5::integer, $6::bytea, $7, $8::double precision, $9)
      """,
      [
        .text(begin.expected.usernameKey), PGValue(begin.expected.id),
        .text(Timestamp.string(from: begin.expected.passwordChangedAt)), PGValue(begin.now),
        waitMilliseconds, .bytes(begin.sealedSecret), .text(begin.keyID),
        .text(String(begin.lifetime)), .text(begin.expected.passwordHash),
      ], for: .readWrite)
    return try access.decoded { () throws(PGUnreadableValue) in
      switch try rows.decode(String.self, 0, 0) {
      case "stored": return .stored(expiresAt: try rows.decode(Date.self, 0, 1))
      case "gone": return .gone
      case "already_on": return .alreadyOn
      default: throw PGUnreadableValue(reason: "second_factor_begin gave no known outcome")
      }
    }
  }

  public func confirmSecondFactor(_ confirmation: SecondFactorConfirmation)
    throws(AccountsError) -> SecondFactorConfirmOutcome
  {
    let enabling = confirmation.enabling
    if let enabling, let code = enabling.code {
      return try confirmSecondFactor(confirmation, code: code, codeHashes: enabling.codeHashes)
    }
    let (rows, access) = try statement(
      """
      SELECT accounts.second_factor_confirm($1, $2::bigint, $3, $4::timestamptz, $5::integer,
        $6::bytea, $7::bigint, $8::text[]::bytea[], $9::bytea, $10, $11)
      """,
      [
        .text(confirmation.expected.usernameKey), PGValue(confirmation.expected.id),
        .text(Timestamp.string(from: confirmation.expected.passwordChangedAt)),
        PGValue(confirmation.now), waitMilliseconds,
        enabling.map { .bytes($0.sealedSecret) } ?? .null,
        enabling.map { PGValue(Int64(clamping: $0.lastStep)) } ?? .null,
        PostgresAccess.textArray((enabling?.codeHashes ?? []).map { "\\x" + Hex.encode($0) }),
        confirmation.keeping.map { .bytes($0) } ?? .null, PGValue(writingHost),
        .text(confirmation.expected.passwordHash),
      ], for: .readWrite)
    return try access.decoded { () throws(PGUnreadableValue) in
      switch try rows.decode(String.self, 0, 0) {
      case "changed": return .changed
      case "gone": return .gone
      case "already_on": return .alreadyOn
      case "no_pending": return .noPending
      case "expired": return .expired
      case "replaced": return .replaced
      case "pending": return .pending
      default: throw PGUnreadableValue(reason: "second_factor_confirm gave no known outcome")
      }
    }
  }
}

extension PGValue {
  /// A second step as the functions take it: the TOTP step, the recovery code's hash, or the
  /// typed code the server checks.
  static func secondStep(_ proof: VerificationProof?) -> (
    step: PGValue, recovery: PGValue, code: PGValue
  ) {
    switch proof {
    case .totp(let number): return (PGValue(Int64(clamping: number)), .null, .null)
    case .recovery(let hash): return (.null, .bytes(hash), .null)
    case .serverCheck(let code, _): return (.null, .null, .text(code))
    case nil: return (.null, .null, .null)
    }
  }
}

extension PostgresStore {
  public func recordPamDecision(
    _ decision: PamDecision, of account: Account, at now: Date, detail: String?
  ) throws(AccountsError) -> Bool {
    let (rows, access) = try statement(
      """
      SELECT accounts.pam_account_event($1, $2, $3::bigint, $4::timestamptz, $5::integer, $6,
        $7)
      """,
      [
        .text(decision.kind.rawValue), .text(account.usernameKey), PGValue(account.id),
        PGValue(now), waitMilliseconds, PGValue(detail), PGValue(writingHost),
      ], for: .readWrite)
    return try access.decoded { () throws(PGUnreadableValue) in
      try rows.decode(Bool.self, 0, 0)
    }
  }

  public func recordUserdbChange(_ change: UserdbChange, at now: Date, detail: String)
    throws(AccountsError)
  {
    _ = try statement(
      "SELECT accounts.userdb_event($1, $2::timestamptz, $3::integer, $4, $5)",
      [
        .text(change.kind.rawValue), PGValue(now), waitMilliseconds, .text(detail),
        PGValue(writingHost),
      ], for: .readWrite)
  }
}

/// A host's own user record settings, each one call of a migration "v13" function.
extension PostgresStore {
  public func keepUserdbHost(_ host: UserdbHost) throws(AccountsError) -> String {
    let (rows, access) = try statement(
      "SELECT accounts.userdb_host_keep($1, $2, $3::timestamptz, $4::integer)",
      [.text(host.host), .text(host.folder), PGValue(host.enabledAt), waitMilliseconds],
      for: .readWrite)
    return try access.decoded { () throws(PGUnreadableValue) in
      try rows.decode(String.self, 0, 0)
    }
  }

  public func forgetUserdbHost<T>(
    named host: String, at now: Date, _ body: () throws(AccountsError) -> (T, detail: String?)
  ) throws(AccountsError) -> T? {
    // The step and its event in one transaction with the removal of the files, which runs
    // before the commit (`UserdbFlow.disable`); each statement a call a host role may make.
    try stepTransaction { access throws(AccountsError) -> T? in
      let forgotten = try access.query(
        "SELECT accounts.userdb_host_forget($1, $2::integer)", [.text(host), waitMilliseconds])
      guard try access.single(Bool.self, forgotten) else { return nil }
      let (result, detail) = try body()
      if let detail {
        try access.query(
          "SELECT accounts.userdb_event($1, $2::timestamptz, $3::integer, $4, $5)",
          [
            .text(UserdbChange.disabled.kind.rawValue), PGValue(now), waitMilliseconds,
            .text(detail), PGValue(writingHost),
          ])
      }
      return result
    }
  }
}

extension PostgresStore {
  /// `2fa enable --confirm` with the typed code, which the server checks against the pending
  /// secret it keeps (migration "v17").
  func confirmSecondFactor(
    _ confirmation: SecondFactorConfirmation, code: String, codeHashes: [[UInt8]]
  ) throws(AccountsError) -> SecondFactorConfirmOutcome {
    let (rows, access) = try statement(
      """
      SELECT r_outcome, r_seconds FROM accounts.second_factor_confirm_code($1, $2::bigint, $3,
        $4::timestamptz, $5::integer, $6, $7::text[]::bytea[], $8::bytea, $9, $10)
      """,
      [
        .text(confirmation.expected.usernameKey), PGValue(confirmation.expected.id),
        .text(Timestamp.string(from: confirmation.expected.passwordChangedAt)),
        PGValue(confirmation.now), waitMilliseconds, .text(code),
        PostgresAccess.textArray(codeHashes.map { "\\x" + Hex.encode($0) }),
        confirmation.keeping.map { .bytes($0) } ?? .null, PGValue(writingHost),
        .text(confirmation.expected.passwordHash),
      ], for: .readWrite)
    return try access.decoded { () throws(PGUnreadableValue) in
      switch try rows.decode(String.self, 0, 0) {
      case "changed": return .changed
      case "gone": return .gone
      case "already_on": return .alreadyOn
      case "no_pending": return .noPending
      case "expired": return .expired
      case "code_wrong": return .codeWrong
      case "clock_off": return .clockOff(seconds: try rows.decode(Int.self, 0, 1))
      default:
        throw PGUnreadableValue(reason: "second_factor_confirm_code gave no known outcome")
      }
    }
  }
}
