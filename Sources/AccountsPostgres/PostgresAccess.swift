import AccountsCore
import AccountsCrypto
import AccountsSchema
import FoundationEssentials

/// The reads and writes of one transaction on a PostgreSQL store, in the core's words.
///
/// Reads hand it out as an `AccountReader` inside a READ ONLY transaction, so it writes only
/// inside `write`. Times go in as the core's UTC text (`$n::timestamptz`) and come out through
/// `accounts.stamp`; bytes go in binary and come out as hex.
struct PostgresAccess: AccountWriter {
  let db: PGConnection
  let store: PostgresStore

  /// The columns `account(_:_:)` reads, then whether the account is the owner, from
  /// `accounts.account_view AS a` (the hash sealed for a caller that does not administer).
  static let accountColumns = """
    a.id, a.username, a.username_key, a.full_name, a.email, a.password_hash,
    a.must_change_password, accounts.stamp(a.disabled_at), accounts.stamp(a.created_at),
    accounts.stamp(a.updated_at), accounts.stamp(a.password_changed_at),
    accounts.stamp(a.last_login_at),
    a.id IS NOT DISTINCT FROM (SELECT owner_id FROM accounts.activation WHERE id = 1),
    accounts.stamp(a.expires_at), a.uid, a.home, a.shell
    """
  static let accountColumnCount = 17

  /// The columns `session(_:_:)` reads.
  static let sessionColumns = """
    s.id, s.account_id, accounts.stamp(s.created_at), accounts.stamp(s.last_seen_at),
    accounts.stamp(s.expires_at), s.idle_seconds, accounts.stamp(s.idle_until), s.second_factor,
    s.host
    """
  static let sessionColumnCount = 9

  /// Runs one statement, its failure as a store error.
  @discardableResult
  func query(_ sql: String, _ parameters: [PGValue] = [], prepared: Bool = false)
    throws(AccountsError) -> PGRows
  {
    do {
      return try db.run(sql, parameters, prepared: prepared)
    } catch {
      throw .storage(store.translate(error))
    }
  }

  /// Runs `sql` through a cursor, `body` called with each row.
  ///
  /// A thousand rows are fetched at a time (a million accounts are never held at once). The
  /// cursor ends with the transaction.
  func forEach(
    _ sql: String, _ parameters: [PGValue] = [],
    _ body: (PGRows, Int) throws(AccountsError) -> Void
  ) throws(AccountsError) {
    let name = "accounts_rows_\(db.nextCursorNumber())"
    try query("DECLARE \(name) NO SCROLL CURSOR FOR \(sql)", parameters)
    while true {
      let rows = try query("FETCH 1000 FROM \(name)")
      if rows.count == 0 { break }
      for row in 0..<rows.count { try body(rows, row) }
      if rows.count < 1000 { break }
    }
  }

  /// Decodes through `body`; a value that cannot be read is a store error about this store.
  func decoded<T>(_ body: () throws(PGUnreadableValue) -> T) throws(AccountsError) -> T {
    try storing { () throws(StoreError) in try decoding(location: store.location, body) }
  }

  func account(_ rows: PGRows, _ row: Int) throws(AccountsError) -> Account {
    try decoded { () throws(PGUnreadableValue) in
      Account(
        id: try rows.decode(Int64.self, row, 0), username: try rows.decode(String.self, row, 1),
        usernameKey: try rows.decode(String.self, row, 2),
        fullName: try rows.decode(String.self, row, 3),
        email: try rows.decode(String.self, row, 4),
        passwordHash: try rows.decode(String.self, row, 5),
        isOwner: try rows.decode(Bool.self, row, 12),
        mustChangePassword: try rows.decode(Bool.self, row, 6),
        disabledAt: try rows.decode(Date?.self, row, 7),
        createdAt: try rows.decode(Date.self, row, 8),
        updatedAt: try rows.decode(Date.self, row, 9),
        passwordChangedAt: try rows.decode(Date.self, row, 10),
        lastLoginAt: try rows.decode(Date?.self, row, 11),
        expiresAt: try rows.decode(Date?.self, row, 13),
        uid: try rows.decode(Int64?.self, row, 14), home: try rows.decode(String?.self, row, 15),
        shell: try rows.decode(String?.self, row, 16))
    }
  }

