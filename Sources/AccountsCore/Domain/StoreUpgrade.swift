/// What `accounts store upgrade` did to a PostgreSQL store.
public struct StoreUpgrade: Equatable, Sendable {
  /// The migrations it applied, in order (none: the store was up to date).
  public var applied: [String]
  /// The contract steps (and what follows them) left for `store upgrade --contract`.
  public var waiting: [String]
  /// The release the store was upgraded for: the program's.
  public var release: String
  /// The fleet's roles (those `store roles --apply` recorded) got their rights before one of
  /// the store's migrations, and the upgrade could not keep them current: they need applying
  /// again.
  public var rolesBehind: Bool

  /// An upgrade that applied `applied` and left `waiting`, for `release`.
  public init(applied: [String], waiting: [String], release: String, rolesBehind: Bool = false) {
    self.applied = applied
    self.waiting = waiting
    self.release = release
    self.rolesBehind = rolesBehind
  }
}
