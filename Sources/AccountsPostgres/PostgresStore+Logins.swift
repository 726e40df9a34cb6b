import AccountsCore
import AccountsCrypto
import FoundationEssentials

/// A login's steps, each one statement on its own: a call of the migration "v5" function that
/// does the whole step in the database (its own transaction), so that a login costs one round
/// trip before the password is checked and one after it.
extension PostgresStore {
  public func loginFacts(key: String?) throws(AccountsError) -> LoginFacts {
    let (rows, access) = try statement(
      "SELECT * FROM accounts.login_facts($1)", [PGValue(key)], for: .readOnly)
    return try facts(rows, access)
  }

  /// The device's state and the facts of a login of `key`, in one statement that also reads
  /// which migrations the store has had; nil when it is not a store of this version (absent,
  /// older, newer, foreign): the usual way then looks, upgrades or refuses.
  public func loginStart(key: String) throws(StoreError) -> (DeviceStatus, LoginFacts)? {
    let db = try connected()
    let rows: PGRows
    do {
      rows = try db.run(
        """
        SELECT f.*, (SELECT pg_catalog.string_agg(m.identifier, ',')
                     FROM accounts.schema_migration AS m),
                    (SELECT pg_catalog.string_agg(e.identifier, ',')
                     FROM accounts.schema_expansion AS e)
        FROM accounts.login_facts($1) AS f
        """, [.text(key)], pinning: false)
    } catch {
      // No schema, or one without the function yet: looked at more closely the usual way.
      if error.connectionLost { throw translate(error) }
      return nil
    }
    guard rows.count == 1,
      isCurrent(RecordedMigrations(steps: rows.text(0, 27), expansions: rows.text(0, 28)))
    else { return nil }
    migrated = true
    let access = PostgresAccess(db: db, store: self)
    do {
      let status = try access.decoded { () throws(PGUnreadableValue) in
        DeviceStatus(
          state: try PostgresAccess.state(rows, 0, 25),
          changedAt: try rows.decode(Date?.self, 0, 26))
      }
      return (status, try facts(rows, access))
    } catch {
      if case .storage(let error) = error { throw error }
      throw .failure(location: location, reason: error.description)
    }
  }

  /// The facts in the columns `accounts.login_facts` returns.
  private func facts(_ rows: PGRows, _ access: PostgresAccess) throws(AccountsError)
    -> LoginFacts
  {
    guard rows.count == 1 else { throw .storage(.inconsistent(location: location)) }
    let account =
      try access.decoded { () throws(PGUnreadableValue) in
        try rows.decode(Int64?.self, 0, 0)
      } == nil ? nil : try access.account(rows, 0)
    return try access.decoded { () throws(PGUnreadableValue) in
      var factor: StoredSecondFactor?
      // No secret leaves the server (migration "v17"): a factor is there when its time is.
      if let account, try rows.decode(Date?.self, 0, 24) != nil {
        factor = StoredSecondFactor(
          accountID: account.id, sealedSecret: [], keyID: StoredSecondFactor.serverKeyID,
          lastStep: UInt64(max(try rows.decode(Int64.self, 0, 23), 0)),
          enabledAt: try rows.decode(Date.self, 0, 24))
      }
      return LoginFacts(
        account: account,
        tally: ThrottleState(
          failures: try rows.decode(Int?.self, 0, 17) ?? 0,
          lockouts: try rows.decode(Int?.self, 0, 18) ?? 0,
          lockedUntil: try rows.decode(Date?.self, 0, 19)),
        referenceHash: try rows.decode(String?.self, 0, 20), secondFactor: factor)
    }
  }

  public func recordLoginFailure(_ record: LoginFailureRecord) throws(AccountsError)
    -> LoginFailureOutcome
  {
    let policy = record.policy
    let (rows, access) = try statement(
      """
      SELECT * FROM accounts.login_failure($1, $2, $3::timestamptz, $4::integer, $5::bigint,
        $6::double precision, $7::double precision, $8::double precision, $9, $10, $11, $12)
      """,
      [
        .text(record.username), .text(record.usernameKey), PGValue(record.now), waitMilliseconds,
        PGValue(policy.threshold), .text(String(policy.firstLock)),
        .text(String(policy.longestLock)), .text(String(policy.forgetAfter)),
        .text(record.detail), .text(record.refusalDetail), .text(record.lockoutDetail),
        PGValue(writingHost),
      ], for: .readWrite)
    return try access.decoded { () throws(PGUnreadableValue) in
      switch try rows.decode(String.self, 0, 0) {
      case "counted": return .counted(failures: try rows.decode(Int.self, 0, 1))
      case "locked_now": return .lockedNow(until: try rows.decode(Date.self, 0, 2))
      case "already_locked": return .alreadyLocked(until: try rows.decode(Date.self, 0, 2))
      default: throw PGUnreadableValue(reason: "login_failure gave no known outcome")
      }
    }
  }

