import AccountsCore
import AccountsSchema
import FoundationEssentials

/// A file that holds no migrated schema: an empty Public device.
struct EmptyAccountReader: AccountReader {
  func deviceStatus() -> DeviceStatus { DeviceStatus(state: .publicState, changedAt: nil) }
  func account(key: String) -> Account? { nil }
  func owner() -> Account? { nil }
  func accountCount() -> Int { 0 }
  func tally(key: String) -> ThrottleState { .clear }
  func eventCount(key: String, kind: AuditEventKind, afterLatestOf kinds: [AuditEventKind])
    -> Int
  { 0 }
  func forEachAccount(_ body: (AccountListing) throws(AccountsError) -> Void) {}
  func forEachEvent(_ query: AuditQuery, _ body: (AuditEvent) throws(AccountsError) -> Void) {}
  func account(id: Int64) -> Account? { nil }
  func session(tokenHash: [UInt8]) -> Session? { nil }
  func session(id: Int64) -> Session? { nil }
  func forEachSession(
    accountID: Int64?, liveAt now: Date, _ body: (SessionListing) throws(AccountsError) -> Void
  ) {}
  func secondFactor(accountID: Int64) -> StoredSecondFactor? { nil }
  func recoveryCodesLeft(accountID: Int64) -> Int { 0 }
  func hasRecoveryCode(accountID: Int64, hash: [UInt8]) -> Bool { false }
  func unusedRecoveryCodeHashes(accountID: Int64) -> [[UInt8]] { [] }
  func secondFactorKeyIDs() -> Set<String> { [] }
  func pendingSecondFactor(accountID: Int64) -> PendingSecondFactor? { nil }
  func rowCount(_ table: StoreRecordKind) -> Int { 0 }
  func forEachRow(of table: StoreRecordKind, _ body: ([StoreValue]) throws(AccountsError) -> Void) {
  }
  func idPositions() -> IDPositions { IDPositions(auditEvent: 0, session: 0) }
}

/// Reads inside one transaction of `db`.
struct SQLiteAccountReader: SQLiteReading {
  let db: Database
  let path: String
}

/// The reads, shared by the reader and the writer (which reads inside its own transaction).
protocol SQLiteReading: AccountReader {
  var db: Database { get }
  var path: String { get }
}

extension SQLiteReading {
  func deviceStatus() throws(AccountsError) -> DeviceStatus {
    try statement(path) {
      try ActivationRecord.fetchOne(
        db, sql: "SELECT \(ActivationRecord.selection) FROM activation WHERE id = 1")?.status
        ?? DeviceStatus(state: .publicState, changedAt: nil)
    }
  }

  private func ownerID() throws -> Int64? {
    try Int64.fetchOne(db, sql: "SELECT owner_id FROM activation WHERE id = 1")
  }

  func account(key: String) throws(AccountsError) -> Account? {
    try statement(path) {
      guard
        let record = try AccountRecord.fetchOne(
          db, sql: "SELECT \(AccountRecord.selection) FROM account WHERE username_key = ?",
          arguments: [key])
      else { return nil }
      return record.account(isOwner: try record.id == ownerID())
    }
  }

  func owner() throws(AccountsError) -> Account? {
    try statement(path) {
      try AccountRecord.fetchOne(
        db,
        sql: """
          SELECT \(AccountRecord.selection) FROM account
          JOIN activation ON activation.owner_id = account.id AND activation.id = 1
          """
      )?.account(isOwner: true)
    }
  }

  func accountCount() throws(AccountsError) -> Int {
    try statement(path) { try Int.fetchOne(db, sql: "SELECT count(*) FROM account") ?? 0 }
  }

  func tally(key: String) throws(AccountsError) -> ThrottleState {
    try statement(path) {
      try ThrottleRecord.fetchOne(
        db, sql: "SELECT \(ThrottleRecord.selection) FROM login_throttle WHERE username_key = ?",
        arguments: [key])?.tally ?? .clear
    }
  }

  func eventCount(key: String, kind: AuditEventKind, afterLatestOf kinds: [AuditEventKind])
    throws(AccountsError) -> Int
  {
    try statement(path) {
      let marks = kinds.map { _ in "?" }.joined(separator: ", ")
      var arguments: StatementArguments = [key, kind.rawValue, key]
      arguments += StatementArguments(kinds.map(\.rawValue))
      return try Int.fetchOne(
        db,
        sql: """
          SELECT count(*) FROM audit_event
          WHERE username_key = ? AND kind = ?
            AND id > (SELECT coalesce(max(id), 0) FROM audit_event
                      WHERE username_key = ? AND kind IN (\(marks)))
          """, arguments: arguments) ?? 0
    }
  }

