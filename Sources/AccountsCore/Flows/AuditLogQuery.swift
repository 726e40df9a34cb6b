import FoundationEssentials

/// `accounts log`.
public enum AuditLogQuery {
  /// Calls `each` with the events `query` selects, oldest first, one at a time.
  public static func run(
    _ env: AccountsEnvironment, query: AuditQuery, each: (AuditEvent) -> Void
  ) throws(AccountsError) {
    guard let store = try env.readableStore() else { return }
    try store.read { reader throws(AccountsError) in
      try reader.forEachEvent(query) { event throws(AccountsError) in each(event) }
    }
  }

  /// The query `log`'s filters ask for: `user` compared as a login compares names (its key),
  /// `since` read by `since(_:now:)` (nil when it cannot be: the command checks that first),
  /// `host` compared exactly.
  public static func query(
    user: String?, event: String?, since: String?, host: String? = nil, limit: Int?, now: Date
  ) throws(AccountsError) -> AuditQuery {
    AuditQuery(
      usernameKey: try user.map { name throws(AccountsError) in
        try UsernameRules.lookupKey(for: name)
      },
      kind: event.map(AuditEventKind.init(rawValue:)),
      since: since.flatMap { Self.since($0, now: now) }, host: host, limit: limit)
  }

  /// `--since`'s value: a UTC date (`2026-11-23`), a UTC time (`2026-11-23T10:00:00Z`, with or
  /// without milliseconds) or an age (`90s`, `30m`, `2h`, `7d`) counted back from `now`.
  public static func since(_ text: String, now: Date) -> Date? {
    let value = text
    if let unit = value.last, "smhd".contains(unit), value.count > 1,
      value.dropLast().allSatisfy(\.isASCIIDigit), let count = Int(value.dropLast()),
      count <= 100_000_000
    {
      let seconds: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
      return now.addingTimeInterval(-Double(count) * (seconds[unit] ?? 1))
    }
    if value.utf8.count == 10 { return Timestamp.date(from: value + "T00:00:00.000Z") }
    if value.utf8.count == 20, value.hasSuffix("Z") {
      return Timestamp.date(from: String(value.dropLast()) + ".000Z")
    }
    return Timestamp.date(from: value)
  }
}

extension Character {
  /// True for `0` to `9`.
  fileprivate var isASCIIDigit: Bool { isASCII && isWholeNumber }
}
