import AccountsCore
import AccountsSchema
import FoundationEssentials

/// Writes inside one IMMEDIATE transaction of `db`.
struct SQLiteAccountWriter: SQLiteReading, AccountWriter {
  let db: Database
  let path: String
  /// Stamped on every event and session written without a host.
  let host: String?
  func storeActivation(owner: NewAccount, at date: Date) throws(AccountsError) -> Account {
    // The row is made by the first migration; without it the file is damaged.
    let activationRow = try statement(path) {
      try Bool.fetchOne(db, sql: "SELECT 1 FROM activation WHERE id = 1")
    }
    guard activationRow == true else {
      throw .storage(.corrupt(location: path))
    }
    return try statement(path, username: owner.username) {
      // A Public device keeps no account, so the owner is account 1; the activation row names
      // it first (its reference is checked at commit), as accounts join Activated devices only.
      let activation = ActivationRecord(state: .activated, ownerID: 1, at: date)
      _ = try db.update("activation", activation.columnValues, key: "id")
      var record = AccountRecord(owner, at: date)
      record.id = 1
      try db.insert(into: "account", record.columnValues)
      return record.account(isOwner: true)
    }
  }

  func makePublic(at date: Date) throws(AccountsError) -> Int {
    try statement(path) {
      try db.execute(sql: "DELETE FROM account")
      let deleted = db.changesCount
      try db.execute(sql: "DELETE FROM account_group")
      let activation = ActivationRecord(state: .publicState, ownerID: nil, at: date)
      _ = try db.update("activation", activation.columnValues, key: "id")
      try db.execute(sql: "DELETE FROM login_throttle")
      return deleted
    }
  }

  func insert(_ account: NewAccount, at date: Date) throws(AccountsError) -> Account {
    // One cached statement, its values bound as they are: an import inserts a million rows
    // through it.
    var record = AccountRecord(account, at: date)
    let text = { (value: String?) in value.map(DatabaseValue.text) ?? .null }
    let values: [DatabaseValue] = [
      .text(record.username), .text(record.usernameKey), .text(record.fullName),
      .text(record.email), .text(record.passwordHash), record.mustChangePassword.databaseValue,
      text(record.disabledAt), .text(record.createdAt), .text(record.updatedAt),
      .text(record.passwordChangedAt), text(record.expiresAt), text(record.home),
      text(record.shell),
    ]
    return try statement(path, username: account.username) {
      try db.cachedStatement(
        sql: """
          INSERT INTO account (username, username_key, full_name, email, password_hash,
                               must_change_password, disabled_at, created_at, updated_at,
                               password_changed_at, last_login_at, expires_at, home, shell)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)
          """
      ).execute(arguments: StatementArguments(values: values))
      record.id = db.lastInsertedRowID
      return record.account(isOwner: false)
    }
  }

  func insert(_ accounts: [NewAccount], at date: Date) throws(AccountsError) -> [Int64?] {
    // One at a time: SQLite is in this process, so a row costs no round trip.
    var ids: [Int64?] = []
    ids.reserveCapacity(accounts.count)
    for account in accounts {
      do throws(AccountsError) {
        ids.append(try insert(account, at: date).id)
      } catch {
        guard case .usernameTaken = error else { throw error }
        ids.append(nil)
      }
    }
    return ids
  }

  func update(_ account: Account) throws(AccountsError) {
    // Only the columns that change are written (a trigger or a second writer sees no more).
    try statement(path, username: account.username) {
      let record = AccountRecord(account)
      guard
        let stored = try AccountRecord.fetchOne(
          db, sql: "SELECT \(AccountRecord.selection) FROM account WHERE id = ?",
          arguments: [account.id])
      else { throw AccountsError.noSuchAccount(account.username) }
      let before = Dictionary(uniqueKeysWithValues: stored.columnValues)
      let changed = record.columnValues.filter { before[$0.0] != $0.1 }.sorted { $0.0 < $1.0 }
      guard !changed.isEmpty else { return }
      let assignments = changed.map { "\($0.0) = ?" }.joined(separator: ", ")
      try db.execute(
        sql: "UPDATE account SET \(assignments) WHERE id = ?",
        arguments: StatementArguments(values: changed.map(\.1) + [.integer(account.id)]))
    }
  }

  func delete(_ account: Account) throws(AccountsError) {
    try statement(path) {
      try db.execute(sql: "DELETE FROM account WHERE id = ?", arguments: [account.id])
    }
  }

