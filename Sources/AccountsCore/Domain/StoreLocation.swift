import Foundation

/// Which kind of store a `--database` value names, and how it is shown.
///
/// A value beginning with `postgresql://` or `postgres://` is a libpq connection URI (a store on
/// a PostgreSQL server); anything else is an SQLite file's path.
public enum StoreLocation {
  /// True when `value` is a PostgreSQL connection URI.
  public static func isPostgres(_ value: String) -> Bool {
    value.hasPrefix("postgresql://") || value.hasPrefix("postgres://")
  }

  /// `value` as it may be shown: a URI without its password (the `:password` of its user part
  /// and any `password=` parameter); a path as it is.
  public static func shown(_ value: String) -> String {
    guard isPostgres(value), let schemeEnd = value.range(of: "://") else { return value }
    let scheme = value[..<schemeEnd.upperBound]
    var rest = value[schemeEnd.upperBound...]
    var query: Substring?
    if let mark = rest.firstIndex(of: "?") {
      query = rest[rest.index(after: mark)...]
      rest = rest[..<mark]
    }
    // The authority ends at the first `/`; its user part at its last `@`.
    let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
    var authority = rest[..<authorityEnd]
    let path = rest[authorityEnd...]
    if let at = authority.lastIndex(of: "@") {
      let userInfo = authority[..<at]
      let user = userInfo.firstIndex(of: ":").map { userInfo[..<$0] } ?? userInfo
      authority = user + authority[at...]
    }
    var shown = scheme + authority + path
    if let query {
      let kept = query.split(separator: "&", omittingEmptySubsequences: false).filter {
        let key = $0.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
        return (key.removingPercentEncoding ?? key).lowercased() != "password"
      }
      if !kept.isEmpty { shown += "?" + kept.joined(separator: "&") }
    }
    return String(shown)
  }

  /// The passwords the URI `value` carries, as written and percent-decoded: what must never be
  /// echoed back (libpq quotes a malformed URI whole in its message).
  public static func passwords(in value: String) -> [String] {
    guard isPostgres(value), let schemeEnd = value.range(of: "://") else { return [] }
    var found: [String] = []
    let rest = value[schemeEnd.upperBound...]
    let beforeQuery = rest.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
    let authority = beforeQuery.first?.split(separator: "/", maxSplits: 1).first ?? ""
    if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
      found.append(String(authority[authority.index(after: colon)..<at]))
    }
    if beforeQuery.count == 2 {
      for pair in beforeQuery[1].split(separator: "&") {
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        let key = String(parts[0])
        if (key.removingPercentEncoding ?? key).lowercased() == "password", parts.count == 2 {
          found.append(String(parts[1]))
        }
      }
    }
    let decoded = found.compactMap { $0.removingPercentEncoding }
    return Array(Set(found + decoded)).filter { !$0.isEmpty }.sorted { $0.count > $1.count }
  }

  /// `text` with the URI `value` shown without its password, and any of its passwords hidden.
  public static func scrubbed(_ text: String, of value: String) -> String {
    var text = text.replacingOccurrences(of: value, with: shown(value))
    for password in passwords(in: value) {
      text = text.replacingOccurrences(of: password, with: "(password hidden)")
    }
    return text
  }

  /// True when the URI `value` carries a password (in its user part or as a parameter).
  public static func holdsPassword(_ value: String) -> Bool {
    isPostgres(value) && shown(value) != value
  }
}
