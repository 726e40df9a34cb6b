import AccountsCore
import AccountsTestSupport
import Foundation
import Testing

@testable import AccountsCLI

/// A deterministic random source (SplitMix64), so a failing case can be replayed.
struct SeededGenerator: RandomNumberGenerator {
  var state: UInt64
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

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
  let maximum = PasswordBlocklist.maximumLineLength

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
      let list = PasswordBlocklist(file: path)
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
      try PasswordBlocklist(file: missing).checkReadable()
    }
    let path = try folder.file("list.txt", Array("one\ntwo\n".utf8))
    try PasswordBlocklist(file: path).checkReadable()
    let empty = try folder.file("empty.txt", [])
    #expect(try PasswordBlocklist(file: empty).contains("anything at all") == false)
  }

  /// A line of exactly `maximumLineLength` bytes is compared; one byte more and it never
  /// matches, even the same text.
  @Test func lineLengthBound() throws {
    let folder = try TemporaryFolder()
    for length in [maximum - 1, maximum, maximum + 1] {
      let line = String(repeating: "a", count: length)
      let path = try folder.file("list-\(length).txt", Array("before\n\(line)\nafter\n".utf8))
      #expect(try PasswordBlocklist(file: path).contains(line) == (length <= maximum))
    }
  }

  /// What follows a skipped over-long line on the same line is never read as a line of its
  /// own, wherever the reads split it.
  @Test func tailOfLongLineIsNotALine() throws {
    let folder = try TemporaryFolder()
    let secret = "correct horse battery staple"
    for prefix in [maximum + 1, 2 * maximum - 1, 2 * maximum, 2 * maximum + 1, 4 * maximum] {
      let bytes = [UInt8](repeating: UInt8(ascii: "x"), count: prefix) + Array(secret.utf8)
      let path = try folder.file("long-\(prefix).txt", bytes + [0x0A, 0x6F, 0x6B])
      let list = PasswordBlocklist(file: path)
      #expect(try list.contains(secret) == false, "prefix \(prefix)")
      #expect(try list.contains("ok") == true, "prefix \(prefix)")
    }
  }

  /// A matching line is found wherever it lies against the end of the first read (the reader's
  /// buffer holds twice `maximumLineLength`): before, across or after it, as LF, CRLF,
  /// fullwidth text, or ASCII but for its last character.
  @Test func lineAtEveryOffsetAroundTheBufferEnd() throws {
    let folder = try TemporaryFolder()
    let edge = 2 * maximum
    for line in ["password", "PassWord\r", "ｐａｓｓｗｏｒｄ", "passworｄ"] {
      let bytes = Array(line.utf8)
      for lineEnd in edge - 40...edge + 8 {
        let lineStart = lineEnd - bytes.count
        let file = Self.filler(lineStart) + bytes + Array("\nafter\n".utf8)
        let list = PasswordBlocklist(file: try folder.file("edge.txt", file))
        #expect(try list.contains("password"), "\(line) ending at \(lineEnd)")
      }
    }
  }

  /// `count` bytes of short ASCII lines, the last one ended by a newline.
  static func filler(_ count: Int) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count)
    while bytes.count < count {
      let length = min(10, count - bytes.count)
      bytes += [UInt8](repeating: UInt8(ascii: "f"), count: length - 1) + [0x0A]
    }
    return bytes
  }

  /// Lines that are not ASCII take the full path: they match what they normalize to.
  @Test func nonASCIILinesNormalize() throws {
    let folder = try TemporaryFolder()
    let text = "ｐａｓｓｗｏｒｄ\n\u{FB01}nal\n\u{212A}elvin\nCaf\u{E9}\r\nnai\u{308}ve\n\u{130}stanbul"
    let list = PasswordBlocklist(file: try folder.file("list.txt", Array(text.utf8)))
    for password in ["PASSWORD", "final", "kelvin", "CAFE\u{301}", "Naïve", "i\u{307}stanbul"] {
      #expect(try list.contains(password), "\(password)")
    }
    for password in ["passwor", "fi", "Cafe", "naive", "istanbul"] {
      #expect(try list.contains(password) == false, "\(password)")
    }
  }

  /// On a file of mixed lines (ASCII of every length, CRLF, other scripts, invalid UTF-8,
  /// lines over the bound, empty lines, no final newline) the reader agrees with splitting the
  /// whole file and normalizing every line.
  @Test func agreesWithReadingWholeFile() throws {
    // Given
    var random = SeededGenerator(state: 7)
    var lines: [[UInt8]] = []
    var size = 0
    while size < 600_000 {
      let line = Self.randomLine(using: &random, maximum: maximum)
      size += line.count + 1
      lines.append(line)
    }
    let bytes = Array(lines.joined(separator: [0x0A]))
    let folder = try TemporaryFolder()
    let list = PasswordBlocklist(file: try folder.file("mixed.txt", bytes))
    let reference = try Self.reference(bytes, maximum: maximum)
    var candidates = ["not in the list at all", "", "x", "zzzzzzzzzzzzzzzzzzz"]
    for _ in 0..<60 {
      var line = lines[Int.random(in: 0..<lines.count, using: &random)]
      if line.last == UInt8(ascii: "\r") { line.removeLast() }
      guard let text = String(validating: line, as: UTF8.self) else { continue }
      candidates.append(Bool.random(using: &random) ? text.uppercased() : text)
    }
    // When / Then
    var matched = 0
    for candidate in candidates {
      let wanted = try PasswordRules.normalized(candidate).lowercased()
      let expected = reference.contains(wanted)
      if expected { matched += 1 }
      #expect(try list.contains(candidate) == expected, "\(candidate.prefix(40))")
    }
    #expect(matched > 30)
  }

  /// Splits the whole file at newlines and normalizes every line that can match.
  static func reference(_ bytes: [UInt8], maximum: Int) throws -> Set<String> {
    var result = Set<String>()
    for var line in bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
    where line.count <= maximum {
      if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
      if let text = String(validating: line, as: UTF8.self) {
        result.insert(try PasswordRules.normalized(text).lowercased())
      }
    }
    return result
  }

  /// One line: mostly short ASCII, sometimes other scripts, invalid bytes, CRLF or over-long.
  static func randomLine(using random: inout SeededGenerator, maximum: Int) -> [UInt8] {
    let ascii = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 !-_.".utf8)
    let others = ["é", "e\u{301}", "ｗ", "\u{FB01}", "\u{212A}", "ß", "İ", "한", "ᄒ\u{1161}", "😀"]
    var line: [UInt8] = []
    switch Int.random(in: 0..<100, using: &random) {
    case 0..<2:
      line = [UInt8](
        repeating: UInt8(ascii: "y"), count: Int.random(in: 1000...3 * maximum, using: &random))
    case 2..<4:
      line = []
    default:
      for _ in 0..<Int.random(in: 1...40, using: &random) {
        if Int.random(in: 0..<10, using: &random) == 0 {
          line += Array((others.randomElement(using: &random) ?? "é").utf8)
        } else {
          line.append(ascii.randomElement(using: &random) ?? 0x61)
        }
      }
    }
    switch Int.random(in: 0..<20, using: &random) {
    case 0: line.append(0xFF)
    case 1: line.insert(0xC1, at: 0)
    case 2, 3: line.append(UInt8(ascii: "\r"))
    default: break
    }
    return line
  }
}
