import AccountsCore
import AccountsCrypto
import FoundationEssentials

/// A value a result's column decodes to from PostgreSQL's text form (as postgres-nio's
/// `PostgresDecodable`).
protocol PGDecodable {
  /// The value `text` spells; nil when it spells none.
  init?(postgresText text: String)
  /// What a value of this type is, in a message's words.
  static var postgresDescription: String { get }
}

extension String: PGDecodable {
  init?(postgresText text: String) { self = text }
  static var postgresDescription: String { "text" }
}

extension Int64: PGDecodable {
  init?(postgresText text: String) { self.init(text) }
  static var postgresDescription: String { "a whole number" }
}

extension Int: PGDecodable {
  init?(postgresText text: String) { self.init(text) }
  static var postgresDescription: String { "a whole number" }
}

extension Bool: PGDecodable {
  init?(postgresText text: String) {
    switch text {
    case "t": self = true
    case "f": self = false
    default: return nil
    }
  }
  static var postgresDescription: String { "true or false" }
}

extension Date: PGDecodable {
  /// A time selected through `accounts.stamp`.
  init?(postgresText text: String) {
    guard let date = Timestamp.date(from: text) else { return nil }
    self = date
  }
  static var postgresDescription: String { "a time" }
}

extension Array: PGDecodable where Element == UInt8 {
  /// Bytes selected as `encode(…, 'hex')`.
  init?(postgresText text: String) {
    guard let bytes = Hex.decode(text) else { return nil }
    self = bytes
  }
  static var postgresDescription: String { "bytes in hex" }
}

/// A column whose value cannot be decoded: NULL where a value is required, or text that does
/// not spell the expected type.
struct PGUnreadableValue: Error {
  /// What is wrong, in words (the value itself is not repeated: it may be a secret).
  let reason: String
}

extension PGRows {
  /// Column `column` of row `row` as a `T`; NULL, or text that is no `T`, throws.
  func decode<T: PGDecodable>(_ type: T.Type, _ row: Int, _ column: Int)
    throws(PGUnreadableValue) -> T
  {
    guard let value = try decode(T?.self, row, column) else {
      throw PGUnreadableValue(
        reason: "column \(column + 1) is empty where \(T.postgresDescription) is required")
    }
    return value
  }

  /// Column `column` of row `row` as a `T`, nil for NULL; text that is no `T` throws.
  func decode<T: PGDecodable>(_ type: T?.Type, _ row: Int, _ column: Int)
    throws(PGUnreadableValue) -> T?
  {
    guard let text = text(row, column) else { return nil }
    guard let value = T(postgresText: text) else {
      throw PGUnreadableValue(
        reason: "column \(column + 1) is not \(T.postgresDescription)")
    }
    return value
  }
}

/// Decodes through `body`; a value that cannot be read is a store error about `location`.
func decoding<T>(location: String, _ body: () throws(PGUnreadableValue) -> T)
  throws(StoreError) -> T
{
  do {
    return try body()
  } catch {
    throw .unreadableValue(location: location, reason: error.reason)
  }
}