  func forEachAccount(_ body: (AccountListing) throws(AccountsError) -> Void)
    throws(AccountsError)
  {
    try statement(path) {
      let owner = try ownerID()
      let rows = try Row.fetchCursor(
        db,
        sql: """
          SELECT \(AccountRecord.selection), t.failures, t.lockouts, t.locked_until,
                 (SELECT group_concat(name, ',') FROM (
                    SELECT g.name FROM group_member AS m
                    JOIN account_group AS g ON g.id = m.group_id
                    WHERE m.account_id = account.id ORDER BY g.name))
          FROM account LEFT JOIN login_throttle AS t USING (username_key)
          ORDER BY account.username_key
          """)
      let first = AccountRecord.columnCount
      while let row = try rows.next() {
        let record = try AccountRecord(row: row)
        let lockedUntil: String? = try row[first + 2]
        let tally = ThrottleState(
          failures: try row[first] ?? 0, lockouts: try row[first + 1] ?? 0,
          lockedUntil: lockedUntil.flatMap(Timestamp.date))
        // Group names hold no comma (their rules), so the list splits back exactly.
        let groups: String? = try row[first + 3]
        let listing = AccountListing(
          account: record.account(isOwner: record.id == owner), tally: tally,
          groups: groups.map { $0.split(separator: ",").map(String.init) } ?? [])
        try SQLiteStore.passingThrough { () throws(AccountsError) in try body(listing) }
      }
    }
  }

  func forEachEvent(_ query: AuditQuery, _ body: (AuditEvent) throws(AccountsError) -> Void)
    throws(AccountsError)
  {
    try statement(path) {
      var conditions: [String] = []
      var arguments = StatementArguments()
      if let key = query.usernameKey {
        conditions.append("username_key = ?")
        arguments += [key]
      }
      if let kind = query.kind {
        conditions.append("kind = ?")
        arguments += [kind.rawValue]
      }
      if let since = query.since {
        conditions.append("occurred_at >= ?")
        arguments += [Timestamp.string(from: since)]
      }
      if let host = query.host {
        conditions.append("host = ?")
        arguments += [host]
      }
      let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
      arguments += [query.limit ?? -1]
      let rows = try AuditEventRecord.fetchCursor(
        db,
        sql: """
          SELECT * FROM (
            SELECT \(AuditEventRecord.selection) FROM audit_event \(filter)
            ORDER BY id DESC LIMIT ?)
          ORDER BY id ASC
          """, arguments: arguments)
      while let record = try rows.next() {
        try SQLiteStore.passingThrough { () throws(AccountsError) in try body(record.event) }
      }
    }
  }

  func account(id: Int64) throws(AccountsError) -> Account? {
    try statement(path) {
      guard
        let record = try AccountRecord.fetchOne(
          db, sql: "SELECT \(AccountRecord.selection) FROM account WHERE id = ?", arguments: [id])
      else { return nil }
      return record.account(isOwner: try record.id == ownerID())
    }
  }

  func session(tokenHash: [UInt8]) throws(AccountsError) -> Session? {
    try statement(path) {
      try SessionRecord.fetchOne(
        db, sql: "SELECT \(SessionRecord.selection) FROM session WHERE token_hash = ?",
        arguments: [Data(tokenHash)]
      )?.session
    }
  }

  func session(id: Int64) throws(AccountsError) -> Session? {
    try statement(path) {
      try SessionRecord.fetchOne(
        db, sql: "SELECT \(SessionRecord.selection) FROM session WHERE id = ?", arguments: [id]
      )?.session
    }
  }

