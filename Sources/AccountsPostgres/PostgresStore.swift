import AccountsCore
import FoundationEssentials

/// A store on a PostgreSQL server: the PostgreSQL implementation of the core's
/// `AccountRepository`, shared by every host that names it.
///
/// One connection per process, opened at first use. Every `write` is one transaction that first
/// locks the activation row (`SELECT … FOR UPDATE`): writers take turns across every host, as
/// SQLite's IMMEDIATE transactions make them take turns on one machine, so the core's
/// read-then-write decisions (the lockout count, activating once, the last owner) hold without
/// retries. Every `read` is one REPEATABLE READ snapshot. Races the core relies on the database
/// for are decided by it as in SQLite: a conditional UPDATE accepts a TOTP step once, a unique
/// constraint keeps user names unique (`ON CONFLICT DO NOTHING`, so an import goes on past a
/// duplicate).
public final class PostgresStore: AccountRepository {
  /// The URI without its password: how messages name the store.
  public let location: String
  /// True: the server keeps every second factor's secret and checks codes (migration "v17").
  public var keepsSecondFactorsOnServer: Bool { true }

  /// The database's name as its server calls it (`current_database()`): the same whichever URI
  /// or pooler a host reaches it through.
  public func authenticatorDomain() throws(AccountsError) -> String? {
    let (rows, _) = try statement("SELECT pg_catalog.current_database()", [], for: .readOnly)
    return rows.text(0, 0)
  }
  /// How long a write waits for another one, in seconds.
  public let busyTimeout: Double
  /// The host this process writes as, stamped on the events and sessions it writes.
  public var writingHost: String?
  private let uri: String
  private var connection: PGConnection?
  var migrated = false
  /// The migrations this program knows (a test gives others).
  var migrations = postgresMigrations
  /// The release this program is (a test gives another).
  var release = AccountsRelease.version

  /// How long connecting may take, in seconds, when neither the URI nor PGCONNECT_TIMEOUT
  /// says.
  private let connectTimeout: Int

  /// A store at the libpq connection URI `uri`; nothing is connected yet.
  public init(uri: String, busyTimeout: Double = 5, connectTimeout: Int = 10) {
    self.uri = uri
    self.busyTimeout = busyTimeout
    self.connectTimeout = connectTimeout
    location = StoreLocation.shown(uri)
  }

  /// The store, ready for `access`; nil when reading a database that holds no store.
  ///
  /// Reading creates nothing; the first write creates an absent schema whole. No command but
  /// `accounts store upgrade` migrates an existing one: a store older than this program is
  /// refused, as are a schema `accounts` that another program made and one upgraded for a
  /// newer accounts.
  public func opened(for access: StoreAccess) throws(StoreError) -> PostgresStore? {
    if migrated { return self }
    let db = try connected()
    let contents = try inspect(db)
    if let refusal = contents.refusal(location: location, schema: "accounts") { throw refusal }
    switch contents {
    case .absent where access != .readWrite: return nil
    case .absent: try migrate(db, upgrading: nil)
    case .older: throw .upgradeNeeded(location: location)
    default: break
    }
    migrated = true
    return self
  }

  /// The device's state in one statement (what `status` needs); nil when the database holds no
  /// store.
  public func status() throws(StoreError) -> DeviceStatus? {
    let db = try connected()
    do {
      let rows = try db.run(
        """
        SELECT a.state, accounts.stamp(a.changed_at),
               (SELECT string_agg(identifier, ',') FROM accounts.schema_migration),
               (SELECT string_agg(identifier, ',') FROM accounts.schema_expansion)
        FROM accounts.activation AS a WHERE a.id = 1
        """)
      // Anything but a current store is looked at more closely below (and refused there).
      if isCurrent(RecordedMigrations(steps: rows.text(0, 2), expansions: rows.text(0, 3))) {
        migrated = true
        return try decoding(location: location) { () throws(PGUnreadableValue) in
          DeviceStatus(
            state: try PostgresAccess.state(rows, 0, 0),
            changedAt: try rows.decode(Date?.self, 0, 1))
        }
      }
    } catch let error as StoreError {
      throw error
    } catch {
      // No schema, no table or no function yet: looked at more closely below.
      guard let failure = error as? PGFailure, !failure.connectionLost else {
        throw translate(error as? PGFailure)
      }
    }
    guard let store = try opened(for: .readOnly) else { return nil }
    return try store.storedStatus()
  }

  // MARK: - AccountRepository

