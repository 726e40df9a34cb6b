import FoundationEssentials

/// Which kind of store a `--database` value names, and how it is shown.
///
/// A value beginning with `postgresql://` or `postgres://` is a libpq connection URI (a store on
/// a PostgreSQL server); anything else is an SQLite file's path.
public enum StoreLocation {
  /// True when `value` is a PostgreSQL connection URI.
  public static func isPostgres(_ value: String) -> Bool {
    value.hasPrefix("postgresql://") || value.hasPrefix("postgres://")
  }

  /// `value` as it may be shown: a URI without its secrets (the `:password` of its user part,
  /// and the `password=`, `sslpassword=` and `oauth_client_secret=` parameters); a path as it is.
  ///
  /// Worked out on the text as written, whatever the password holds: a `?`, `/` or `@` typed
  /// as it is (which libpq would need percent-encoded) is hidden with the rest of it, and where
  /// the text can be read two ways the reading that hides more wins (see `URIText`).
  public static func shown(_ value: String) -> String {
    guard let uri = URIText(value) else { return value }
    return uri.shown
  }

  /// The secrets the URI `value` carries, as written and percent-decoded, longest first: what
  /// must never be echoed back (libpq quotes a malformed URI, or a piece of it, in its message).
  public static func passwords(in value: String) -> [String] {
    guard let uri = URIText(value) else { return [] }
    let found = uri.secrets
    let decoded = found.compactMap { $0.percentDecoded() }
    return Array(Set(found + decoded)).filter { !$0.isEmpty }.sorted {
      $0.count != $1.count ? $0.count > $1.count : $0 < $1
    }
  }

  /// `text` with the URI `value` shown without its secrets, any of its secrets hidden, and any
  /// quoted piece of the URI that holds part of one hidden too.
  public static func scrubbed(_ text: String, of value: String) -> String {
    let shownValue = shown(value)
    let secrets = passwords(in: value)
    guard !secrets.isEmpty else {
      return value.isEmpty ? text : text.replacing(value, with: shownValue)
    }
    // Each secret whole, then each of its pieces between the characters a URI is split on (of
    // 3 characters or more: libpq may quote a piece of the URI, or name `host:port` as it read
    // them); the shown URI is left whole (a short secret such as `//` would cut it up).
    let separators: Set<Unicode.Scalar> = [":", "/", "?", "@", "&", "=", "#", ",", "[", "]", " "]
    let pieces = secrets.flatMap { secret in
      secret.unicodeScalars.split(omittingEmptySubsequences: false) { separators.contains($0) }
        .map { String(String.UnicodeScalarView($0)) }
    }.filter { $0.count >= 3 }.sorted { $0.count > $1.count }
    let text = text.split(separator: value, omittingEmptySubsequences: false).map { part in
      (secrets + pieces).reduce(String(part)) { $0.replacing($1, with: "(password hidden)") }
    }.joined(separator: shownValue)
    // libpq quotes the piece of a URI it cannot parse ("…"): a piece of the written URI that the
    // shown one lacks holds (part of) a secret.
    let quotes = text.split(separator: "\"", omittingEmptySubsequences: false)
    guard quotes.count > 2 else { return text }
    var result = ""
    for (index, piece) in quotes.enumerated() {
      if index > 0 { result += "\"" }
      let quoted = index % 2 == 1 && index < quotes.count - 1
      if quoted, !piece.isEmpty, value.contains(piece), !shownValue.contains(piece) {
        result += "(part of the URI hidden)"
      } else {
        result += piece
      }
    }
    return result
  }

  /// True when the URI `value` carries a secret (in its user part or as a parameter).
  public static func holdsPassword(_ value: String) -> Bool {
    URIText(value).map { !$0.hidden.isEmpty } ?? false
  }
}

/// A PostgreSQL URI's text and the byte ranges of it that hold secrets.
///
/// libpq reads `postgresql://[user[:password]@][hosts][/dbname][?key=value&…]`: the user part
/// ends at the first `@` before any `/`, and a `@`, `/` or `?` inside a password must be
/// percent-encoded. People do not always do that, so the text is read as libpq reads it only
/// when that reading is clean (see `readsAsLibpqDoes`); otherwise it is read to hide the most:
/// the user part runs to the last `@` whose text before it reads as a user, its password from
/// the first `:` to that `@`. Either way the parameters start at the first `?` after the user
/// part after which some `key=value` names a libpq keyword; the secret ones are hidden, and the
/// pieces after one that name no libpq keyword too (more of the secret: an `&` inside it).
///
/// So a URI that libpq could not read cleanly may lose more than its password when shown (a
/// raw `@` in a database name after a `host:port`): never less.
private struct URIText {
  let bytes: [UInt8]
  /// Where the text after `scheme://` starts.
  let start: Int
  /// Byte ranges that are not shown: the `:password` of the user part, and each secret
  /// parameter with the `&` or `?` before it.
  private(set) var hidden: [Range<Int>] = []
  /// The secrets, as written.
  private(set) var secrets: [String] = []

