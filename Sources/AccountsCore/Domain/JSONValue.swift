import FoundationEssentials

/// Any JSON value, read with FoundationEssentials' `JSONDecoder` (Foundation's `JSONSerialization`
/// and its `Any` trees are outside the essentials): what a Django dump's elements and systemd's
/// user records are read as.
public enum JSONValue: Equatable, Sendable, Decodable {
  /// `null`.
  case null
  /// `true` or `false`.
  case bool(Bool)
  /// A number with no fraction or exponent that fits 64 bits.
  case integer(Int64)
  /// Any other number.
  case number(Double)
  /// A string.
  case string(String)
  /// An array.
  case array([JSONValue])
  /// An object (of a name given twice, one value).
  case object([String: JSONValue])

  /// Reads one JSON text (an object, an array or a bare value); nil when it is not JSON.
  public init?(parsing bytes: [UInt8]) {
    guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(bytes)) else {
      return nil
    }
    self = value
  }

  /// Decodes whichever kind of value the decoder holds.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if container.decodeNil() {
      self = .null
    } else if let value = try? container.decode(Bool.self) {
      self = .bool(value)
    } else if let value = try? container.decode(Int64.self) {
      self = .integer(value)
    } else if let value = try? container.decode(Double.self) {
      self = .number(value)
    } else if let value = try? container.decode(String.self) {
      self = .string(value)
    } else if let value = try? container.decode([JSONValue].self) {
      self = .array(value)
    } else {
      self = .object(try container.decode([String: JSONValue].self))
    }
  }

  /// The member `name` of an object; nil for anything else or a member it lacks.
  public subscript(name: String) -> JSONValue? {
    if case .object(let members) = self { return members[name] } else { return nil }
  }

  /// The string, if this is one.
  public var string: String? {
    if case .string(let text) = self { return text } else { return nil }
  }

  /// The boolean, if this is one.
  public var bool: Bool? {
    if case .bool(let value) = self { return value } else { return nil }
  }

  /// The number, as a whole number if it is one that fits 64 bits.
  public var integer: Int64? {
    switch self {
    case .integer(let value): value
    case .number(let value): value.rounded() == value ? Int64(exactly: value) : nil
    default: nil
    }
  }

  /// The number, if this is one.
  public var number: Double? {
    switch self {
    case .integer(let value): Double(value)
    case .number(let value): value
    default: nil
    }
  }

  /// The array's elements, if this is one.
  public var array: [JSONValue]? {
    if case .array(let elements) = self { return elements } else { return nil }
  }

  /// The value as JSON text, compact, an object's members in name order.
  public var text: String {
    switch self {
    case .null: return "null"
    case .bool(let value): return value ? "true" : "false"
    case .integer(let value): return String(value)
    case .number(let value):
      return value.rounded() == value && abs(value) < 1e15
        ? String(Int64(value)) : String(value)
    case .string(let text): return Self.quoted(text)
    case .array(let elements): return "[" + elements.map(\.text).joined(separator: ",") + "]"
    case .object(let members):
      return "{"
        + members.sorted { $0.key < $1.key }.map { Self.quoted($0.key) + ":" + $0.value.text }
        .joined(separator: ",") + "}"
    }
  }

  private static func quoted(_ text: String) -> String {
    var result = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": result += "\\\""
      case "\\": result += "\\\\"
      case "\n": result += "\\n"
      case "\r": result += "\\r"
      case "\t": result += "\\t"
      default:
        if scalar.value < 0x20 {
          let hex = String(scalar.value, radix: 16)
          result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        } else {
          result.unicodeScalars.append(scalar)
        }
      }
    }
    return result + "\""
  }
}
