import FoundationEssentials

/// Minimal JSON writing with every key in a fixed order.
///
/// Every character `Escaping.visible` would escape is written as a `\u` escape, so a JSON line
/// passes the terminal's escaping unchanged and still parses to the stored text.
enum JSON {
  /// A JSON string literal.
  static func string(_ text: String) -> String {
    var bytes: [UInt8] = []
    append(text, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  /// `text` as a literal, character by character: what `append` falls back to.
  private static func escaped(_ text: String) -> String {
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
          for unit in String(scalar).utf16 {
            let hex = String(unit, radix: 16)
            result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
          }
        } else {
          result.unicodeScalars.append(scalar)
        }
      }
    }
    return result + "\""
  }

  /// Appends `text` as a JSON string literal to `bytes`: copied as it is when it holds
  /// nothing to escape (printable ASCII without `"` or `\`, the usual case), else escaped.
  static func append(_ text: String, to bytes: inout [UInt8]) {
    var text = text
    let plain = text.withUTF8 { utf8 -> Bool in
      for byte in utf8 where byte < 0x20 || byte >= 0x7F || byte == 0x22 || byte == 0x5C {
        return false
      }
      bytes.append(UInt8(ascii: "\""))
      bytes.append(contentsOf: utf8)
      bytes.append(UInt8(ascii: "\""))
      return true
    }
    if !plain { bytes.append(contentsOf: escaped(text).utf8) }
  }

  /// Appends an array of string literals.
  static func append(_ items: [String], to bytes: inout [UInt8]) {
    bytes.append(UInt8(ascii: "["))
    for (index, item) in items.enumerated() {
      if index > 0 { bytes.append(UInt8(ascii: ",")) }
      append(item, to: &bytes)
    }
    bytes.append(UInt8(ascii: "]"))
  }

  /// Appends a string literal, or `null`.
  static func append(_ text: String?, to bytes: inout [UInt8]) {
    if let text { append(text, to: &bytes) } else { bytes.append(contentsOf: "null".utf8) }
  }

  /// Appends a stored timestamp as a string literal, or `null`.
  static func append(_ date: Date?, to bytes: inout [UInt8]) {
    guard let date else { return bytes.append(contentsOf: "null".utf8) }
    bytes.append(UInt8(ascii: "\""))
    Timestamp.append(date, to: &bytes)
    bytes.append(UInt8(ascii: "\""))
  }

  /// Appends `"key":`, preceded by `{` for the first key and `,` for the others.
  static func key(_ key: StaticString, first: Bool = false, to bytes: inout [UInt8]) {
    bytes.append(first ? UInt8(ascii: "{") : UInt8(ascii: ","))
    bytes.append(UInt8(ascii: "\""))
    key.withUTF8Buffer { bytes.append(contentsOf: $0) }
    bytes.append(contentsOf: "\":".utf8)
  }

  /// `true` or `false`.
  static func bool(_ value: Bool) -> String { value ? "true" : "false" }

  /// `true` or `false`, appended.
  static func append(_ value: Bool, to bytes: inout [UInt8]) {
    bytes.append(contentsOf: bool(value).utf8)
  }

  /// A string literal, or `null`.
  static func string(_ text: String?) -> String {
    text.map { string($0) } ?? "null"
  }

  /// A JSON object from already-encoded values, keys in the order given.
  static func object(_ fields: KeyValuePairs<String, String>) -> String {
    var result = "{"
    result.reserveCapacity(fields.reduce(2) { $0 + $1.key.utf8.count + $1.value.utf8.count + 4 })
    for (index, field) in fields.enumerated() {
      if index > 0 { result += "," }
      result += string(field.key)
      result += ":"
      result += field.value
    }
    result += "}"
    return result
  }
}