  private func session(_ rows: PGRows, _ row: Int) throws(AccountsError) -> Session {
    try decoded { () throws(PGUnreadableValue) in
      Session(
        id: try rows.decode(Int64.self, row, 0), accountID: try rows.decode(Int64.self, row, 1),
        createdAt: try rows.decode(Date.self, row, 2),
        lastSeenAt: try rows.decode(Date.self, row, 3),
        expiresAt: try rows.decode(Date.self, row, 4),
        idleSeconds: try rows.decode(Int.self, row, 5),
        idleUntil: try rows.decode(Date.self, row, 6),
        secondFactor: try rows.decode(Bool.self, row, 7),
        host: try rows.decode(String?.self, row, 8))
    }
  }

  /// The one value of a one-row result (`count(*)`, `EXISTS`).
  func single<T: PGDecodable>(_ type: T.Type, _ rows: PGRows) throws(AccountsError) -> T {
    try decoded { () throws(PGUnreadableValue) in try rows.decode(T.self, 0, 0) }
  }

  /// An activation state as stored.
  static func state(_ rows: PGRows, _ row: Int, _ column: Int)
    throws(PGUnreadableValue) -> ActivationState
  {
    guard let state = ActivationState(rawValue: try rows.decode(String.self, row, column)) else {
      throw PGUnreadableValue(reason: "column \(column + 1) is not a device state")
    }
    return state
  }

  private func oneAccount(where condition: String, _ parameters: [PGValue])
    throws(AccountsError) -> Account?
  {
    let rows = try query(
      "SELECT \(Self.accountColumns) FROM accounts.account_view AS a WHERE \(condition)",
      parameters)
    return rows.count == 0 ? nil : try account(rows, 0)
  }

  // MARK: - Reads

  func deviceStatus() throws(AccountsError) -> DeviceStatus {
    let rows = try query(
      "SELECT state, accounts.stamp(changed_at) FROM accounts.activation WHERE id = 1")
    guard rows.count == 1 else { return DeviceStatus(state: .publicState, changedAt: nil) }
    return try decoded { () throws(PGUnreadableValue) in
      DeviceStatus(state: try Self.state(rows, 0, 0), changedAt: try rows.decode(Date?.self, 0, 1))
    }
  }

  func account(key: String) throws(AccountsError) -> Account? {
    try oneAccount(where: "a.username_key = $1", [.text(key)])
  }

  func owner() throws(AccountsError) -> Account? {
    try oneAccount(
      where: "a.id = (SELECT owner_id FROM accounts.activation WHERE id = 1)", [])
  }

  func accountCount() throws(AccountsError) -> Int {
    try single(Int.self, query("SELECT count(*) FROM accounts.account"))
  }

  func tally(key: String) throws(AccountsError) -> ThrottleState {
    let rows = try query(
      """
      SELECT failures, lockouts, accounts.stamp(locked_until) FROM accounts.login_throttle
      WHERE username_key = $1
      """, [.text(key)])
    guard rows.count == 1 else { return .clear }
    return try decoded { () throws(PGUnreadableValue) in try Self.tally(rows, 0, 0) }
  }

  func eventCount(key: String, kind: AuditEventKind, afterLatestOf kinds: [AuditEventKind])
    throws(AccountsError) -> Int
  {
    // Through the function, which a host role may call though it may not read the log.
    let rows = try query(
      "SELECT accounts.event_count($1, $2, $3::text[])",
      [.text(key), .text(kind.rawValue), Self.textArray(kinds.map(\.rawValue))])
    return try single(Int.self, rows)
  }

  /// The tally in columns `first`…`first + 2` of row `row` (clear when the row has none).
  private static func tally(_ rows: PGRows, _ row: Int, _ first: Int)
    throws(PGUnreadableValue) -> ThrottleState
  {
    ThrottleState(
      failures: try rows.decode(Int?.self, row, first) ?? 0,
      lockouts: try rows.decode(Int?.self, row, first + 1) ?? 0,
      lockedUntil: try rows.decode(Date?.self, row, first + 2))
  }

  func forEachAccount(_ body: (AccountListing) throws(AccountsError) -> Void)
    throws(AccountsError)
  {
    let first = Self.accountColumnCount
    try forEach(
      """
      SELECT \(Self.accountColumns), t.failures, t.lockouts, accounts.stamp(t.locked_until),
        (SELECT string_agg(g.name, ',' ORDER BY g.name) FROM accounts.group_member AS m
         JOIN accounts.account_group AS g ON g.id = m.group_id WHERE m.account_id = a.id)
      FROM accounts.account_view AS a LEFT JOIN accounts.login_throttle AS t USING (username_key)
      ORDER BY a.username_key
      """
    ) { rows, row throws(AccountsError) in
      let (tally, groups) = try decoded { () throws(PGUnreadableValue) in
        (try Self.tally(rows, row, first), try rows.decode(String?.self, row, first + 3))
      }
      // Group names hold no comma (their rules), so the list splits back exactly.
      try body(
        AccountListing(
          account: account(rows, row), tally: tally,
          groups: groups.map { $0.split(separator: ",").map(String.init) } ?? []))
    }
  }