  func moveOwnership(to account: Account, at date: Date) throws(AccountsError) {
    // The state's date stays: the device was not activated again.
    try statement(path) {
      try db.execute(
        sql: "UPDATE activation SET owner_id = ? WHERE id = 1 AND state = 'Activated'",
        arguments: [account.id])
    }
  }

  func setTally(_ tally: ThrottleState?, key: String, at date: Date) throws(AccountsError) {
    try statement(path) {
      if let tally {
        let record = ThrottleRecord(key: key, tally: tally, at: date)
        try db.execute(
          sql: """
            INSERT INTO login_throttle (username_key, failures, lockouts, locked_until, updated_at)
            VALUES (?1, ?2, ?3, ?4, ?5)
            ON CONFLICT (username_key) DO UPDATE
            SET failures = ?2, lockouts = ?3, locked_until = ?4, updated_at = ?5
            """,
          arguments: [
            record.usernameKey, record.failures, record.lockouts, record.lockedUntil,
            record.updatedAt,
          ])
      } else {
        try db.execute(sql: "DELETE FROM login_throttle WHERE username_key = ?", arguments: [key])
      }
    }
  }

  func forgetTallies(lastFailureBefore cutoff: Date, notLockedAt now: Date)
    throws(AccountsError)
  {
    try statement(path) {
      try db.execute(
        sql: """
          DELETE FROM login_throttle
          WHERE updated_at < ?1 AND (locked_until IS NULL OR locked_until <= ?2)
          """,
        arguments: [Timestamp.string(from: cutoff), Timestamp.string(from: now)])
    }
  }

  func append(_ event: AuditRecord) throws(AccountsError) {
    try statement(path) {
      var record = AuditEventRecord(event)
      record.host = event.host ?? host
      try record.append(db)
    }
  }

  /// Appends `event` with the id a host's login cache gave it, once: false when an event of
  /// that id is in the log already.
  func appendOffline(_ event: QueuedEvent) throws(AccountsError) -> Bool {
    try statement(path) {
      let known = try Bool.fetchOne(
        db, sql: "SELECT 1 FROM audit_event WHERE offline_id = ?", arguments: [event.offlineID])
      guard known != true else { return false }
      var record = AuditEventRecord(event.record, offlineID: event.offlineID)
      record.host = event.record.host ?? host
      try record.append(db)
      return true
    }
  }

  func startSession(_ session: NewSession) throws(AccountsError) -> Session {
    try statement(path) {
      var record = SessionRecord(session)
      record.host = session.host ?? host
      try db.insert(into: "session", record.columnValues)
      record.id = db.lastInsertedRowID
      return record.session
    }
  }

  func touchSession(id: Int64, at date: Date, idleUntil: Date) throws(AccountsError) {
    try statement(path) {
      try db.execute(
        sql: "UPDATE session SET last_seen_at = ?, idle_until = ? WHERE id = ?",
        arguments: [Timestamp.string(from: date), Timestamp.string(from: idleUntil), id])
    }
  }

  func endSession(id: Int64) throws(AccountsError) -> Bool {
    try statement(path) {
      try db.execute(sql: "DELETE FROM session WHERE id = ?", arguments: [id])
      return db.changesCount > 0
    }
  }

  func endSessions(accountID: Int64, keeping: Int64?) throws(AccountsError) -> [Int64] {
    try statement(path) {
      try Int64.fetchAll(
        db,
        sql: "DELETE FROM session WHERE account_id = ? AND id IS NOT ? RETURNING id",
        arguments: [accountID, keeping]
      ).sorted()
    }
  }

  func endSessions(deadAt now: Date) throws(AccountsError) {
    try statement(path) {
      let time = Timestamp.string(from: now)
      try db.execute(
        sql: "DELETE FROM session WHERE expires_at <= ? OR idle_until <= ?",
        arguments: [time, time])
    }
  }

  func storeSecondFactor(_ factor: StoredSecondFactor, recoveryCodeHashes: [[UInt8]])
    throws(AccountsError)
  {
    try statement(path) {
      // Updated where the account has one, inserted otherwise.
      let values = SecondFactorRecord(factor).columnValues
      if try !db.update("second_factor", values, key: "account_id") {
        try db.insert(into: "second_factor", values)
      }
    }
    try replaceRecoveryCodes(accountID: factor.accountID, hashes: recoveryCodeHashes)
  }

