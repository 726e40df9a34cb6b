import AccountsCore
import Foundation
import GRDB
import GRDBSQLite

extension SQLiteStore: AccountRepository {
  /// The file's path as given.
  public var location: String { path }

  public func read<T>(_ body: (any AccountReader) throws(AccountsError) -> T)
    throws(AccountsError) -> T
  {
    try run {
      try writer.read { db in
        // A file created but never migrated (a read-only open of a new file) reads as empty.
        let reader: any AccountReader =
          try Self.isMigrated(db) ? SQLiteAccountReader(db: db, path: path) : EmptyAccountReader()
        return try Self.passingThrough { () throws(AccountsError) in try body(reader) }
      }
    }
  }

  public func write<T>(_ body: (any AccountWriter) throws(AccountsError) -> T)
    throws(AccountsError) -> T
  {
    try run {
      try writer.writeWithoutTransaction { db in
        var result: T?
        try db.inTransaction(.immediate) {
          result = try Self.passingThrough { () throws(AccountsError) in
            try body(SQLiteAccountWriter(db: db, path: path))
          }
          return .commit
        }
        guard let result else { throw StoreError.failure(location: path, reason: "no result") }
        return result
      }
    }
  }

  public func consistencyFacts() throws(AccountsError) -> ConsistencyFacts {
    try run {
      try writer.read { db in
        var problems: [String] = []
        let integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check")
        if integrity != ["ok"] { problems += integrity }
        if try Row.fetchOne(db, sql: "PRAGMA foreign_key_check") != nil {
          problems.append("foreign key violation")
        }
        guard try Self.isMigrated(db) else {
          return ConsistencyFacts(integrityProblems: problems, device: nil)
        }
        let activation = try ActivationRecord.fetchOne(db, key: 1)
        let owner = activation?.ownerID
        let device = DeviceFacts(
          state: activation?.state, ownerID: owner,
          ownerExists: try owner.map { try AccountRecord.exists(db, key: $0) } ?? false,
          accountCount: try AccountRecord.fetchCount(db))
        return ConsistencyFacts(integrityProblems: problems, device: device)
      }
    }
  }

  /// Runs GRDB work, letting the core's errors through and translating the rest.
  private func run<T>(_ body: () throws -> T) throws(AccountsError) -> T {
    do {
      return try body()
    } catch let error as AccountsError {
      throw error
    } catch let error as PassedThrough {
      throw error.error
    } catch {
      throw AccountsError.storage(
        StoreError.translating(error, path: path, busyTimeout: busyTimeout))
    }
  }

  /// A core error carried through GRDB's untyped closures (rolling the transaction back).
  struct PassedThrough: Error { var error: AccountsError }

  static func passingThrough<T>(_ body: () throws(AccountsError) -> T) throws -> T {
    do {
      return try body()
    } catch {
      throw PassedThrough(error: error)
    }
  }
}

/// Translates what a statement throws: the core's errors as they are, a unique user name
/// taken as `.usernameTaken`, anything else from SQLite as a store error about `path`.
private func statement<T>(
  _ path: String, username: String? = nil, _ body: () throws -> T
) throws(AccountsError) -> T {
  do {
    return try body()
  } catch let error as AccountsError {
    throw error
  } catch let error as SQLiteStore.PassedThrough {
    // A core error from a callback inside the statement (`forEachRow`'s body writing to another
    // store, say): as it was thrown.
    throw error.error
  } catch let error as DatabaseError
    where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE && username != nil
  {
    throw .usernameTaken(username ?? "")
  } catch {
    throw .storage(StoreError.translating(error, path: path, busyTimeout: 0))
  }
}

/// A file that holds no migrated schema: an empty Public device.
private struct EmptyAccountReader: AccountReader {
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
  func secondFactorKeyIDs() -> Set<String> { [] }
  func rowCount(_ table: StoreTable) -> Int { 0 }
  func forEachRow(of table: StoreTable, _ body: ([StoreValue]) throws(AccountsError) -> Void) {}
  func idPositions() -> IDPositions { IDPositions(auditEvent: 0, session: 0) }
}

/// Reads inside one transaction of `db`.
private struct SQLiteAccountReader: SQLiteReading {
  let db: Database
  let path: String
}

/// The reads, shared by the reader and the writer (which reads inside its own transaction).
private protocol SQLiteReading: AccountReader {
  var db: Database { get }
  var path: String { get }
}

