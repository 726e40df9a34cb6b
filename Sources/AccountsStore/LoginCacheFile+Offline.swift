import AccountsCore
import AccountsCrypto
import FoundationEssentials

// MARK: - While the server is away

extension LoginCacheFile {
  public func serverAwayUntil() throws(AccountsError) -> Date? {
    try read { db in
      let until = try String?.fetchOne(
        db, sql: "SELECT unreachable_until FROM cache_setting WHERE id = 1")
      return (until ?? nil).flatMap(Timestamp.date(from:))
    }
  }

  public func markServerAway(until: Date) throws(AccountsError) {
    try write { db in
      try db.execute(
        sql: "UPDATE cache_setting SET unreachable_until = ? WHERE id = 1",
        arguments: [Timestamp.string(from: until)])
    }
  }

  public func tally(key: String) throws(AccountsError) -> ThrottleState {
    try read { db in try Self.tally(db, key: key) }
  }

  static func tally(_ db: Database, key: String) throws -> ThrottleState {
    guard
      let row = try Row.fetchOne(
        db, sql: "SELECT failures, lockouts, locked_until FROM cached_tally WHERE username_key = ?",
        arguments: [key])
    else { return .clear }
    let until: String? = try row[2]
    return ThrottleState(
      failures: try row[0], lockouts: try row[1],
      lockedUntil: until.flatMap(Timestamp.date(from:)))
  }

  public func recordFailure(_ record: LoginFailureRecord) throws(AccountsError)
    -> LoginFailureOutcome
  {
    let (now, key) = (record.now, record.usernameKey)
    return try write { db in
      let tally = try Self.tally(db, key: key)
      if let until = tally.lock(at: now) {
        try Self.queue(
          AuditRecord(
            .loginFailure, at: now, username: record.username, usernameKey: key,
            detail: record.refusalDetail, host: writingHost), db)
        return .alreadyLocked(until: until)
      }
      let (next, lockedUntil) = record.policy.tally(afterFailure: tally, at: now)
      try Self.queue(
        AuditRecord(
          .loginFailure, at: now, username: record.username, usernameKey: key,
          detail: record.detail, host: writingHost), db)
      if let lockedUntil {
        try Self.queue(
          AuditRecord(
            .lockout, at: now, username: record.username, usernameKey: key,
            detail: record.lockoutDetail(until: lockedUntil), host: writingHost), db)
      }
      try db.execute(
        sql: """
          INSERT INTO cached_tally (username_key, failures, lockouts, locked_until)
          VALUES (?, ?, ?, ?)
          ON CONFLICT (username_key) DO UPDATE SET failures = excluded.failures,
            lockouts = excluded.lockouts, locked_until = excluded.locked_until
          """,
        arguments: [
          key, next.failures, next.lockouts, next.lockedUntil.map(Timestamp.string(from:)),
        ])
      return lockedUntil.map { .lockedNow(until: $0) } ?? .counted(failures: next.failures)
    }
  }

  public func queue(_ event: AuditRecord) throws(AccountsError) {
    try write { db in try Self.queue(event, db) }
  }

  static func queue(_ event: AuditRecord, _ db: Database) throws {
    try db.execute(
      sql: """
        INSERT INTO queued_event (offline_id, at, kind, username, username_key, detail, host)
        VALUES (?, ?, ?, ?, ?, ?, ?)
        """,
      arguments: [
        try Hex.encode(SecureRandom.bytes(16)), Timestamp.string(from: event.occurredAt),
        event.kind.rawValue, event.username, event.usernameKey, event.detail, event.host,
      ])
  }

  public func recordSuccess(key: String, proof: VerificationProof?, events: [AuditRecord])
    throws(AccountsError) -> Bool
  {
    try write { db in
      switch proof {
      case .totp(let step):
        try db.execute(
          sql: """
            UPDATE cached_login SET last_step = ?
            WHERE username_key = ? AND (last_step IS NULL OR last_step < ?)
            """, arguments: [Int64(clamping: step), key, Int64(clamping: step)])
        guard db.changesCount == 1 else { return false }
      case .recovery(let hash):
        try db.execute(
          sql: "DELETE FROM cached_recovery_code WHERE username_key = ? AND hash = ?",
          arguments: [key, hash])
        guard db.changesCount == 1 else { return false }
      case .serverCheck, nil:
        // A code checked by the server never reaches the cache: offline, the cache checks it.
        break
      }
      try db.execute(sql: "DELETE FROM cached_tally WHERE username_key = ?", arguments: [key])
      for event in events { try Self.queue(event, db) }
      return true
    }
  }
}

// MARK: - Queued events

extension LoginCacheFile {
  public func queuedEvents() throws(AccountsError) -> [QueuedEvent] {
    try read { db in
      try Row.fetchAll(
        db,
        sql: """
          SELECT offline_id, at, kind, username, username_key, detail, host FROM queued_event
          ORDER BY at, rowid
          """
      ).map { row in
        let at: String = try row[1]
        guard let date = Timestamp.date(from: at) else {
          throw UnreadableValue(reason: "a queued event's time is not a time")
        }
        return QueuedEvent(
          offlineID: try row[0],
          record: AuditRecord(
            AuditEventKind(rawValue: try row[2]), at: date, username: try row[3],
            usernameKey: try row[4], detail: try row[5], host: try row[6]))
      }
    }
  }

  public func dequeue(offlineID: String) throws(AccountsError) {
    try write { db in
      try db.execute(sql: "DELETE FROM queued_event WHERE offline_id = ?", arguments: [offlineID])
    }
  }
}