  func removeSecondFactor(accountID: Int64) throws(AccountsError) -> Bool {
    // Its recovery codes go with it (ON DELETE CASCADE).
    try statement(path) {
      try db.execute(
        sql: "DELETE FROM second_factor WHERE account_id = ?", arguments: [accountID])
      return db.changesCount > 0
    }
  }

  func storePendingSecondFactor(_ pending: PendingSecondFactor) throws(AccountsError) {
    try statement(path) {
      try db.execute(
        sql: """
          INSERT OR REPLACE INTO pending_second_factor (account_id, sealed_secret, key_id,
            expires_at)
          VALUES (?, ?, ?, ?)
          """,
        arguments: [
          pending.accountID, Data(pending.sealedSecret), pending.keyID,
          Timestamp.string(from: pending.expiresAt),
        ])
    }
  }

  func replaceSecondFactorSecret(accountID: Int64, sealedSecret: [UInt8], keyID: String)
    throws(AccountsError) -> Bool
  {
    try statement(path) {
      try db.execute(
        sql: "UPDATE second_factor SET sealed_secret = ?, key_id = ? WHERE account_id = ?",
        arguments: [Data(sealedSecret), keyID, accountID])
      return db.changesCount == 1
    }
  }

  func removePendingSecondFactor(accountID: Int64) throws(AccountsError) -> Bool {
    try statement(path) {
      try db.execute(
        sql: "DELETE FROM pending_second_factor WHERE account_id = ?", arguments: [accountID])
      return db.changesCount == 1
    }
  }

  func acceptStep(_ step: UInt64, accountID: Int64) throws(AccountsError) -> Bool {
    try statement(path) {
      try db.execute(
        sql: "UPDATE second_factor SET last_step = ?1 WHERE account_id = ?2 AND last_step < ?1",
        arguments: [Int64(clamping: step), accountID])
      return db.changesCount == 1
    }
  }

  func replaceRecoveryCodes(accountID: Int64, hashes: [[UInt8]]) throws(AccountsError) {
    try statement(path) {
      try db.execute(sql: "DELETE FROM recovery_code WHERE account_id = ?", arguments: [accountID])
      let insert = try db.cachedStatement(
        sql: "INSERT OR IGNORE INTO recovery_code (account_id, code_hash) VALUES (?, ?)")
      for hash in hashes { try insert.execute(arguments: [accountID, hash]) }
    }
  }

  func useRecoveryCode(accountID: Int64, hash: [UInt8], at date: Date) throws(AccountsError)
    -> Bool
  {
    try statement(path) {
      try db.execute(
        sql: """
          UPDATE recovery_code SET used_at = ?
          WHERE account_id = ? AND code_hash = ? AND used_at IS NULL
          """, arguments: [Timestamp.string(from: date), accountID, hash])
      return db.changesCount == 1
    }
  }
}

extension SQLiteAccountWriter {
  func insertRows(_ rows: [[StoreValue]], into table: StoreRecordKind) throws(AccountsError) {
    for values in rows { try insertRow(values, into: table) }
  }

  private func insertRow(_ values: [StoreValue], into table: StoreRecordKind) throws(AccountsError)
  {
    let names = table.columns
    var ordered = values
    let sql: String
    if table.isSingleRecord {
      // The row the first migration made is replaced: its owner reference is checked at commit.
      let assignments = names.dropFirst().map { "\($0) = ?" }.joined(separator: ", ")
      sql = "UPDATE \(table.table) SET \(assignments) WHERE id = ?"
      ordered.append(ordered.removeFirst())
    } else {
      let marks = names.map { _ in "?" }.joined(separator: ", ")
      sql = "INSERT INTO \(table.table) (\(names.joined(separator: ", "))) VALUES (\(marks))"
    }
    let arguments = StatementArguments(
      values: ordered.map { value -> DatabaseValue in
        switch value {
        case .null: return .null
        case .integer(let number): return .integer(number)
        case .text(let text): return .text(text)
        case .blob(let bytes): return .blob(bytes)
        }
      })
    try statement(path) { try db.cachedStatement(sql: sql).execute(arguments: arguments) }
  }

  func raiseIDPositions(to positions: IDPositions) throws(AccountsError) {
    try statement(path) {
      for (table, last) in [
        (StoreRecordKind.auditEvent, positions.auditEvent), (.session, positions.session),
      ]
      where last > 0 {
        try db.execute(
          sql: "UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?",
          arguments: [last, table.table])
        if db.changesCount == 0 {
          try db.execute(
            sql: "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)",
            arguments: [table.table, last])
        }
      }
    }
  }
}
