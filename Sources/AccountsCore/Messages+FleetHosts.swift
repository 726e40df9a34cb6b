/// The sentences of `store hosts`: fleet hosts with a role of their own.
extension Messages {
  /// A host name `store hosts` does not take.
  public static func unusableHostName(_ name: String) -> String {
    "A host name is 1 to 63 lower-case letters, digits or -, starting and ending with a letter "
      + "or digit: \(name) is not one."
  }
  /// `store hosts add` before `store roles --apply` recorded the fleet's roles.
  public static let fleetRolesUnknown =
    "This store does not know its fleet's host role yet: run accounts store roles --admin ROLE "
    + "--host ROLE --apply first (as the store's owner)."
  /// `store hosts add` of a host already recorded.
  public static func fleetHostTaken(_ name: String) -> String {
    "The host \(name) already has a role of its own; remove it first to make it again."
  }
  /// `store hosts add` of a role that exists.
  public static func fleetRoleTaken(_ role: String) -> String {
    "The role \(role) already exists: name a new one with --role."
  }
  /// `store hosts remove` of a host that is not recorded.
  public static func noSuchFleetHost(_ name: String) -> String {
    "No host named \(name) has a role of its own."
  }
  /// `store hosts add` or `remove` by a role that may not make or change roles.
  public static func cannotManageRoles(_ role: String) -> String {
    "The role \(role) may not make or change roles: run this as a role with CREATEROLE (and, "
      + "on PostgreSQL 16 or later, ADMIN OPTION on the fleet's host role); nothing was changed."
  }
  /// `store hosts add` done.
  public static func fleetHostAdded(_ name: String, role: String, hostRole: String) -> String {
    "The host \(name) now logs in as the role \(role) (a member of \(hostRole)); set how it "
      + "authenticates in the server's pg_hba.conf."
  }
  /// `store hosts remove` done.
  public static func fleetHostRemoved(_ name: String, role: String) -> String {
    "The host \(name) is removed: the role \(role) may no longer log in; its events stay."
  }
  /// `store second-factors` on an SQLite store.
  public static let secondFactorsNeedPostgres =
    "store second-factors needs a PostgreSQL store (a postgresql:// URI in --database or "
    + "ACCOUNTS_DATABASE): an SQLite store keeps its secrets under its key file."
  /// `store second-factors import-key`: what it moved.
  public static func secondFactorsMoved(_ count: Int, keyFile: String) -> String {
    let factors = count == 1 ? "1 second factor" : "\(count) second factors"
    return "Moved \(factors) sealed under the key file \(keyFile) into the server's keeping; "
      + "no host needs that key file any more."
  }
  /// `store hosts` on an SQLite store.
  public static let hostsNeedPostgres =
    "store hosts needs a PostgreSQL store (a postgresql:// URI in --database or "
    + "ACCOUNTS_DATABASE): an SQLite store has no roles."
  /// `store hosts list` on a store with no host of its own.
  public static let noFleetHosts = "No host has a role of its own."

  /// The audit log's detail of a host's role made or withdrawn (`fleet_host_added`,
  /// `fleet_host_removed`).
  public static func detailFleetHost(_ host: String, role: String) -> String {
    "host \(host) role \(role)"
  }
  /// The audit log's detail of a shared store upgraded (`store_upgraded`).
  public static func detailStoreUpgraded(release: String, applied: [String]) -> String {
    "accounts \(release): \(applied.joined(separator: ", "))"
  }
}
