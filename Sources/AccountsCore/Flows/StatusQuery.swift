import Foundation

/// What `accounts status` reports.
public struct StatusReport: Equatable, Sendable {
  /// Public or Activated.
  public var state: ActivationState
  /// When the state last changed; nil when nothing was ever stored.
  public var changedAt: Date?
  /// False when no database exists at the path (nothing was ever stored there).
  public var databaseExists: Bool
}

/// `accounts status`.
public enum StatusQuery {
  /// The device's state, and whether a database exists at all.
  public static func run(_ env: AccountsEnvironment) throws(AccountsError) -> StatusReport {
    guard let status = try storing({ () throws(StoreError) in try env.readStatus() }) else {
      return StatusReport(state: .publicState, changedAt: nil, databaseExists: false)
    }
    return StatusReport(state: status.state, changedAt: status.changedAt, databaseExists: true)
  }
}