extension SQLiteReading {
  func deviceStatus() throws(AccountsError) -> DeviceStatus {
    try statement(path) {
      try ActivationRecord.fetchOne(db, key: 1)?.status
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
    try statement(path) { try AccountRecord.fetchCount(db) }
  }

  func tally(key: String) throws(AccountsError) -> ThrottleState {
    try statement(path) { try ThrottleRecord.fetchOne(db, key: key)?.tally ?? .clear }
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
          SELECT \(AccountRecord.selection), t.failures, t.lockouts, t.locked_until
          FROM account LEFT JOIN login_throttle AS t USING (username_key)
          ORDER BY account.username_key
          """)
      let first = AccountRecord.columnCount
      while let row = try rows.next() {
        let record = AccountRecord(row: row)
        let lockedUntil: String? = row[first + 2]
        let tally = ThrottleState(
          failures: row[first] ?? 0, lockouts: row[first + 1] ?? 0,
          lockedUntil: lockedUntil.flatMap(Timestamp.date))
        try SQLiteStore.passingThrough { () throws(AccountsError) in
          try body(
            AccountListing(account: record.account(isOwner: record.id == owner), tally: tally))
        }
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
          session: SessionRecord(row: row).session, username: row[SessionRecord.columnCount])
        try SQLiteStore.passingThrough { () throws(AccountsError) in try body(listing) }
      }
    }
  }

  func secondFactor(accountID: Int64) throws(AccountsError) -> StoredSecondFactor? {
    try statement(path) { try SecondFactorRecord.fetchOne(db, key: accountID)?.factor }
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

  func rowCount(_ table: StoreTable) throws(AccountsError) -> Int {
    try statement(path) {
      try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table.rawValue)") ?? 0
    }
  }

  func forEachRow(of table: StoreTable, _ body: ([StoreValue]) throws(AccountsError) -> Void)
    throws(AccountsError)
  {
    try statement(path) {
      let columns = table.columns.map(\.name).joined(separator: ", ")
      let rows = try Row.fetchCursor(
        db, sql: "SELECT \(columns) FROM \(table.rawValue) ORDER BY \(table.orderedBy)")
      while let row = try rows.next() {
        let values = (0..<row.count).map { index -> StoreValue in
          let value: DatabaseValue = row[index]
          switch value.storage {
          case .null: return .null
          case .int64(let number): return .integer(number)
          case .double(let number): return .integer(Int64(number))
          case .string(let text): return .text(text)
          case .blob(let data): return .blob([UInt8](data))
          }
        }
        try SQLiteStore.passingThrough { () throws(AccountsError) in try body(values) }
      }
    }
  }

  func idPositions() throws(AccountsError) -> IDPositions {
    try statement(path) {
      func last(_ table: StoreTable) throws -> Int64 {
        try Int64.fetchOne(
          db, sql: "SELECT seq FROM sqlite_sequence WHERE name = ?", arguments: [table.rawValue])
          ?? 0
      }
      return IDPositions(auditEvent: try last(.auditEvent), session: try last(.session))
    }
  }
}

/// Writes inside one IMMEDIATE transaction of `db`.
private struct SQLiteAccountWriter: SQLiteReading, AccountWriter {
  let db: Database
  let path: String
  func storeActivation(owner: NewAccount, at date: Date) throws(AccountsError) -> Account {
    // The row is made by the first migration; without it the file is damaged.
    guard try statement(path, { try ActivationRecord.exists(db, key: 1) }) else {
      throw .storage(.corrupt(location: path))
    }
    return try statement(path, username: owner.username) {
      // A Public device keeps no account, so the owner is account 1; the activation row names
      // it first (its reference is checked at commit), as accounts join Activated devices only.
      try ActivationRecord(state: .activated, ownerID: 1, at: date).update(db)
      var record = AccountRecord(owner, at: date)
      record.id = 1
      try record.insert(db)
      return record.account(isOwner: true)
    }
  }

  func makePublic(at date: Date) throws(AccountsError) -> Int {
    try statement(path) {
      let deleted = try AccountRecord.deleteAll(db)
      try ActivationRecord(state: .publicState, ownerID: nil, at: date).update(db)
      try ThrottleRecord.deleteAll(db)
      return deleted
    }
  }

  func insert(_ account: NewAccount, at date: Date) throws(AccountsError) -> Account {
    // One cached statement, its values bound straight from the strings: an import inserts a
    // million rows through it, and GRDB's argument arrays cost as much as SQLite's work.
    var record = AccountRecord(account, at: date)
    let prepared = try statement(path) {
      try db.cachedStatement(
        sql: """
          INSERT INTO account (username, username_key, full_name, email, password_hash,
                               must_change_password, disabled_at, created_at, updated_at,
                               password_changed_at, last_login_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)
          """)
    }
    let handle = prepared.sqliteStatement
    sqlite3_reset(handle)
    sqlite3_clear_bindings(handle)
    let texts: [(Int32, String?)] = [
      (1, record.username), (2, record.usernameKey), (3, record.fullName), (4, record.email),
      (5, record.passwordHash), (7, record.disabledAt), (8, record.createdAt),
      (9, record.updatedAt), (10, record.passwordChangedAt),
    ]
    for (index, text) in texts {
      if let text { bindText(handle, index, text) }
    }
    sqlite3_bind_int64(handle, 6, record.mustChangePassword ? 1 : 0)
    let code = sqlite3_step(handle)
    sqlite3_reset(handle)
    guard code == SQLITE_DONE else {
      if ResultCode(rawValue: sqlite3_extended_errcode(db.sqliteConnection))
        == .SQLITE_CONSTRAINT_UNIQUE
      {
        throw .usernameTaken(account.username)
      }
      let error = DatabaseError(
        resultCode: ResultCode(rawValue: code),
        message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
      throw .storage(StoreError.translating(error, path: path, busyTimeout: 0))
    }
    record.id = sqlite3_last_insert_rowid(db.sqliteConnection)
    return record.account(isOwner: false)
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
      try record.updateChanges(db, from: stored)
    }
  }

  func delete(_ account: Account) throws(AccountsError) {
    _ = try statement(path) { try AccountRecord.deleteOne(db, key: account.id) }
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
        // (GRDB's `upsert` reads back a rowid, which a WITHOUT ROWID table has not.)
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
        _ = try ThrottleRecord.deleteOne(db, key: key)
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
      try record.insert(db)
    }
  }

  func startSession(_ session: NewSession) throws(AccountsError) -> Session {
    try statement(path) {
      var record = SessionRecord(session)
      try record.insert(db)
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
    try statement(path) { try SessionRecord.deleteOne(db, key: id) }
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
      try SecondFactorRecord(factor).save(db)
    }
    try replaceRecoveryCodes(accountID: factor.accountID, hashes: recoveryCodeHashes)
  }

  func removeSecondFactor(accountID: Int64) throws(AccountsError) -> Bool {
    // Its recovery codes go with it (ON DELETE CASCADE).
    try statement(path) { try SecondFactorRecord.deleteOne(db, key: accountID) }
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
      for hash in hashes { try insert.execute(arguments: [accountID, Data(hash)]) }
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
          """, arguments: [Timestamp.string(from: date), accountID, Data(hash)])
      return db.changesCount == 1
    }
  }
}

