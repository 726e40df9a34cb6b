import FoundationEssentials

/// This host's `userdb sync`s that failed because the server could not be reached, kept on the
/// host until the next sync that reaches it reports them (`HostReport.unreached`): how many,
/// the first and the last, and the last one's reason.
public struct UnreachedSyncs: Equatable, Sendable {
  /// The host, as this process names it: a sync under another name neither reports nor clears
  /// them.
  public var host: String
  /// How many syncs could not reach the server.
  public var count: Int
  /// When the first of them failed (this host's clock).
  public var first: Date
  /// When the last of them failed (this host's clock).
  public var last: Date
  /// The last one's reason: one line, every control character made visible, at most
  /// `reasonLength` characters.
  public var reason: String

  /// The most characters a reason keeps.
  public static let reasonLength = 200
  /// The most syncs counted (the server refuses more).
  public static let largestCount = 1_000_000

  /// Creates a record; `reason` is made `bounded`.
  public init(host: String, count: Int, first: Date, last: Date, reason: String) {
    self.init(
      host: host, count: count, first: first, last: last, boundedReason: Self.bounded(reason))
  }

  private init(host: String, count: Int, first: Date, last: Date, boundedReason: String) {
    self.host = host
    self.count = min(max(count, 1), Self.largestCount)
    self.first = first
    self.last = last
    self.reason = boundedReason
  }

  /// These syncs and one more that failed at `now` for `reason`.
  public func adding(reason: String, at now: Date) -> UnreachedSyncs {
    UnreachedSyncs(
      host: host, count: count + 1, first: min(first, now), last: max(last, now), reason: reason)
  }

  /// `text` on one line, its control characters (and backslashes) made visible, at most
  /// `reasonLength` characters.
  public static func bounded(_ text: String) -> String {
    let line = Escaping.unambiguous(
      text.split(whereSeparator: \.isNewline).joined(separator: " "))
    guard line.count > reasonLength else { return line }
    return String(line.prefix(reasonLength - 1)) + "…"
  }

  // MARK: - The file's text

  /// The first line of the file's text.
  static let header = "accounts unreached syncs 1"

  /// The file's text: a header, then one `key value` line each.
  public var text: String {
    [
      Self.header, "host \(host)", "count \(count)", "first \(Timestamp.string(from: first))",
      "last \(Timestamp.string(from: last))", "reason \(reason)",
    ].joined(separator: "\n") + "\n"
  }

  /// The record `text` holds; nil when it is not what `text` writes.
  public init?(text: String) {
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    guard lines.count == 7, lines[0] == Self.header, lines[6].isEmpty else { return nil }
    var values: [String: String] = [:]
    for line in lines[1...5] {
      guard let space = line.firstIndex(of: " ") else { return nil }
      values[String(line[..<space])] = String(line[line.index(after: space)...])
    }
    guard let host = values["host"], !host.isEmpty,
      let count = values["count"].flatMap({ Int($0) }), count >= 1, count <= Self.largestCount,
      let first = values["first"].flatMap(Timestamp.date(from:)),
      let last = values["last"].flatMap(Timestamp.date(from:)), first <= last,
      let reason = values["reason"], reason.count <= Self.reasonLength,
      Escaping.visible(reason) == reason
    else { return nil }
    self.init(host: host, count: count, first: first, last: last, boundedReason: reason)
  }
}

/// Where this host keeps its unreached syncs: a file of root's beside the login cache
/// (AccountsStore's `UnreachedSyncsFile`), or memory in tests.
public protocol UnreachedSyncsKeeper: AnyObject {
  /// Where they are, as messages name it.
  var location: String { get }
  /// The syncs kept; nil when none are.
  func load() throws(AccountsError) -> UnreachedSyncs?
  /// Replaces what is kept by `change(kept)` (nil: keeps nothing), in one atomic write, while
  /// no other process changes it.
  func update(_ change: (UnreachedSyncs?) -> UnreachedSyncs?) throws(AccountsError)
}

/// Unreached syncs kept in memory (tests).
public final class MemoryUnreachedSyncs: UnreachedSyncsKeeper {
  public let location = "(memory)"
  /// What is kept.
  public var kept: UnreachedSyncs?

  /// Keeps `kept`.
  public init(_ kept: UnreachedSyncs? = nil) { self.kept = kept }

  public func load() -> UnreachedSyncs? { kept }

  public func update(_ change: (UnreachedSyncs?) -> UnreachedSyncs?) { kept = change(kept) }
}
