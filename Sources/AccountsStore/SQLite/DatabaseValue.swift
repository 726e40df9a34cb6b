import AccountsCore
import FoundationEssentials

/// A value as SQLite stores it: one of its five storage classes.
enum DatabaseValue: Equatable, Sendable {
  case null
  case integer(Int64)
  case real(Double)
  case text(String)
  case blob([UInt8])
}

/// A Swift type kept in one column: bound to a statement's parameter, and read back from a
/// result's column by type (GRDB's `DatabaseValueConvertible`, postgres-nio's
/// `PostgresDecodable`).
///
/// `Optional` conforms where its wrapped type does: NULL reads as nil. A NULL read as a
/// non-optional type, or a value of another storage class, throws `UnreadableValue`.
protocol DatabaseValueConvertible {
  /// The value as bound to a parameter.
  var databaseValue: DatabaseValue { get }
  /// The value `value` holds; nil when it holds none of this type.
  static func fromDatabaseValue(_ value: DatabaseValue) -> Self?
  /// What a value of this type is, in a message's words.
  static var databaseDescription: String { get }
}

/// A column whose value cannot be read as the type asked for: NULL where a value is required,
/// or another storage class.
struct UnreadableValue: Error {
  /// What is wrong, in words (the value itself is not repeated: it may be a secret).
  let reason: String
}

extension DatabaseValue {
  /// The value as a `T`, `column` (counted from 0) naming it in the error.
  func decode<T: DatabaseValueConvertible>(_ type: T.Type, column: Int) throws(UnreadableValue)
    -> T
  {
    if let value = T.fromDatabaseValue(self) { return value }
    if self == .null {
      throw UnreadableValue(
        reason: "column \(column + 1) is empty where \(T.databaseDescription) is required")
    }
    throw UnreadableValue(reason: "column \(column + 1) is not \(T.databaseDescription)")
  }
}

extension DatabaseValue: DatabaseValueConvertible {
  var databaseValue: DatabaseValue { self }
  static func fromDatabaseValue(_ value: DatabaseValue) -> DatabaseValue? { value }
  static var databaseDescription: String { "a value" }
}

extension String: DatabaseValueConvertible {
  var databaseValue: DatabaseValue { .text(self) }
  static func fromDatabaseValue(_ value: DatabaseValue) -> String? {
    guard case .text(let text) = value else { return nil }
    return text
  }
  static var databaseDescription: String { "text" }
}

extension Int64: DatabaseValueConvertible {
  var databaseValue: DatabaseValue { .integer(self) }
  static func fromDatabaseValue(_ value: DatabaseValue) -> Int64? {
    guard case .integer(let number) = value else { return nil }
    return number
  }
  static var databaseDescription: String { "a whole number" }
}

extension Int: DatabaseValueConvertible {
  var databaseValue: DatabaseValue { .integer(Int64(self)) }
  static func fromDatabaseValue(_ value: DatabaseValue) -> Int? {
    guard case .integer(let number) = value else { return nil }
    return Int(exactly: number)
  }
  static var databaseDescription: String { "a whole number" }
}

extension Bool: DatabaseValueConvertible {
  /// Stored as 1 or 0, as SQLite's own `true` and `false` are.
  var databaseValue: DatabaseValue { .integer(self ? 1 : 0) }
  static func fromDatabaseValue(_ value: DatabaseValue) -> Bool? {
    guard case .integer(let number) = value else { return nil }
    return number != 0
  }
  static var databaseDescription: String { "true or false" }
}

extension Double: DatabaseValueConvertible {
  var databaseValue: DatabaseValue { .real(self) }
  static func fromDatabaseValue(_ value: DatabaseValue) -> Double? {
    switch value {
    case .real(let number): return number
    case .integer(let number): return Double(number)
    default: return nil
    }
  }
  static var databaseDescription: String { "a number" }
}

extension Array: DatabaseValueConvertible where Element == UInt8 {
  var databaseValue: DatabaseValue { .blob(self) }
  static func fromDatabaseValue(_ value: DatabaseValue) -> [UInt8]? {
    guard case .blob(let bytes) = value else { return nil }
    return bytes
  }
  static var databaseDescription: String { "bytes" }
}

extension Data: DatabaseValueConvertible {
  var databaseValue: DatabaseValue { .blob([UInt8](self)) }
  static func fromDatabaseValue(_ value: DatabaseValue) -> Data? {
    guard case .blob(let bytes) = value else { return nil }
    return Data(bytes)
  }
  static var databaseDescription: String { "bytes" }
}

extension Optional: DatabaseValueConvertible where Wrapped: DatabaseValueConvertible {
  var databaseValue: DatabaseValue { self?.databaseValue ?? .null }
  static func fromDatabaseValue(_ value: DatabaseValue) -> Wrapped?? {
    if value == .null { return .some(nil) }
    return Wrapped.fromDatabaseValue(value).map { .some($0) }
  }
  static var databaseDescription: String { Wrapped.databaseDescription }
}

/// The values bound to a statement's parameters, in order (GRDB's `StatementArguments`):
/// `[name, 3, nil]`, or `StatementArguments(names)`.
struct StatementArguments: ExpressibleByArrayLiteral {
  /// The values, the first bound to parameter 1.
  var values: [DatabaseValue]

  init() { values = [] }

  init(arrayLiteral elements: (any DatabaseValueConvertible)?...) {
    values = elements.map { $0?.databaseValue ?? .null }
  }

  init<S: Sequence>(_ elements: S) where S.Element: DatabaseValueConvertible {
    values = elements.map(\.databaseValue)
  }

  init<S: Sequence<DatabaseValue>>(values: S) { self.values = Array(values) }

  static func += (arguments: inout StatementArguments, more: StatementArguments) {
    arguments.values += more.values
  }

  static func + (arguments: StatementArguments, more: StatementArguments) -> StatementArguments {
    var all = arguments
    all += more
    return all
  }
}
