import FoundationEssentials

/// A fleet host that logs in with a PostgreSQL role of its own (`accounts store hosts add`):
/// every event and session that role writes names this host, whatever the host sends.
public struct FleetHost: Equatable, Sendable {
  /// The host's name: a host name's label (`FleetHost.isUsableName`).
  public var name: String
  /// Its login role, a member of the fleet's host role.
  public var role: String
  /// When `store hosts add` made it.
  public var madeAt: Date
  /// When the newest audit event naming this host happened; nil before its first.
  public var lastEventAt: Date?

  /// Creates a host entry.
  public init(name: String, role: String, madeAt: Date, lastEventAt: Date? = nil) {
    self.name = name
    self.role = role
    self.madeAt = madeAt
    self.lastEventAt = lastEventAt
  }

  /// The role `store hosts add NAME` makes when no `--role` is given.
  public static func defaultRole(for name: String) -> String { "accounts_host_\(name)" }

  /// Whether `name` can name a host: 1 to 63 lower-case letters, digits and `-`, starting and
  /// ending with a letter or digit (a host name's label, RFC 1123).
  public static func isUsableName(_ name: String) -> Bool {
    let scalars = Array(name.unicodeScalars)
    guard (1...63).contains(scalars.count), scalars.first != "-", scalars.last != "-" else {
      return false
    }
    return scalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
  }
}
