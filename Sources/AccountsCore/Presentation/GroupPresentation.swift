import FoundationEssentials

/// How `group list` and `group show` print a group.
public enum GroupPresentation {
  /// The header of `group list`'s text form.
  public static let header = row("GROUP", "MEMBERS", "CREATED")

  /// One line of `group list`: name, member count, when it was added.
  public static func line(_ listing: GroupListing) -> String {
    row(
      listing.group.name, String(listing.memberCount),
      Timestamp.string(from: listing.group.createdAt))
  }

  /// One JSON object of `group list --json`; every key always present.
  public static func json(_ listing: GroupListing) -> String {
    JSON.object([
      "name": JSON.string(listing.group.name),
      "memberCount": String(listing.memberCount),
      "createdAt": JSON.string(Timestamp.string(from: listing.group.createdAt)),
    ])
  }

  /// `group show`'s lines: the name, when it was added, its members.
  public static func details(_ group: AccountGroup, members: [String]) -> [String] {
    [
      "Group: \(group.name)",
      "Created: \(Timestamp.string(from: group.createdAt))",
      "Members: " + (members.isEmpty ? "-" : members.joined(separator: ", ")),
    ]
  }

  /// `group show --json`: one object, the members as an array of user names.
  public static func json(_ group: AccountGroup, members: [String]) -> String {
    JSON.object([
      "name": JSON.string(group.name),
      "createdAt": JSON.string(Timestamp.string(from: group.createdAt)),
      "members": "[" + members.map { JSON.string($0) }.joined(separator: ",") + "]",
    ])
  }

  private static func row(_ name: String, _ members: String, _ created: String) -> String {
    AccountPresentation.pad(name, 32) + "  " + AccountPresentation.pad(members, 7) + "  "
      + created
  }
}