  /// Every connection parameter libpq 17 knows.
  static let keywords: Set<String> = [
    "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "require_auth",
    "channel_binding", "connect_timeout", "client_encoding", "options", "application_name",
    "fallback_application_name", "keepalives", "keepalives_idle", "keepalives_interval",
    "keepalives_count", "tcp_user_timeout", "replication", "gssencmode", "sslmode",
    "sslnegotiation", "sslcompression", "sslcert", "sslkey", "sslpassword", "sslcertmode",
    "sslrootcert", "sslcrl", "sslcrldir", "sslsni", "requirepeer", "ssl_min_protocol_version",
    "ssl_max_protocol_version", "krbsrvname", "gsslib", "gssdelegation", "service",
    "target_session_attrs", "load_balance_hosts", "sslkeylogfile", "oauth_issuer",
    "oauth_client_id", "oauth_client_secret", "oauth_scope", "scram_client_key",
    "scram_server_key", "min_protocol_version", "max_protocol_version", "servicefile",
  ]
  /// The parameters that hold a secret.
  static let secretKeywords: Set<String> = [
    "password", "sslpassword", "oauth_client_secret", "scram_client_key", "scram_server_key",
  ]

  init?(_ value: String) {
    guard StoreLocation.isPostgres(value) else { return nil }
    bytes = Array(value.utf8)
    start = value.hasPrefix("postgresql://") ? 13 : 11
    let end = bytes.count
    let userEnd = readsAsLibpqDoes() ? libpqUserEnd() : widestUserEnd()
    var rest = start
    if let userEnd {
      if let colon = firstIndex(of: Byte.colon, in: start..<userEnd) {
        hidden.append(colon..<userEnd)
        secrets.append(text(colon + 1..<userEnd))
      }
      rest = userEnd + 1
    }
    // The parameters.
    guard let mark = queryStart(from: rest) else { return }
    var pieceStart = mark + 1
    // The secret being read: from after its `=` to the end of the last piece that is part of it.
    var secret: Range<Int>?
    while pieceStart <= end {
      let pieceEnd = firstIndex(of: Byte.ampersand, in: pieceStart..<end) ?? end
      let piece = pieceStart..<pieceEnd
      let key = keyword(of: piece)
      if let key, Self.secretKeywords.contains(key) {
        if let secret { secrets.append(text(secret)) }
        let valueStart = (firstIndex(of: Byte.equals, in: piece) ?? pieceStart) + 1
        secret = min(valueStart, pieceEnd)..<pieceEnd
        hidden.append(pieceStart - 1..<pieceEnd)
      } else if let key, Self.keywords.contains(key) {
        if let secret { secrets.append(text(secret)) }
        secret = nil
      } else if let open = secret {
        secret = open.lowerBound..<pieceEnd
        hidden.append(pieceStart - 1..<pieceEnd)
      }
      pieceStart = pieceEnd + 1
    }
    if let secret { secrets.append(text(secret)) }
  }

  /// Where libpq ends the user part: at the first `@`, when it comes before any `/`.
  private func libpqUserEnd() -> Int? {
    let first = (start..<bytes.count).first { bytes[$0] == Byte.at || bytes[$0] == Byte.slash }
    return first.flatMap { bytes[$0] == Byte.at ? $0 : nil }
  }

  /// The user part read to hide the most: up to the last `@` whose text before it reads as a
  /// user (no `/` or `?` before its first `:`).
  private func widestUserEnd() -> Int? {
    (start..<bytes.count).last { index in
      guard bytes[index] == Byte.at else { return false }
      let special = (start..<index).first {
        bytes[$0] == Byte.colon || bytes[$0] == Byte.slash || bytes[$0] == Byte.question
      }
      return special.map { bytes[$0] == Byte.colon } ?? true
    }
  }

