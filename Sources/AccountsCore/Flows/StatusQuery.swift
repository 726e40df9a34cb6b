import FoundationEssentials

/// What `accounts status` reports.
public struct StatusReport: Equatable, Sendable {
  /// Public or Activated.
  public var state: ActivationState
  /// When the state last changed; nil when nothing was ever stored.
  public var changedAt: Date?
  /// False when no database exists at the path (nothing was ever stored there).
  public var databaseExists: Bool
  /// What holds the store, which says what is missing when there is none.
  public var container: StoreContainer = .ownFile
}

/// What holds a store: a file of its own, or a database that may hold other programs' data
/// beside it (a PostgreSQL database, the store in its schema `accounts`).
public enum StoreContainer: Sendable, Equatable {
  /// A file of its own: when there is no store there is no file.
  case ownFile
  /// A database shared with others: it may exist and hold no store yet.
  case sharedDatabase
}

/// `accounts status`.
public enum StatusQuery {
  /// The device's state, and whether a database exists at all.
  public static func run(_ env: AccountsEnvironment) throws(AccountsError) -> StatusReport {
    guard let status = try storing({ () throws(StoreError) in try env.readStatus() }) else {
      return StatusReport(
        state: .publicState, changedAt: nil, databaseExists: false, container: env.storeContainer)
    }
    return StatusReport(state: status.state, changedAt: status.changedAt, databaseExists: true)
  }
}