  func forEachEvent(_ query: AuditQuery, _ body: (AuditEvent) throws(AccountsError) -> Void)
    throws(AccountsError)
  {
    var conditions: [String] = []
    var parameters: [PGValue] = []
    if let key = query.usernameKey {
      parameters.append(.text(key))
      conditions.append("username_key = $\(parameters.count)")
    }
    if let kind = query.kind {
      parameters.append(.text(kind.rawValue))
      conditions.append("kind = $\(parameters.count)")
    }
    if let since = query.since {
      parameters.append(PGValue(since))
      conditions.append("occurred_at >= $\(parameters.count)::timestamptz")
    }
    if let host = query.host {
      parameters.append(.text(host))
      conditions.append("host = $\(parameters.count)")
    }
    let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
    parameters.append(query.limit.map { PGValue($0) } ?? .null)
    try forEach(
      """
      SELECT * FROM (
        SELECT id, accounts.stamp(occurred_at), kind, username, detail, host,
               offline_id IS NOT NULL
        FROM accounts.audit_event \(filter)
        ORDER BY id DESC LIMIT $\(parameters.count)::bigint) AS latest
      ORDER BY id ASC
      """, parameters
    ) { rows, row throws(AccountsError) in
      let event = try decoded { () throws(PGUnreadableValue) in
        AuditEvent(
          id: try rows.decode(Int64.self, row, 0), occurredAt: try rows.decode(Date.self, row, 1),
          kind: AuditEventKind(rawValue: try rows.decode(String.self, row, 2)),
          username: try rows.decode(String?.self, row, 3),
          detail: try rows.decode(String?.self, row, 4),
          host: try rows.decode(String?.self, row, 5), offline: try rows.decode(Bool.self, row, 6))
      }
      try body(event)
    }
  }

  func account(id: Int64) throws(AccountsError) -> Account? {
    try oneAccount(where: "a.id = $1", [PGValue(id)])
  }

  func session(tokenHash: [UInt8]) throws(AccountsError) -> Session? {
    let rows = try query(
      "SELECT * FROM accounts.session_by_token($1)",
      [.bytes(tokenHash)])
    return rows.count == 0 ? nil : try session(rows, 0)
  }

  func session(id: Int64) throws(AccountsError) -> Session? {
    let rows = try query(
      "SELECT \(Self.sessionColumns) FROM accounts.session AS s WHERE s.id = $1", [PGValue(id)])
    return rows.count == 0 ? nil : try session(rows, 0)
  }

  func forEachSession(
    accountID: Int64?, liveAt now: Date, _ body: (SessionListing) throws(AccountsError) -> Void
  ) throws(AccountsError) {
    var parameters = [PGValue(now)]
    var filter = ""
    if let accountID {
      parameters.append(PGValue(accountID))
      filter = "AND s.account_id = $2"
    }
    let rows = try query(
      """
      SELECT \(Self.sessionColumns), a.username
      FROM accounts.session AS s JOIN accounts.account AS a ON a.id = s.account_id
      WHERE s.expires_at > $1::timestamptz AND s.idle_until > $1::timestamptz \(filter)
      ORDER BY s.id
      """, parameters)
    for row in 0..<rows.count {
      try body(
        SessionListing(
          session: session(rows, row),
          username: decoded { () throws(PGUnreadableValue) in
            try rows.decode(String.self, row, Self.sessionColumnCount)
          }))
    }
  }

  func secondFactor(accountID: Int64) throws(AccountsError) -> StoredSecondFactor? {
    let rows = try query(
      """
      SELECT last_step, accounts.stamp(enabled_at)
      FROM accounts.second_factor WHERE account_id = $1
      """, [PGValue(accountID)])
    guard rows.count == 1 else { return nil }
    // The secret stays on the server, which checks codes (migration "v17").
    return try decoded { () throws(PGUnreadableValue) in
      StoredSecondFactor(
        accountID: accountID, sealedSecret: [], keyID: StoredSecondFactor.serverKeyID,
        lastStep: UInt64(max(try rows.decode(Int64.self, 0, 0), 0)),
        enabledAt: try rows.decode(Date.self, 0, 1))
    }
  }

