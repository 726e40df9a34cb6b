import AccountsCore
import AccountsCrypto
import AccountsSchema
import FoundationEssentials

extension PostgresAccess {
  func storeActivation(owner: NewAccount, at date: Date) throws(AccountsError) -> Account {
    // The activation row is locked by this transaction already (see `PostgresStore.write`), so
    // the state the core checked stays.
    // The owner's id comes first, so that the row can name it before the account exists (its
    // reference is checked at commit), as accounts join Activated devices only.
    let id = try single(Int64.self, query("SELECT nextval('accounts.account_id_seq')"))
    try query(
      """
      UPDATE accounts.activation SET state = 'Activated', owner_id = $1,
        changed_at = $2::timestamptz
      WHERE id = 1
      """, [PGValue(id), PGValue(date)])
    let inserted = try insertAccount(owner, at: date, id: id)
    guard let inserted else { throw .usernameTaken(owner.username) }
    var account = inserted
    account.isOwner = true
    return account
  }

  func makePublic(at date: Date) throws(AccountsError) -> Int {
    let deleted = try query("DELETE FROM accounts.account").changed
    try query("DELETE FROM accounts.account_group")
    try query(
      """
      UPDATE accounts.activation SET state = 'Public', owner_id = NULL,
        changed_at = $1::timestamptz
      WHERE id = 1
      """, [PGValue(date)])
    try query("DELETE FROM accounts.login_throttle")
    // As in SQLite, the next owner is account 1 again (no account is left to collide with).
    try query("SELECT setval('accounts.account_id_seq', 1, false)")
    try query("SELECT setval('accounts.account_group_id_seq', 1, false)")
    return deleted
  }

  func insert(_ account: NewAccount, at date: Date) throws(AccountsError) -> Account {
    guard let inserted = try insertAccount(account, at: date, id: nil) else {
      throw .usernameTaken(account.username)
    }
    return inserted
  }

  /// Inserts `new` (with `id`, or the next one); nil when its user name key is taken.
  ///
  /// A taken name is found before an id is drawn (`WHERE NOT EXISTS`; writers take turns, so
  /// nothing can take it in between), so that the ids of one import grow by one, as the import
  /// relies on to name a duplicate's first line, and the statement never fails: an import goes on
  /// and reports every duplicate. `ON CONFLICT DO NOTHING` stays as the constraint's backstop.
  private func insertAccount(_ new: NewAccount, at date: Date, id: Int64?)
    throws(AccountsError) -> Account?
  {
    let now = Timestamp.string(from: date)
    let disabledAt: PGValue = new.disabled ? .text(now) : .null
    let rows = try query(
      """
      INSERT INTO accounts.account (id, username, username_key, full_name, email, password_hash,
        must_change_password, disabled_at, created_at, updated_at, password_changed_at,
        expires_at, home, shell)
      SELECT coalesce($1::bigint, nextval('accounts.account_id_seq')),
        $2, $3, $4, $5, $6, $7::boolean, $8::timestamptz, $9::timestamptz, $9::timestamptz,
        $9::timestamptz, $10::timestamptz, $11, $12
      WHERE NOT EXISTS (SELECT 1 FROM accounts.account WHERE username_key = $3)
      ON CONFLICT (username_key) DO NOTHING
      RETURNING id
      """,
      [
        id.map { PGValue($0) } ?? .null, .text(new.username), .text(new.usernameKey),
        .text(new.fullName), .text(new.email), .text(new.passwordHash),
        PGValue(new.mustChangePassword), disabledAt, .text(now), PGValue(new.expiresAt),
        new.home.map { .text($0) } ?? .null, new.shell.map { .text($0) } ?? .null,
      ], prepared: true)
    guard rows.count == 1 else { return nil }
    let stored = try single(Int64.self, rows)
    let time = Timestamp.date(from: now) ?? date
    return Account(
      id: stored, username: new.username, usernameKey: new.usernameKey, fullName: new.fullName,
      email: new.email, passwordHash: new.passwordHash, isOwner: false,
      mustChangePassword: new.mustChangePassword, disabledAt: new.disabled ? time : nil,
      createdAt: time, updatedAt: time, passwordChangedAt: time, lastLoginAt: nil,
      expiresAt: new.expiresAt.flatMap { Timestamp.date(from: Timestamp.string(from: $0)) },
      home: new.home, shell: new.shell)
  }