  public func recordLoginRefusal(
    username: String, usernameKey: String, at now: Date, detail: String
  ) throws(AccountsError) -> Date? {
    let (rows, access) = try statement(
      """
      SELECT accounts.stamp(accounts.login_refusal($1, $2, $3::timestamptz, $4::integer, $5, $6))
      """,
      [
        .text(username), .text(usernameKey), PGValue(now), waitMilliseconds, .text(detail),
        PGValue(writingHost),
      ],
      for: .readWrite)
    return try access.decoded { () throws(PGUnreadableValue) in
      try rows.decode(Date?.self, 0, 0)
    }
  }

  public func recordLoginSuccess(_ record: LoginSuccessRecord) throws(AccountsError)
    -> LoginSuccessOutcome
  {
    let (step, recovery, code) = PGValue.secondStep(record.completion.proof)
    var moving: PGValue = .null
    if case .serverCheck(_, let secret?) = record.completion.proof { moving = .bytes(secret) }
    let session = record.completion.session
    let (rows, access) = try statement(
      """
      SELECT * FROM accounts.login_success($1, $2, $3::timestamptz, $4::integer, $5::bigint,
        $6, $7, $8::boolean, $9::bigint, $10::bytea, $11::bytea, $12::double precision,
        $13::bigint, $14::bytea, $15, $16, $17, $18, $19::text[], $20::text[], $21, $22, $23,
        $24::bytea, $25::boolean)
      """,
      [
        .text(record.username), .text(record.usernameKey), PGValue(record.now),
        waitMilliseconds, record.expected.map { PGValue($0.id) } ?? .null,
        PGValue(record.expected.map { Timestamp.string(from: $0.passwordChangedAt) }),
        PGValue(record.newHash), PGValue(record.requiredChange), step, recovery,
        session.map { .bytes($0.tokenHash) } ?? .null,
        .text(String(session?.policy.lifetime ?? 0)),
        PGValue(Int64(session?.policy.idle ?? 0)),
        session?.replacing.map { .bytes($0) } ?? .null, .text(record.successDetail),
        .text(record.goneDetail), .text(record.refusalDetail),
        .text(record.requiredChangeDetail), PostgresAccess.textArray(record.codesLeftDetails),
        PostgresAccess.textArray(record.failureCountResets.map(\.rawValue)), PGValue(writingHost),
        PGValue(record.expected?.passwordHash), code, moving,
        PGValue(record.completion.keepsRecoveryCodes),
      ], for: .readWrite)
    return try access.decoded { () throws(PGUnreadableValue) in
      switch try rows.decode(String.self, 0, 0) {
      case "logged_in":
        return .loggedIn(
          HomeScreen(
            fullName: try rows.decode(String.self, 0, 2),
            previousLogin: try rows.decode(Date?.self, 0, 3),
            failuresSince: try rows.decode(Int.self, 0, 4),
            learnedSecondFactor: try rows.decode([UInt8]?.self, 0, 5).map {
              secret throws(PGUnreadableValue) in
              LearnedSecondFactor(
                secret: secret, step: UInt64(max(try rows.decode(Int64.self, 0, 6), 0)))
            },
            learnedRecoveryCodes: try rows.decode(String?.self, 0, 7).map {
              codes throws(PGUnreadableValue) in try Self.hashes(codes)
            }, storeID: try rows.decode(String?.self, 0, 8)))
      case "locked": return .locked(until: try rows.decode(Date.self, 0, 1))
      case "gone": return .gone
      case "code_used": return .codeAlreadyUsed
      case "code_wrong": return .codeWrong
      default: throw PGUnreadableValue(reason: "login_success gave no known outcome")
      }
    }
  }

  /// The hashes `login_success` lists: hex, comma-separated (none: empty).
  static func hashes(_ list: String) throws(PGUnreadableValue) -> [[UInt8]] {
    var hashes: [[UInt8]] = []
    for item in list.split(separator: ",") {
      guard let hash = Hex.decode(item) else {
        throw PGUnreadableValue(reason: "login_success gave a recovery code's hash not in hex")
      }
      hashes.append(hash)
    }
    return hashes
  }

  public func keyFileSealedSecret(key: String, proof: String) throws(AccountsError)
    -> KeyFileSealedSecret?
  {
    let (rows, access) = try statement(
      """
      SELECT encode(s.r_sealed, 'hex'), s.r_key_id
      FROM accounts.second_factor_sealed($1, $2::integer, $3) AS s
      """,
      [.text(key), waitMilliseconds, .text(proof)], for: .readWrite)
    guard rows.count == 1 else { return nil }
    return try access.decoded { () throws(PGUnreadableValue) in
      KeyFileSealedSecret(
        sealed: try rows.decode([UInt8].self, 0, 0), keyID: try rows.decode(String.self, 0, 1))
    }
  }

  /// How long a step waits for another writer, as the functions take it.
  var waitMilliseconds: PGValue { PGValue(max(Int(busyTimeout * 1000), 1)) }
}
