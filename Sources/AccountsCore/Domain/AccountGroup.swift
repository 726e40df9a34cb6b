import FoundationEssentials

/// A named set of accounts (what a later version makes a Linux group, hence Linux's naming
/// rules: `GroupNameRules`).
public struct AccountGroup: Equatable, Sendable {
  /// The store's identifier; stable while the group exists.
  public var id: Int64
  /// The group's name, exactly as given (no case folding: the rules allow no capitals).
  public var name: String
  /// When the group was added.
  public var createdAt: Date
  /// Its gid as a Linux group; nil until its first group record.
  public var gid: Int64?

  /// Creates a group value.
  public init(id: Int64, name: String, createdAt: Date, gid: Int64? = nil) {
    self.gid = gid
    self.id = id
    self.name = name
    self.createdAt = createdAt
  }
}

/// A group with how many accounts belong to it: one line of `group list`.
public struct GroupListing: Equatable, Sendable {
  /// The group.
  public var group: AccountGroup
  /// How many accounts are its members.
  public var memberCount: Int

  /// Creates a listing.
  public init(group: AccountGroup, memberCount: Int) {
    self.group = group
    self.memberCount = memberCount
  }
}

/// The naming rules of groups: Debian's `NAME_REGEX` (`^[a-z_][a-z0-9_-]*$`), 1 to 32 characters,
/// so that every group can become a Linux group as it is.
public enum GroupNameRules {
  /// The longest name, in characters.
  public static let maximumLength = 32

  /// True when `name` follows the rules.
  public static func isValid(_ name: String) -> Bool {
    let bytes = Array(name.utf8)
    guard let first = bytes.first, bytes.count <= maximumLength else { return false }
    func isLower(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") }
    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
    guard isLower(first) || first == UInt8(ascii: "_") else { return false }
    return bytes.dropFirst().allSatisfy {
      isLower($0) || isDigit($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
    }
  }
}