  func update(_ account: Account) throws(AccountsError) {
    // Writers take turns (the activation row's lock), so the check for a taken name holds.
    let rows = try query(
      """
      UPDATE accounts.account SET username = $2, username_key = $3, full_name = $4, email = $5,
        password_hash = $6, must_change_password = $7::boolean, disabled_at = $8::timestamptz,
        created_at = $9::timestamptz, updated_at = $10::timestamptz,
        password_changed_at = $11::timestamptz, last_login_at = $12::timestamptz,
        expires_at = $13::timestamptz, uid = $14::bigint, home = $15, shell = $16
      WHERE id = $1 AND NOT EXISTS (
        SELECT 1 FROM accounts.account WHERE username_key = $3 AND id <> $1)
      """,
      [
        PGValue(account.id), .text(account.username), .text(account.usernameKey),
        .text(account.fullName), .text(account.email), .text(account.passwordHash),
        PGValue(account.mustChangePassword), PGValue(account.disabledAt),
        PGValue(account.createdAt), PGValue(account.updatedAt),
        PGValue(account.passwordChangedAt), PGValue(account.lastLoginAt),
        PGValue(account.expiresAt), account.uid.map { PGValue($0) } ?? .null,
        account.home.map { .text($0) } ?? .null, account.shell.map { .text($0) } ?? .null,
      ])
    guard rows.changed == 0 else { return }
    let exists = try query(
      "SELECT EXISTS (SELECT 1 FROM accounts.account WHERE id = $1)", [PGValue(account.id)])
    throw try single(Bool.self, exists)
      ? .usernameTaken(account.username) : .noSuchAccount(account.username)
  }

  func delete(_ account: Account) throws(AccountsError) {
    try query("DELETE FROM accounts.account WHERE id = $1", [PGValue(account.id)])
  }

  func moveOwnership(to account: Account, at date: Date) throws(AccountsError) {
    // The state's date stays: the device was not activated again.
    try query(
      "UPDATE accounts.activation SET owner_id = $1 WHERE id = 1 AND state = 'Activated'",
      [PGValue(account.id)])
  }

  func setTally(_ tally: ThrottleState?, key: String, at date: Date) throws(AccountsError) {
    guard let tally else {
      try query("DELETE FROM accounts.login_throttle WHERE username_key = $1", [.text(key)])
      return
    }
    try query(
      """
      INSERT INTO accounts.login_throttle (username_key, failures, lockouts, locked_until,
        updated_at)
      VALUES ($1, $2, $3, $4::timestamptz, $5::timestamptz)
      ON CONFLICT (username_key) DO UPDATE
      SET failures = EXCLUDED.failures, lockouts = EXCLUDED.lockouts,
        locked_until = EXCLUDED.locked_until, updated_at = EXCLUDED.updated_at
      """,
      [
        .text(key), PGValue(tally.failures), PGValue(tally.lockouts),
        PGValue(tally.lockedUntil), PGValue(date),
      ])
  }

  func forgetTallies(lastFailureBefore cutoff: Date, notLockedAt now: Date)
    throws(AccountsError)
  {
    try query(
      """
      DELETE FROM accounts.login_throttle
      WHERE updated_at < $1::timestamptz
        AND (locked_until IS NULL OR locked_until <= $2::timestamptz)
      """, [PGValue(cutoff), PGValue(now)])
  }

  func append(_ event: AuditRecord) throws(AccountsError) {
    try query(
      """
      INSERT INTO accounts.audit_event (occurred_at, kind, username, username_key, detail, host)
      VALUES ($1::timestamptz, $2, $3, $4, $5, $6)
      """,
      [
        PGValue(event.occurredAt), .text(event.kind.rawValue), PGValue(event.username),
        PGValue(event.usernameKey), PGValue(event.detail), PGValue(event.host ?? store.writingHost),
      ])
  }