  public func read<T>(_ body: (any AccountReader) throws(AccountsError) -> T)
    throws(AccountsError) -> T
  {
    guard try storing({ () throws(StoreError) in try opened(for: .readOnly) }) != nil else {
      throw .storage(.failure(location: location, reason: "it holds no accounts store"))
    }
    let db = try storing { () throws(StoreError) in try connected() }
    try execute(db, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; \(Self.pinnedPath)")
    do {
      return try finishing(db, body(access(db)), readOnly: true)
    } catch {
      // Refused within a read: a read it may not do, never a write.
      guard case .storage(.permissionDenied(let location, let reason)) = error else { throw error }
      throw .storage(.readDenied(location: location, reason: reason))
    }
  }

  public func write<T>(_ body: (any AccountWriter) throws(AccountsError) -> T)
    throws(AccountsError) -> T
  {
    _ = try storing { () throws(StoreError) in try opened(for: .readWrite) }
    let db = try storing { () throws(StoreError) in try connected() }
    let wait = max(Int(busyTimeout * 1000), 1)
    try execute(
      db,
      """
      BEGIN; SET LOCAL lock_timeout = '\(wait)ms'; \(Self.pinnedPath)
      SELECT 1 FROM accounts.activation WHERE id = 1 FOR UPDATE
      """)
    return try finishing(db, body(access(db)))
  }

  /// Runs `body` in one transaction that takes no write turn of its own: the host steps it
  /// calls take it (a host role may not lock the activation row itself).
  func stepTransaction<T>(_ body: (PostgresAccess) throws(AccountsError) -> T)
    throws(AccountsError) -> T
  {
    _ = try storing { () throws(StoreError) in try opened(for: .readWrite) }
    let db = try storing { () throws(StoreError) in try connected() }
    try execute(db, "BEGIN; \(Self.pinnedPath)")
    return try finishing(db, body(access(db)))
  }

  public func consistencyFacts() throws(AccountsError) -> ConsistencyFacts {
    try read { reader throws(AccountsError) in
      // PostgreSQL checks its own integrity as it writes: only the device is left to judge.
      guard let access = reader as? PostgresAccess else { return ConsistencyFacts(device: nil) }
      let rows = try access.query(
        """
        SELECT v.state, v.owner_id, (SELECT count(*) FROM accounts.account),
               EXISTS (SELECT 1 FROM accounts.account WHERE id = v.owner_id)
        FROM accounts.activation AS v WHERE v.id = 1
        """)
      guard rows.count == 1 else {
        let accounts = try access.query("SELECT count(*) FROM accounts.account")
        return ConsistencyFacts(
          device: DeviceFacts(
            state: nil, ownerID: nil, ownerExists: false,
            accountCount: try access.single(Int.self, accounts)))
      }
      // The state as stored, even one no build knows: the core judges it.
      return try access.decoded { () throws(PGUnreadableValue) in
        ConsistencyFacts(
          device: DeviceFacts(
            state: try rows.decode(String?.self, 0, 0),
            ownerID: try rows.decode(Int64?.self, 0, 1),
            ownerExists: try rows.decode(Bool.self, 0, 3),
            accountCount: try rows.decode(Int.self, 0, 2)))
      }
    }
  }

  // MARK: - Connection, transactions, errors

  /// Runs one statement on its own (its own transaction), with the store opened for `access`
  /// first: a call of a function of ours, which pins its own search path (see `PGConnection.run`
  /// without `pinning`).
  func statement(_ sql: String, _ parameters: [PGValue], for access: StoreAccess)
    throws(AccountsError) -> (PGRows, PostgresAccess)
  {
    guard try storing({ () throws(StoreError) in try opened(for: access) }) != nil else {
      throw .storage(.failure(location: location, reason: "it holds no accounts store"))
    }
    let db = try storing { () throws(StoreError) in try connected() }
    do {
      return (try db.run(sql, parameters, pinning: false), self.access(db))
    } catch {
      throw .storage(translate(error))
    }
  }

  func connected() throws(StoreError) -> PGConnection {
    if let connection, connection.isAlive { return connection }
    let opened = try PGConnection.open(
      uri: uri, location: location, connectTimeout: connectTimeout)
    connection = opened
    return opened
  }

  private func access(_ db: PGConnection) -> PostgresAccess {
    PostgresAccess(db: db, store: self)
  }

  /// Commits after `body` returned, rolls back when it threw; either way the connection is out
  /// of its transaction afterwards.
  ///
  /// A read's answer stands once `body` has it: its snapshot was consistent, and ending a
  /// READ ONLY transaction changes nothing, so a connection lost just then is no failure.
  private func finishing<T>(
    _ db: PGConnection, _ body: @autoclosure () throws(AccountsError) -> T,
    readOnly: Bool = false
  ) throws(AccountsError) -> T {
    let result: T
    do {
      result = try body()
    } catch {
      if db.isAlive && db.inTransaction { _ = try? db.run("ROLLBACK") }
      db.releasePrepared()
      throw error
    }
    db.releasePrepared()
    if readOnly {
      _ = try? db.run("COMMIT")
    } else {
      try execute(db, "COMMIT")
    }
    return result
  }

  func execute(_ db: PGConnection, _ sql: String) throws(AccountsError) {
    do {
      try db.run(sql)
    } catch {
      if db.isAlive && db.inTransaction { _ = try? db.run("ROLLBACK") }
      throw .storage(translate(error))
    }
  }

  /// The store error a failed statement means.
  func translate(_ failure: PGFailure?) -> StoreError {
    guard let failure else { return .failure(location: location, reason: "no reason given") }
    if failure.unanswered {
      return .cannotConnect(
        location: location, server: connection?.server ?? "", reason: failure.message)
    }
    if failure.connectionLost {
      return .connectionLost(location: location, reason: failure.message)
    }
    switch failure.sqlState ?? "" {
    case "55P03": return .busy(location: location, seconds: busyTimeout)
    case "53100": return .diskFull(location: location)
    case "25006": return .readOnlyServer(location: location)
    case "42501": return .permissionDenied(location: location, reason: failure.message)
    case let state where state.hasPrefix("23"): return .inconsistent(location: location)
    case let state where state.hasPrefix("08") || state.hasPrefix("57P"):
      return .connectionLost(location: location, reason: failure.message)
    default: return .failure(location: location, reason: failure.message)
    }
  }

  /// What every transaction begins with: its own search path, pinned to pg_catalog (the
  /// temporary schema last, where PostgreSQL would otherwise search it first).
  ///
  /// See `PGConnection.open`. The connection sets it for the session too, but behind a pooler in
  /// transaction mode the session is not ours from one transaction to the next.
  static let pinnedPath = "SET LOCAL search_path = pg_catalog, pg_temp;"

  /// The advisory lock key migrations hold: "accounts" in ASCII.
  static let migrationLock: Int64 = 0x6163_636f_756e_7473
}

extension PostgresStore {
  func translate(_ error: any Error) -> StoreError {
    translate(error as? PGFailure)
  }
}
