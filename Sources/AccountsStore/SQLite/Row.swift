/// One result row, its values read by type (GRDB's `Row`): `try row[0]`, `try row["name"]`.
///
/// A NULL read as a non-optional type, or a value of another storage class, throws
/// `UnreadableValue` (the store makes it `StoreError.unreadableValue`).
struct Row: Equatable {
  /// The values, in the result's column order.
  let values: [DatabaseValue]
  /// The result's column names.
  let columnNames: [String]

  /// The number of columns.
  var count: Int { values.count }

  /// The value of column `index` (from 0) as a `T`.
  subscript<T: DatabaseValueConvertible>(_ index: Int) -> T {
    get throws {
      guard values.indices.contains(index) else {
        throw UnreadableValue(reason: "the result has no column \(index + 1)")
      }
      return try values[index].decode(T.self, column: index)
    }
  }

  /// The value of the column named `name` (case-insensitive) as a `T`.
  subscript<T: DatabaseValueConvertible>(_ name: String) -> T {
    get throws {
      let key = name.lowercased()
      guard let index = columnNames.firstIndex(where: { $0.lowercased() == key }) else {
        throw UnreadableValue(reason: "the result has no column named \(name)")
      }
      return try values[index].decode(T.self, column: index)
    }
  }
}

/// A type made from one result row (GRDB's `FetchableRecord`).
protocol FetchableRecord {
  /// The value `row` holds; throws `UnreadableValue` where a column cannot be read.
  init(row: Row) throws
}

/// The rows of one statement, read one at a time (GRDB's `Cursor`).
///
/// A million rows stream through without being held at once. The statement is released at the end, or when the
/// cursor goes.
final class DatabaseCursor<Element> {
  private let statement: Statement
  private let element: (Row) throws -> Element
  private var finished = false

  init(
    _ db: Database, sql: String, arguments: StatementArguments,
    element: @escaping (Row) throws -> Element
  ) throws {
    statement = try db.cachedStatement(sql: sql)
    self.element = element
    try statement.bind(arguments)
    statement.isBusy = true
  }

  deinit { finish() }

  /// The next row's element; nil after the last.
  func next() throws -> Element? {
    guard !finished else { return nil }
    do {
      guard try statement.step() else {
        finish()
        return nil
      }
      return try element(Row(values: statement.row(), columnNames: statement.columnNames))
    } catch {
      finish()
      throw error
    }
  }

  private func finish() {
    guard !finished else { return }
    finished = true
    statement.reset()
    statement.isBusy = false
  }
}

/// A cursor of rows.
typealias RowCursor = DatabaseCursor<Row>

extension Row {
  /// The rows of `sql`, one at a time.
  static func fetchCursor(
    _ db: Database, sql: String, arguments: StatementArguments = StatementArguments()
  ) throws -> RowCursor {
    try DatabaseCursor(db, sql: sql, arguments: arguments) { $0 }
  }

  /// Every row of `sql`.
  static func fetchAll(
    _ db: Database, sql: String, arguments: StatementArguments = StatementArguments()
  ) throws -> [Row] {
    let cursor = try fetchCursor(db, sql: sql, arguments: arguments)
    var rows: [Row] = []
    while let row = try cursor.next() { rows.append(row) }
    return rows
  }

  /// The first row of `sql`; nil when it has none.
  static func fetchOne(
    _ db: Database, sql: String, arguments: StatementArguments = StatementArguments()
  ) throws -> Row? {
    try fetchCursor(db, sql: sql, arguments: arguments).next()
  }
}

extension FetchableRecord {
  /// The records of `sql`'s rows, one at a time.
  static func fetchCursor(
    _ db: Database, sql: String, arguments: StatementArguments = StatementArguments()
  ) throws -> DatabaseCursor<Self> {
    try DatabaseCursor(db, sql: sql, arguments: arguments, element: Self.init(row:))
  }

  /// The records of every row of `sql`.
  static func fetchAll(
    _ db: Database, sql: String, arguments: StatementArguments = StatementArguments()
  ) throws -> [Self] {
    try Row.fetchAll(db, sql: sql, arguments: arguments).map(Self.init(row:))
  }

  /// The record of `sql`'s first row; nil when it has none.
  static func fetchOne(
    _ db: Database, sql: String, arguments: StatementArguments = StatementArguments()
  ) throws -> Self? {
    try Row.fetchOne(db, sql: sql, arguments: arguments).map(Self.init(row:))
  }
}

extension DatabaseValueConvertible {
  /// The first column of `sql`'s rows, one at a time.
  static func fetchCursor(
    _ db: Database, sql: String, arguments: StatementArguments = StatementArguments()
  ) throws -> DatabaseCursor<Self> {
    try DatabaseCursor(db, sql: sql, arguments: arguments) { row in try row[0] }
  }

  /// The first column of every row of `sql`.
  static func fetchAll(
    _ db: Database, sql: String, arguments: StatementArguments = StatementArguments()
  ) throws -> [Self] {
    try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in try row[0] }
  }

  /// The first column of `sql`'s first row; nil when it has no row or the value is NULL.
  static func fetchOne(
    _ db: Database, sql: String, arguments: StatementArguments = StatementArguments()
  ) throws -> Self? {
    guard let row = try Row.fetchOne(db, sql: sql, arguments: arguments) else { return nil }
    let value: Self? = try row[0]
    return value
  }
}
