/// The few string helpers Foundation's internationalization part would give (trimming, percent
/// decoding, paths, grouped numbers): written here, a few lines each, so that nothing in the
/// program needs more than FoundationEssentials (whose absence of ICU keeps the program small).
extension StringProtocol {
  /// Without the scalars at either end for which `isTrimmed` holds.
  public func trimming(where isTrimmed: (Unicode.Scalar) -> Bool) -> String {
    let scalars = unicodeScalars
    guard let first = scalars.firstIndex(where: { !isTrimmed($0) }) else { return "" }
    let last = scalars.lastIndex(where: { !isTrimmed($0) }) ?? first
    return String(String.UnicodeScalarView(scalars[first...last]))
  }

  /// Without white space or line ends at either end: Unicode's White_Space property and the
  /// zero-width space, the set Foundation's `.whitespacesAndNewlines` names.
  public func trimmingWhitespace() -> String {
    trimming { $0.properties.isWhitespace || $0 == "\u{200B}" }
  }

  /// Without spaces and tabs at either end: Zs, tab and the zero-width space, Foundation's
  /// `.whitespaces`.
  public func trimmingSpaces() -> String {
    trimming { $0 == "\t" || $0 == "\u{200B}" || $0.properties.generalCategory == .spaceSeparator }
  }
}

extension String {
  /// `%XX` sequences decoded (Foundation's `removingPercentEncoding`): nil when a `%` is not
  /// followed by two hexadecimal digits or the bytes decoded are not UTF-8.
  public func percentDecoded() -> String? {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(utf8.count)
    var iterator = utf8.makeIterator()
    while let byte = iterator.next() {
      guard byte == UInt8(ascii: "%") else {
        bytes.append(byte)
        continue
      }
      guard let high = iterator.next().flatMap(Self.hexValue),
        let low = iterator.next().flatMap(Self.hexValue)
      else { return nil }
      bytes.append(high << 4 | low)
    }
    return String(validating: bytes, as: UTF8.self)
  }

  private static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
  }

  /// `self`, a folder, with `component` after it and one slash between (Foundation's
  /// `appendingPathComponent`, for the relative paths the program adds to a base).
  public func appendingPath(_ component: String) -> String {
    guard !isEmpty else { return component }
    if self == "/" { return "/" + component }
    return (hasSuffix("/") ? String(dropLast()) : self) + "/" + component
  }
}

extension Int {
  /// With a comma between each group of three digits: `12,345`.
  public var grouped: String {
    let digits = String(magnitude)
    var result = ""
    for (index, digit) in digits.enumerated() {
      if index > 0, (digits.count - index) % 3 == 0 { result.append(",") }
      result.append(digit)
    }
    return self < 0 ? "-" + result : result
  }
}