extension SQLiteAccountWriter {
  func insertRows(_ rows: [[StoreValue]], into table: StoreTable) throws(AccountsError) {
    for values in rows { try insertRow(values, into: table) }
  }

  private func insertRow(_ values: [StoreValue], into table: StoreTable) throws(AccountsError) {
    let names = table.columns.map(\.name)
    var ordered = values
    let sql: String
    if table == .activation {
      // The row the first migration made is replaced: its owner reference is checked at commit.
      let assignments = names.dropFirst().map { "\($0) = ?" }.joined(separator: ", ")
      sql = "UPDATE activation SET \(assignments) WHERE id = ?"
      ordered.append(ordered.removeFirst())
    } else {
      let marks = names.map { _ in "?" }.joined(separator: ", ")
      sql = "INSERT INTO \(table.rawValue) (\(names.joined(separator: ", "))) VALUES (\(marks))"
    }
    let arguments = StatementArguments(
      ordered.map { value -> (any DatabaseValueConvertible)? in
        switch value {
        case .null: return nil
        case .integer(let number): return number
        case .text(let text): return text
        case .blob(let bytes): return Data(bytes)
        }
      })
    try statement(path) { try db.cachedStatement(sql: sql).execute(arguments: arguments) }
  }

  func raiseIDPositions(to positions: IDPositions) throws(AccountsError) {
    try statement(path) {
      for (table, last) in [
        (StoreTable.auditEvent, positions.auditEvent), (.session, positions.session),
      ]
      where last > 0 {
        try db.execute(
          sql: "UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?",
          arguments: [last, table.rawValue])
        if db.changesCount == 0 {
          try db.execute(
            sql: "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)",
            arguments: [table.rawValue, last])
        }
      }
    }
  }
}

/// SQLite's "copy the value now" destructor (`SQLITE_TRANSIENT`, a macro Swift cannot import).
private let sqliteTransient = unsafeBitCast(
  OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

/// Binds `text` to parameter `index` of `statement`, copied by SQLite.
private func bindText(_ statement: OpaquePointer?, _ index: Int32, _ text: String) {
  // An empty buffer may have no address, which SQLite would take for NULL.
  if text.isEmpty {
    _ = sqlite3_bind_text(statement, index, "", 0, sqliteTransient)
    return
  }
  var text = text
  text.withUTF8 { bytes in
    bytes.withMemoryRebound(to: CChar.self) { chars in
      _ = sqlite3_bind_text(
        statement, index, chars.baseAddress, Int32(chars.count), sqliteTransient)
    }
  }
}