  func unusedRecoveryCodeHashes(accountID: Int64) throws(AccountsError) -> [[UInt8]] {
    let rows = try query(
      """
      SELECT encode(code_hash, 'hex') FROM accounts.recovery_code
      WHERE account_id = $1 AND used_at IS NULL
      ORDER BY code_hash
      """, [PGValue(accountID)])
    return try decoded { () throws(PGUnreadableValue) in
      try (0..<rows.count).map { row throws(PGUnreadableValue) in
        try rows.decode([UInt8].self, row, 0)
      }
    }
  }

  func hasRecoveryCode(accountID: Int64, hash: [UInt8]) throws(AccountsError) -> Bool {
    try single(
      Bool.self,
      query(
        """
        SELECT EXISTS (SELECT 1 FROM accounts.recovery_code
                       WHERE account_id = $1 AND code_hash = $2 AND used_at IS NULL)
        """, [PGValue(accountID), .bytes(hash)]))
  }

  func recoveryCodesLeft(accountID: Int64) throws(AccountsError) -> Int {
    try single(
      Int.self,
      query(
        "SELECT count(*) FROM accounts.recovery_code WHERE account_id = $1 AND used_at IS NULL",
        [PGValue(accountID)]))
  }

  func secondFactorKeyIDs() throws(AccountsError) -> Set<String> {
    // The server seals every secret handed to it; a host needs no key file.
    []
  }

  func pendingSecondFactor(accountID: Int64) throws(AccountsError) -> PendingSecondFactor? {
    let rows = try query(
      """
      SELECT accounts.stamp(expires_at)
      FROM accounts.pending_second_factor WHERE account_id = $1
      """, [PGValue(accountID)])
    guard rows.count == 1 else { return nil }
    // The secret stays on the server, which checks the first code (migration "v17").
    return try decoded { () throws(PGUnreadableValue) in
      PendingSecondFactor(
        accountID: accountID, sealedSecret: [], keyID: StoredSecondFactor.serverKeyID,
        expiresAt: try rows.decode(Date.self, 0, 0))
    }
  }

  func rowCount(_ table: StoreRecordKind) throws(AccountsError) -> Int {
    try single(Int.self, query("SELECT count(*) FROM accounts.\(table.table)"))
  }

  func forEachRow(of table: StoreRecordKind, _ body: ([StoreValue]) throws(AccountsError) -> Void)
    throws(AccountsError)
  {
    let columns = table.fields
    let selection = zip(table.columns, columns).map { name, type -> String in
      switch type {
      case .time: return "accounts.stamp(\(name))"
      case .boolean: return "\(name)::int"
      case .blob: return "encode(\(name), 'hex')"
      case .integer, .text: return name
      }
    }.joined(separator: ", ")
    // A secret the server encrypted leaves it in the clear for the target to keep (v17).
    let source =
      table == .secondFactor ? "accounts.second_factor_copy()" : "accounts.\(table.table)"
    try forEach(
      "SELECT \(selection) FROM \(source) AS \(table.table) ORDER BY \(table.orderedBy)"
    ) { rows, row throws(AccountsError) in
      let values = try decoded { () throws(PGUnreadableValue) in
        try columns.enumerated().map { index, type throws(PGUnreadableValue) -> StoreValue in
          switch type {
          case .integer, .boolean:
            return try rows.decode(Int64?.self, row, index).map(StoreValue.integer) ?? .null
          case .text, .time:
            return try rows.decode(String?.self, row, index).map(StoreValue.text) ?? .null
          case .blob:
            return try rows.decode([UInt8]?.self, row, index).map(StoreValue.blob) ?? .null
          }
        }
      }
      try body(values)
    }
  }

  func idPositions() throws(AccountsError) -> IDPositions {
    let rows = try query(
      """
      SELECT (SELECT CASE WHEN is_called THEN last_value ELSE 0 END
              FROM accounts.audit_event_id_seq),
             (SELECT CASE WHEN is_called THEN last_value ELSE 0 END
              FROM accounts.session_id_seq)
      """)
    return try decoded { () throws(PGUnreadableValue) in
      IDPositions(
        auditEvent: try rows.decode(Int64.self, 0, 0), session: try rows.decode(Int64.self, 0, 1))
    }
  }

  /// A text array parameter (`{"a","b"}`), each element quoted and escaped.
  static func textArray(_ words: [String]) -> PGValue {
    .text(
      "{"
        + words.map {
          "\""
            + $0.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
        }.joined(separator: ",") + "}")
  }
}
