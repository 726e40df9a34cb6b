import AccountsCore
import FoundationEssentials

extension SQLiteStore: AccountRepository {
  /// The file's path as given.
  public var location: String { path }

  /// The host this process writes as, stamped on the events and sessions it writes.
  public var writingHost: String? {
    get { host.withLock { $0 } }
    set { host.withLock { $0 = newValue } }
  }

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
      try writer.write { db in
        try Self.passingThrough { () throws(AccountsError) in
          try body(SQLiteAccountWriter(db: db, path: path, host: writingHost))
        }
      }
    }
  }

  /// Appends `event` marked offline, as a PostgreSQL store does, in one transaction; false
  /// when an event of its id is in the log already.
  public func appendOfflineEvent(_ event: QueuedEvent) throws(AccountsError) -> Bool {
    try run {
      try writer.write { db in
        try Self.passingThrough { () throws(AccountsError) in
          try SQLiteAccountWriter(db: db, path: path, host: writingHost).appendOffline(event)
        }
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
        let activation = try ActivationRecord.fetchOne(
          db, sql: "SELECT \(ActivationRecord.selection) FROM activation WHERE id = 1")
        let owner = activation?.ownerID
        let ownerExists = try owner.map { id in
          try Bool.fetchOne(db, sql: "SELECT 1 FROM account WHERE id = ?", arguments: [id])
        }
        let device = DeviceFacts(
          state: activation?.state, ownerID: owner, ownerExists: (ownerExists ?? nil) ?? false,
          accountCount: try Int.fetchOne(db, sql: "SELECT count(*) FROM account") ?? 0)
        return ConsistencyFacts(integrityProblems: problems, device: device)
      }
    }
  }

  /// Runs work on the connection, letting the core's errors through and translating the rest.
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

  /// A core error carried through the layer's untyped closures (rolling the transaction back).
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
func statement<T>(
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
