import Foundation
import Testing

@testable import AccountsCLI

@Suite("Line reader")
struct LineReaderTests {
  /// Runs `body` with a file descriptor reading `bytes` from a temporary file.
  private func withInput(_ bytes: [UInt8], _ body: (Int32) throws -> Void) throws {
    let url = FileManager.default.temporaryDirectory
      .appendingPathComponent("line-reader-\(UUID().uuidString)")
    try Data(bytes).write(to: url)
    defer { try? FileManager.default.removeItem(at: url) }
    let fd = open(url.path, O_RDONLY)
    try #require(fd >= 0)
    defer { close(fd) }
    try body(fd)
  }

  /// Once a line is handed out, the reader's buffer holds only zeros where it was.
  @Test func wipesALineOnceHandedOut() throws {
    let secret = Array("correct horse battery staple".utf8)
    try withInput(secret + Array("\r\nnext line".utf8)) { fd in
      var reader = LineReader(fd: fd, limit: 8192)
      #expect(reader.next() == .bytes(secret))
      let used = secret.count + 2
      // The next line is still buffered, so nothing was compacted away yet.
      try #require(reader.buffer.count > used)
      #expect(reader.buffer[..<used].allSatisfy { $0 == 0 })
      #expect(reader.next() == .bytes(Array("next line".utf8)))
      #expect(reader.next() == .endOfInput)
    }
  }

  /// Lines come out whole and in order across reads and compactions, an over-long one is
  /// reported and skipped, and the storage is never reallocated (which would free a copy of
  /// unread lines without wiping it).
  @Test func readsEveryLineAcrossCompactions() throws {
    let lines = (0..<30_000).map { "line \($0)" }
    let input =
      lines[..<15_000].joined(separator: "\n") + "\n"
      + String(repeating: "x", count: 100) + "\r\n"
      + lines[15_000...].joined(separator: "\r\n")
    try withInput(Array(input.utf8)) { fd in
      var reader = LineReader(fd: fd, limit: 64)
      var capacities = Set<Int>()
      for line in lines[..<15_000] {
        #expect(reader.next() == .bytes(Array(line.utf8)))
        capacities.insert(reader.buffer.capacity)
      }
      #expect(reader.next() == .tooLong)
      for line in lines[15_000..<29_999] {
        #expect(reader.next() == .bytes(Array(line.utf8)))
        capacities.insert(reader.buffer.capacity)
      }
      #expect(capacities.count == 1)
      #expect(reader.next() == .bytes(Array("line 29999".utf8)))
      #expect(reader.next() == .endOfInput)
    }
  }
}
