/// Rows written from a record's columns and values (what GRDB's `insert` and `update` did, with
/// the table and key named by the caller rather than looked up in the schema).
extension Database {
  /// Inserts one row into `table`: each column given its value.
  func insert(into table: String, _ values: [(String, DatabaseValue)]) throws {
    let columns = values.map(\.0).joined(separator: ", ")
    let marks = values.map { _ in "?" }.joined(separator: ", ")
    try execute(
      sql: "INSERT INTO \(table) (\(columns)) VALUES (\(marks))",
      arguments: StatementArguments(values: values.map(\.1)))
  }

  /// Sets `values` in the rows of `table` where `key` (one of the columns) has its value;
  /// true when a row changed.
  func update(_ table: String, _ values: [(String, DatabaseValue)], key: String)
    throws -> Bool
  {
    let assignments = values.filter { $0.0 != key }
    guard let keyValue = values.first(where: { $0.0 == key })?.1 else { return false }
    try execute(
      sql: """
        UPDATE \(table) SET \(assignments.map { "\($0.0) = ?" }.joined(separator: ", "))
        WHERE \(key) = ?
        """,
      arguments: StatementArguments(values: assignments.map(\.1) + [keyValue]))
    return changesCount > 0
  }
}