  /// True when libpq reads the text cleanly and nothing in it suggests a password typed with
  /// its `@`, `/` or `?` as they are: a user part with no `?`, a host list, a database name with
  /// no `@`, and parameters that are each `key=value` of a libpq keyword, none of whose values
  /// (secrets aside) holds an `@` with a `/` or `?`.
  private func readsAsLibpqDoes() -> Bool {
    let end = bytes.count
    var index = start
    if let at = libpqUserEnd() {
      if firstIndex(of: Byte.question, in: start..<at) != nil { return false }
      index = at + 1
    }
    let hostsEnd = (index..<end).first { bytes[$0] == Byte.slash || bytes[$0] == Byte.question }
    guard isHostList(index..<(hostsEnd ?? end)) else { return false }
    guard var index = hostsEnd else { return true }
    if bytes[index] == Byte.slash {
      let nameEnd = firstIndex(of: Byte.question, in: index..<end) ?? end
      if firstIndex(of: Byte.at, in: index..<nameEnd) != nil { return false }
      index = nameEnd
    }
    var pieceStart = index + 1
    while pieceStart <= end {
      let pieceEnd = firstIndex(of: Byte.ampersand, in: pieceStart..<end) ?? end
      let piece = pieceStart..<pieceEnd
      guard let key = keyword(of: piece), Self.keywords.contains(key) else { return false }
      if !Self.secretKeywords.contains(key), firstIndex(of: Byte.at, in: piece) != nil,
        firstIndex(of: Byte.slash, in: piece) != nil
          || firstIndex(of: Byte.question, in: piece) != nil
      {
        return false
      }
      pieceStart = pieceEnd + 1
    }
    return true
  }

  /// The text without the hidden ranges; a `?` kept before the first parameter left.
  var shown: String {
    var kept: [UInt8] = []
    var index = 0
    var dropped: Int?
    for range in hidden.sorted(by: { $0.lowerBound < $1.lowerBound }) {
      if range.lowerBound > index { kept += bytes[index..<range.lowerBound] }
      index = max(index, range.upperBound)
      if bytes[range.lowerBound] == Byte.question { dropped = kept.count }
    }
    kept += bytes[index...]
    // A first parameter dropped with its `?`: the next one kept starts with `&`.
    if let dropped, dropped < kept.count, kept[dropped] == Byte.ampersand {
      kept[dropped] = Byte.question
    }
    return String(decoding: kept, as: UTF8.self)
  }

  private func text(_ range: Range<Int>) -> String {
    String(decoding: bytes[range], as: UTF8.self)
  }

  private func firstIndex(of byte: UInt8, in range: Range<Int>) -> Int? {
    range.first { bytes[$0] == byte }
  }

  private func lastIndex(of byte: UInt8, in range: Range<Int>) -> Int? {
    range.last { bytes[$0] == byte }
  }

  /// The percent-decoded, lowercased key of `key=value` (nil without `=`).
  private func keyword(of piece: Range<Int>) -> String? {
    guard let equals = firstIndex(of: Byte.equals, in: piece) else { return nil }
    let raw = text(piece.lowerBound..<equals)
    return (raw.percentDecoded() ?? raw).lowercased()
  }

  /// The first `?` from `index` on after which some `key=value` names a libpq keyword.
  private func queryStart(from index: Int) -> Int? {
    (index..<bytes.count).first { bytes[$0] == Byte.question && startsParameters($0) }
  }

  /// True when some `key=value` after the `?` at `mark` names a libpq keyword.
  private func startsParameters(_ mark: Int) -> Bool {
    var pieceStart = mark + 1
    while pieceStart <= bytes.count {
      let pieceEnd = firstIndex(of: Byte.ampersand, in: pieceStart..<bytes.count) ?? bytes.count
      if let key = keyword(of: pieceStart..<pieceEnd), Self.keywords.contains(key) { return true }
      pieceStart = pieceEnd + 1
    }
    return false
  }

  /// True when `range` reads as libpq's hosts: `host[:port]` or `[v6][:port]`, comma-separated.
  private func isHostList(_ range: Range<Int>) -> Bool {
    text(range).split(separator: ",", omittingEmptySubsequences: false).allSatisfy { entry in
      var host = Substring(entry)
      if host.hasPrefix("[") {
        guard let close = host.firstIndex(of: "]") else { return false }
        host = host[host.index(after: close)...]
      } else {
        let name = host.prefix { $0 != ":" }
        guard name.unicodeScalars.allSatisfy({ Byte.isHostCharacter($0) }) else { return false }
        host = host[name.endIndex...]
      }
      guard !host.isEmpty else { return true }
      return host.first == ":" && host.dropFirst().allSatisfy { $0.isASCII && $0.isNumber }
    }
  }
}

/// The ASCII bytes the URI is split on.
private enum Byte {
  static let at = UInt8(ascii: "@")
  static let colon = UInt8(ascii: ":")
  static let slash = UInt8(ascii: "/")
  static let question = UInt8(ascii: "?")
  static let ampersand = UInt8(ascii: "&")
  static let equals = UInt8(ascii: "=")

  /// Letters, digits, `.`, `-`, `_` and `%` (an encoded character) make a host name.
  static func isHostCharacter(_ scalar: Unicode.Scalar) -> Bool {
    scalar.isASCII
      && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
        || ".-_%".unicodeScalars.contains(scalar))
  }
}