  func startSession(_ new: NewSession) throws(AccountsError) -> Session {
    // Times as stored (millisecond text), so the session returned equals the one read back.
    func stored(_ date: Date) -> Date {
      Timestamp.date(from: Timestamp.string(from: date)) ?? date
    }
    let created = stored(new.createdAt)
    let idleUntil = stored(new.createdAt.addingTimeInterval(TimeInterval(new.idleSeconds)))
    let host = new.host ?? store.writingHost
    let rows = try query(
      """
      INSERT INTO accounts.session (token_hash, account_id, created_at, last_seen_at,
        expires_at, idle_seconds, idle_until, second_factor, host)
      VALUES ($1, $2, $3::timestamptz, $3::timestamptz, $4::timestamptz, $5, $6::timestamptz,
        $7::boolean, $8)
      RETURNING id
      """,
      [
        .bytes(new.tokenHash), PGValue(new.accountID), PGValue(created),
        PGValue(stored(new.expiresAt)), PGValue(new.idleSeconds), PGValue(idleUntil),
        PGValue(new.secondFactor), PGValue(host),
      ])
    return Session(
      id: try single(Int64.self, rows), accountID: new.accountID, createdAt: created,
      lastSeenAt: created, expiresAt: stored(new.expiresAt), idleSeconds: new.idleSeconds,
      idleUntil: idleUntil, secondFactor: new.secondFactor, host: host)
  }

  func touchSession(id: Int64, at date: Date, idleUntil: Date) throws(AccountsError) {
    try query(
      """
      UPDATE accounts.session SET last_seen_at = $1::timestamptz, idle_until = $2::timestamptz
      WHERE id = $3
      """, [PGValue(date), PGValue(idleUntil), PGValue(id)])
  }

  func endSession(id: Int64) throws(AccountsError) -> Bool {
    try query("DELETE FROM accounts.session WHERE id = $1", [PGValue(id)]).changed == 1
  }

  func endSessions(accountID: Int64, keeping: Int64?) throws(AccountsError) -> [Int64] {
    let rows = try query(
      """
      DELETE FROM accounts.session WHERE account_id = $1 AND id IS DISTINCT FROM $2::bigint
      RETURNING id
      """, [PGValue(accountID), keeping.map { PGValue($0) } ?? .null])
    return try decoded { () throws(PGUnreadableValue) in
      try (0..<rows.count).map { row throws(PGUnreadableValue) in
        try rows.decode(Int64.self, row, 0)
      }
    }.sorted()
  }

  func endSessions(deadAt now: Date) throws(AccountsError) {
    try query(
      """
      DELETE FROM accounts.session
      WHERE expires_at <= $1::timestamptz OR idle_until <= $1::timestamptz
      """, [PGValue(now)])
  }

  func storeSecondFactor(_ factor: StoredSecondFactor, recoveryCodeHashes: [[UInt8]])
    throws(AccountsError)
  {
    try query(
      """
      INSERT INTO accounts.second_factor (account_id, sealed_secret, key_id, last_step,
        enabled_at)
      VALUES ($1, $2, $3, $4, $5::timestamptz)
      ON CONFLICT (account_id) DO UPDATE
      SET sealed_secret = EXCLUDED.sealed_secret, key_id = EXCLUDED.key_id,
        server_secret = EXCLUDED.server_secret, last_step = EXCLUDED.last_step,
        enabled_at = EXCLUDED.enabled_at
      """,
      [
        PGValue(factor.accountID), .bytes(factor.sealedSecret), .text(factor.keyID),
        PGValue(Int64(clamping: factor.lastStep)), PGValue(factor.enabledAt),
      ])
    try replaceRecoveryCodes(accountID: factor.accountID, hashes: recoveryCodeHashes)
  }

  func replaceSecondFactorSecret(accountID: Int64, sealedSecret: [UInt8], keyID: String)
    throws(AccountsError) -> Bool
  {
    // A secret under `StoredSecondFactor.serverKeyID` is encrypted by the server's trigger.
    try query(
      """
      UPDATE accounts.second_factor SET sealed_secret = $2, key_id = $3, server_secret = NULL
      WHERE account_id = $1
      """, [PGValue(accountID), .bytes(sealedSecret), .text(keyID)]
    ).changed == 1
  }

  func removeSecondFactor(accountID: Int64) throws(AccountsError) -> Bool {
    // Its recovery codes go with it (ON DELETE CASCADE).
    try query(
      "DELETE FROM accounts.second_factor WHERE account_id = $1", [PGValue(accountID)]
    ).changed == 1
  }

  func storePendingSecondFactor(_ pending: PendingSecondFactor) throws(AccountsError) {
    try query(
      """
      INSERT INTO accounts.pending_second_factor (account_id, sealed_secret, key_id, expires_at)
      VALUES ($1, $2, $3, $4::timestamptz)
      ON CONFLICT (account_id) DO UPDATE
      SET sealed_secret = EXCLUDED.sealed_secret, key_id = EXCLUDED.key_id,
        server_secret = EXCLUDED.server_secret, expires_at = EXCLUDED.expires_at
      """,
      [
        PGValue(pending.accountID), .bytes(pending.sealedSecret), .text(pending.keyID),
        PGValue(pending.expiresAt),
      ])
  }

