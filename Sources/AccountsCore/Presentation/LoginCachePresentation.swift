import FoundationEssentials

/// `store cache status`, as lines or one JSON object.
public enum LoginCachePresentation {
  /// `Cache: PATH`, `Days: N`, `Entries: N`, `Oldest: TIME`, `Queued events: N`,
  /// `Last contact: TIME` (`-` for no time).
  public static func lines(_ status: LoginCacheStatus, timeZone: TimeZone) -> [String] {
    let time = { (date: Date?) in date.map { TimeText.long($0, timeZone: timeZone) } ?? "-" }
    return [
      "Cache: \(status.path)", "Days: \(status.days)", "Entries: \(status.entries)",
      "Oldest: \(time(status.oldest))", "Queued events: \(status.queuedEvents)",
      "Last contact: \(time(status.lastContact))",
    ]
  }

  /// One object, every key always present: path, days, entries, oldest, queuedEvents,
  /// lastContact (times as the audit log writes them, or null).
  public static func json(_ status: LoginCacheStatus) -> String {
    let time = { (date: Date?) in date.map { JSON.string(Timestamp.string(from: $0)) } ?? "null" }
    return JSON.object([
      "path": JSON.string(status.path), "days": String(status.days),
      "entries": String(status.entries), "oldest": time(status.oldest),
      "queuedEvents": String(status.queuedEvents), "lastContact": time(status.lastContact),
    ])
  }
}