  func forEachSession(
    accountID: Int64?, liveAt now: Date, _ body: (SessionListing) throws(AccountsError) -> Void
  ) throws(AccountsError) {
    try statement(path) {
      let time = Timestamp.string(from: now)
      var arguments: StatementArguments = [time, time]
      var filter = ""
      if let accountID {
        filter = "AND session.account_id = ?"
        arguments += [accountID]
      }
      let rows = try Row.fetchCursor(
        db,
        sql: """
          SELECT \(SessionRecord.selection), account.username
          FROM session JOIN account ON account.id = session.account_id
          WHERE session.expires_at > ? AND session.idle_until > ? \(filter)
          ORDER BY session.id
          """, arguments: arguments)
      while let row = try rows.next() {
        let listing = SessionListing(
          session: try SessionRecord(row: row).session,
          username: try row[SessionRecord.columnCount])
        try SQLiteStore.passingThrough { () throws(AccountsError) in try body(listing) }
      }
    }
  }

  func secondFactor(accountID: Int64) throws(AccountsError) -> StoredSecondFactor? {
    try statement(path) {
      try SecondFactorRecord.fetchOne(
        db, sql: "SELECT \(SecondFactorRecord.selection) FROM second_factor WHERE account_id = ?",
        arguments: [accountID])?.factor
    }
  }

  func unusedRecoveryCodeHashes(accountID: Int64) throws(AccountsError) -> [[UInt8]] {
    try statement(path) {
      try [UInt8].fetchAll(
        db,
        sql: """
          SELECT code_hash FROM recovery_code WHERE account_id = ? AND used_at IS NULL
          ORDER BY code_hash
          """, arguments: [accountID])
    }
  }

  func hasRecoveryCode(accountID: Int64, hash: [UInt8]) throws(AccountsError) -> Bool {
    try statement(path) {
      try Bool.fetchOne(
        db,
        sql: """
          SELECT EXISTS (SELECT 1 FROM recovery_code
                         WHERE account_id = ? AND code_hash = ? AND used_at IS NULL)
          """, arguments: [accountID, Data(hash)]) ?? false
    }
  }

  func recoveryCodesLeft(accountID: Int64) throws(AccountsError) -> Int {
    try statement(path) {
      try Int.fetchOne(
        db, sql: "SELECT count(*) FROM recovery_code WHERE account_id = ? AND used_at IS NULL",
        arguments: [accountID]) ?? 0
    }
  }

  func secondFactorKeyIDs() throws(AccountsError) -> Set<String> {
    try statement(path) {
      Set(try String.fetchAll(db, sql: "SELECT DISTINCT key_id FROM second_factor"))
    }
  }

  func pendingSecondFactor(accountID: Int64) throws(AccountsError) -> PendingSecondFactor? {
    try statement(path) {
      guard
        let row = try Row.fetchOne(
          db,
          sql: """
            SELECT sealed_secret, key_id, expires_at FROM pending_second_factor
            WHERE account_id = ?
            """, arguments: [accountID])
      else { return nil }
      let sealed: Data = try row[0]
      let expiresAt: String = try row[2]
      return PendingSecondFactor(
        accountID: accountID, sealedSecret: [UInt8](sealed), keyID: try row[1],
        expiresAt: Timestamp.date(from: expiresAt) ?? .distantPast)
    }
  }

  func rowCount(_ table: StoreRecordKind) throws(AccountsError) -> Int {
    try statement(path) {
      try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table.table)") ?? 0
    }
  }

  func forEachRow(of table: StoreRecordKind, _ body: ([StoreValue]) throws(AccountsError) -> Void)
    throws(AccountsError)
  {
    try statement(path) {
      let columns = table.columns.joined(separator: ", ")
      let rows = try Row.fetchCursor(
        db, sql: "SELECT \(columns) FROM \(table.table) ORDER BY \(table.orderedBy)")
      while let row = try rows.next() {
        let values = (0..<row.count).map { index -> StoreValue in
          switch row.values[index] {
          case .null: return .null
          case .integer(let number): return .integer(number)
          case .real(let number): return .integer(Int64(number))
          case .text(let text): return .text(text)
          case .blob(let bytes): return .blob(bytes)
          }
        }
        try SQLiteStore.passingThrough { () throws(AccountsError) in try body(values) }
      }
    }
  }

  func idPositions() throws(AccountsError) -> IDPositions {
    try statement(path) {
      func last(_ table: StoreRecordKind) throws -> Int64 {
        try Int64.fetchOne(
          db, sql: "SELECT seq FROM sqlite_sequence WHERE name = ?", arguments: [table.table])
          ?? 0
      }
      return IDPositions(auditEvent: try last(.auditEvent), session: try last(.session))
    }
  }
}