  func removePendingSecondFactor(accountID: Int64) throws(AccountsError) -> Bool {
    try query(
      "DELETE FROM accounts.pending_second_factor WHERE account_id = $1", [PGValue(accountID)]
    ).changed == 1
  }

  func acceptStep(_ step: UInt64, accountID: Int64) throws(AccountsError) -> Bool {
    try query(
      """
      UPDATE accounts.second_factor SET last_step = $1
      WHERE account_id = $2 AND last_step < $1
      """, [PGValue(Int64(clamping: step)), PGValue(accountID)]
    ).changed == 1
  }

  func replaceRecoveryCodes(accountID: Int64, hashes: [[UInt8]]) throws(AccountsError) {
    try query("DELETE FROM accounts.recovery_code WHERE account_id = $1", [PGValue(accountID)])
    guard !hashes.isEmpty else { return }
    try query(
      """
      INSERT INTO accounts.recovery_code (account_id, code_hash)
      SELECT $1, decode(hash, 'hex') FROM unnest($2::text[]) AS hash
      ON CONFLICT DO NOTHING
      """, [PGValue(accountID), Self.textArray(hashes.map(Hex.encode))])
  }

  func useRecoveryCode(accountID: Int64, hash: [UInt8], at date: Date) throws(AccountsError)
    -> Bool
  {
    try query(
      """
      UPDATE accounts.recovery_code SET used_at = $1::timestamptz
      WHERE account_id = $2 AND code_hash = $3 AND used_at IS NULL
      """, [PGValue(date), PGValue(accountID), .bytes(hash)]
    ).changed == 1
  }

  func insertRows(_ rows: [[StoreValue]], into table: StoreRecordKind) throws(AccountsError) {
    let columns = table.columns
    func casts(row: Int) -> [String] {
      table.fields.enumerated().map { index, type -> String in
        let mark = "$\(row * columns.count + index + 1)"
        switch type {
        case .time: return "\(mark)::timestamptz"
        case .boolean: return "\(mark)::int::boolean"
        case .integer: return "\(mark)::bigint"
        case .text, .blob: return mark
        }
      }
    }
    if table.isSingleRecord {
      // The row the first migration made is replaced: its owner reference is checked at commit.
      for values in rows {
        let assignments = zip(columns, casts(row: 0)).dropFirst().map { "\($0) = \($1)" }
        try query(
          """
          UPDATE accounts.\(table.table) SET \(assignments.joined(separator: ", ")) WHERE id = $1
          """, values.map(PGValue.init))
      }
      return
    }
    // One statement for the whole batch, prepared once for the usual batch size.
    let tuples = (0..<rows.count).map { "(" + casts(row: $0).joined(separator: ", ") + ")" }
    try query(
      """
      INSERT INTO accounts.\(table.table) (\(columns.joined(separator: ", ")))
      VALUES \(tuples.joined(separator: ", "))
      """, rows.flatMap { $0.map(PGValue.init) }, prepared: rows.count == StoreCopyFlow.batchSize)
  }

  func raiseIDPositions(to positions: IDPositions) throws(AccountsError) {
    // Copied rows came with their ids: each sequence goes past the highest stored id, and past
    // the source's last id when that is higher (a deleted newest row is not numbered again).
    try query(
      """
      SELECT setval(pg_get_serial_sequence('accounts.' || t, 'id'), greatest(m, 1), m > 0)
      FROM (VALUES
        ('account', (SELECT coalesce(max(id), 0) FROM accounts.account)),
        ('account_group', (SELECT coalesce(max(id), 0) FROM accounts.account_group)),
        ('ssh_key', (SELECT coalesce(max(id), 0) FROM accounts.ssh_key)),
        ('audit_event', greatest($1::bigint, (SELECT coalesce(max(id), 0)
                                             FROM accounts.audit_event))),
        ('session', greatest($2::bigint, (SELECT coalesce(max(id), 0) FROM accounts.session)))
      ) AS s (t, m)
      """, [PGValue(positions.auditEvent), PGValue(positions.session)])
  }
}
