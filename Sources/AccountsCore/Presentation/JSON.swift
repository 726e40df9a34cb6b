import Foundation

/// Minimal JSON writing with every key in a fixed order.
///
/// Every character `Escaping.visible` would escape is written as a `\u` escape, so a JSON line
/// passes the terminal's escaping unchanged and still parses to the stored text.
enum JSON {
  /// A JSON string literal.
  static func string(_ text: String) -> String {
    // Most text is printable ASCII with nothing to escape: copied whole.
    if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C }) {
      return "\"" + text + "\""
    }
    var result = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": result += "\\\""
      case "\\": result += "\\\\"
      case "\n": result += "\\n"
      case "\r": result += "\\r"
      case "\t": result += "\\t"
      default:
        if Escaping.needsEscape(scalar) || scalar.value == 0x7F {
          for unit in String(scalar).utf16 { result += String(format: "\\u%04x", unit) }
        } else {
          result.unicodeScalars.append(scalar)
        }
      }
    }
    return result + "\""
  }

  /// `true` or `false`.
  static func bool(_ value: Bool) -> String { value ? "true" : "false" }

  /// A string literal, or `null`.
  static func string(_ text: String?) -> String {
    text.map { string($0) } ?? "null"
  }

  /// A JSON object from already-encoded values, keys in the order given.
  static func object(_ fields: [(String, String)]) -> String {
    "{" + fields.map { "\(string($0.0)):\($0.1)" }.joined(separator: ",") + "}"
  }
}
