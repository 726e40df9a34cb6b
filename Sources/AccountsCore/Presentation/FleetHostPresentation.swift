/// How `store hosts list` prints a host.
public enum FleetHostPresentation {
  /// The header of the text form.
  public static let header = row("HOST", "ROLE", "MADE", "LAST EVENT")

  /// One line: name, role, when it was made, its newest event's time (`-` before its first).
  public static func line(_ host: FleetHost) -> String {
    row(
      host.name, host.role, Timestamp.string(from: host.madeAt),
      host.lastEventAt.map { Timestamp.string(from: $0) } ?? "-")
  }

  /// One JSON object of `--json`; every key always present (`lastEvent` null before the first).
  public static func json(_ host: FleetHost) -> String {
    JSON.object([
      "name": JSON.string(host.name),
      "role": JSON.string(host.role),
      "madeAt": JSON.string(Timestamp.string(from: host.madeAt)),
      "lastEvent": host.lastEventAt.map { JSON.string(Timestamp.string(from: $0)) } ?? "null",
    ])
  }

  private static func row(_ name: String, _ role: String, _ made: String, _ last: String)
    -> String
  {
    AccountPresentation.pad(name, 20) + "  " + AccountPresentation.pad(role, 32) + "  "
      + AccountPresentation.pad(made, 24) + "  " + last
  }
}
