/// The sentences of groups and account expiry.
extension Messages {
  /// A group name that breaks the rules.
  public static func invalidGroupName(_ name: String) -> String {
    "Group name \(name) is not valid: use 1 to 32 of a-z, 0-9, _ and -, starting with a letter "
      + "or _!"
  }
  /// `group add` of a name a group already has.
  public static func groupNameTaken(_ name: String) -> String {
    "Group name \(name) is already taken!"
  }
  /// An administrator command named a group that does not exist.
  public static func noSuchGroup(_ name: String) -> String { "No group named \(name)." }
  /// `user edit --remove-group` of a group the account is not in.
  public static func notInGroup(_ username: String, group: String) -> String {
    "\(username) is not in group \(group)."
  }
  /// `group add` done.
  public static func groupAdded(_ name: String) -> String { "Group added: \(name)." }
  /// `group remove` done.
  public static func groupRemoved(_ name: String, members: Int) -> String {
    "Group removed: \(name) (\(members) \(members == 1 ? "membership" : "memberships") ended)."
  }
  /// `user edit --add-group` done.
  public static func addedToGroup(_ username: String, group: String) -> String {
    "\(username) added to group \(group)."
  }
  /// `user edit --add-group` of a group the account is already in.
  public static func alreadyInGroup(_ username: String, group: String) -> String {
    "\(username) is already in group \(group); nothing changed."
  }
  /// `user edit --remove-group` done.
  public static func removedFromGroup(_ username: String, group: String) -> String {
    "\(username) removed from group \(group)."
  }
  /// `user edit --expires` done.
  public static func expiryChanged(_ username: String, expires: String?) -> String {
    guard let expires else { return "\(username) no longer expires." }
    return "\(username) expires at \(expires)."
  }
  /// The audit log's detail of a membership event and of a group's own events.
  public static func detailGroup(_ name: String) -> String { "group \(name)" }
  /// The audit log's detail of an expiry set or cleared, in `account_edited`.
  public static func detailExpiry(_ expires: String?) -> String {
    "expires \(expires ?? "never")"
  }
  /// `--expires` that is no date, time or `never`.
  public static let expiresForms =
    "--expires must be a date (2026-12-31: the account expires at 00:00 UTC of that day), an "
    + "RFC 3339 time with its zone (2026-12-31T18:00:00Z) or never."
  /// `user show`'s line on groups.
  public static func groupsDetail(_ groups: [String]) -> String {
    "Groups: " + (groups.isEmpty ? "-" : groups.joined(separator: ", "))
  }
  /// `user show`'s line on expiry.
  public static func expiryDetail(_ expires: String?, expired: Bool) -> String {
    guard let expires else { return "Expires: never" }
    return "Expires: \(expires)" + (expired ? " (expired)" : "")
  }
}
