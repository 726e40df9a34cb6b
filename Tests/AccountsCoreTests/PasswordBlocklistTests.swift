import AccountsCore
import Foundation
import Testing

/// A temporary folder for one test, removed at the end.
final class TemporaryFolder {
  let url = FileManager.default.temporaryDirectory.appendingPathComponent(
    "blocklist-\(UUID().uuidString)")
  init() throws {
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }
  deinit { try? FileManager.default.removeItem(at: url) }

  /// Writes `bytes` to `name` and returns its path.
  func file(_ name: String, _ bytes: [UInt8]) throws -> String {
    let path = url.appendingPathComponent(name).path
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return path
  }
}

@Suite("Password blocklist")
struct PasswordBlocklistTests {
  func refusal(_ path: String, _ reason: String) -> AccountsError {
    .blocklistUnreadable(path: path, reason: reason)
  }

  /// A directory, a device and a FIFO are refused before anything is read; a FIFO with no
  /// writer does not block.
  @Test func refusesWhatIsNotARegularFile() throws {
    // Given
    let folder = try TemporaryFolder()
    let fifo = folder.url.appendingPathComponent("fifo").path
    #expect(mkfifo(fifo, 0o600) == 0)
    for path in [folder.url.path, "/dev/null", "/dev/zero", fifo] {
      let list = PasswordBlocklist(path: path)
      // When / Then
      #expect(throws: refusal(path, "it is not a regular file")) { try list.checkReadable() }
      #expect(throws: refusal(path, "it is not a regular file")) {
        try list.contains("correct horse battery staple")
      }
    }
  }

  /// A missing file cannot be opened; a regular file passes the check.
  @Test func checkReadable() throws {
    let folder = try TemporaryFolder()
    let missing = folder.url.appendingPathComponent("missing").path
    #expect(throws: refusal(missing, "it cannot be opened")) {
      try PasswordBlocklist(path: missing).checkReadable()
    }
    let path = try folder.file("list.txt", Array("one\ntwo\n".utf8))
    try PasswordBlocklist(path: path).checkReadable()
    let empty = try folder.file("empty.txt", [])
    #expect(try PasswordBlocklist(path: empty).contains("anything at all") == false)
  }
}
