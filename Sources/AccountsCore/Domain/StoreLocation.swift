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

  /// True when the URI `value` carries a password (in its user part or as a parameter).
  public static func holdsPassword(_ value: String) -> Bool {
    isPostgres(value) && shown(value) != value
  }
}
