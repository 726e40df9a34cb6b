/// Text made safe to print at a terminal: the one path every printed line goes through.
public enum Escaping {
  /// `text` with every character that could act on a terminal, or hide itself, made visible.
  ///
  /// Each is written as `\u{…}`: controls (escape sequences, carriage returns, newlines),
  /// invisible format characters (bidirectional overrides, zero-width spaces), line and paragraph
  /// separators, unassigned, surrogate and private-use code points. Printable text is left as it is, so
  /// applying it twice changes nothing.
  public static func visible(_ text: String) -> String {
    // Printable ASCII, the usual case, has nothing to escape.
    if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return text }
    guard text.unicodeScalars.contains(where: needsEscape) else { return text }
    var result = ""
    for scalar in text.unicodeScalars {
      if needsEscape(scalar) {
        result += "\\u{\(String(scalar.value, radix: 16))}"
      } else {
        result.unicodeScalars.append(scalar)
      }
    }
    return result
  }

  /// `bytes` (a path from the command line, which need not be UTF-8) made safe to print: what
  /// is UTF-8 as `visible` shows it, every other byte as `\xHH` (`/srv/a\xffb`).
  public static func visible(bytes: [UInt8]) -> String {
    var result = ""
    var start = 0
    var index = 0
    func flush() {
      if start < index { result += visible(String(decoding: bytes[start..<index], as: UTF8.self)) }
    }
    while index < bytes.count {
      // The length of a UTF-8 character starting here, if one does.
      let length = (1...4).first { count in
        index + count <= bytes.count
          && String(validating: bytes[index..<index + count], as: UTF8.self)?.unicodeScalars
            .count == 1
      }
      if let length {
        index += length
      } else {
        flush()
        result +=
          "\\x" + String(bytes[index] >> 4, radix: 16) + String(bytes[index] & 15, radix: 16)
        index += 1
        start = index
      }
    }
    flush()
    return result
  }

  /// `visible`, with backslashes doubled too, so that the audit log cannot be made to show a
  /// forged escape: `\u{1b}` typed as six characters reads `\\u{1b}`.
  public static func unambiguous(_ text: String) -> String {
    var doubled = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
      doubled.append(scalar)
      if scalar == "\\" { doubled.append(scalar) }
    }
    return visible(String(doubled))
  }

  /// True for a character `visible` writes as an escape.
  static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.properties.generalCategory {
    case .control, .format, .lineSeparator, .paragraphSeparator, .unassigned, .surrogate,
      .privateUse:
      return true
    default:
      return false
    }
  }
}
