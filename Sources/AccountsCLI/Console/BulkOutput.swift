/// Where a command writes many result lines at once (`user list`, `log`).
protocol BulkOutput: AnyObject {
  /// Adds one line (escaped as every printed line is).
  func line(_ text: String)
  /// Adds one line that `body` appends as bytes, already safe for a terminal (JSON, whose
  /// writer escapes everything `Escaping.visible` would).
  func escapedLine(_ body: (inout [UInt8]) -> Void)
  /// Writes what is pending.
  func flush()
}
