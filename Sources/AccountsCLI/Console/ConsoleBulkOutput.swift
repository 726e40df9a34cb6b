import AccountsCore

/// Bulk lines passed one by one to a console (tests).
final class ConsoleBulkOutput: BulkOutput {
  private let console: any Console
  init(_ console: any Console) { self.console = console }
  func line(_ text: String) { console.output(text) }
  func escapedLine(_ body: (inout [UInt8]) -> Void) {
    var bytes: [UInt8] = []
    body(&bytes)
    console.output(String(decoding: bytes, as: UTF8.self))
  }
  func flush() {}
}
