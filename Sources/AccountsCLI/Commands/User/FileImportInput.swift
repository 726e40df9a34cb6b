import AccountsCore
import FoundationEssentials
import Glibc

/// `user import`'s input: a file or standard input, read in blocks, handed on line by line.
final class FileImportInput: ImportInput {
  /// The longest line kept; the rest of a longer one is dropped (it cannot pass the rules).
  static let lineLimit = 1 << 20

  private let fd: Int32
  private let name: String
  private let size: Int?
  private var buffer: [UInt8] = []
  private var start = 0
  private var consumed = 0
  /// Bytes of an overlong line dropped so far.
  private var dropped = 0
  private var ended = false

  init(path: String) throws(AccountsError) {
    name = path
    if path == "-" {
      fd = STDIN_FILENO
    } else {
      fd = open(path, O_RDONLY | O_CLOEXEC)
      guard fd >= 0 else {
        throw .importFileUnreadable(path: path, reason: String(cString: strerror(errno)))
      }
    }
    var status = stat()
    if fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
      throw .importFileUnreadable(path: path, reason: "it is a folder")
    }
    size =
      fstat(fd, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
      ? Int(status.st_size) : nil
  }

  deinit { if fd != STDIN_FILENO { close(fd) } }

  var fraction: Double? { size.map { $0 > 0 ? Double(consumed) / Double($0) : 1 } }

  /// Reads one more block; false at the end.
  private func fill() throws(AccountsError) -> Bool {
    if ended { return false }
    if start > 0 && start >= buffer.count / 2 {
      buffer.removeFirst(start)
      start = 0
    }
    let old = buffer.count
    buffer.append(contentsOf: repeatElement(0, count: 65_536))
    while true {
      let got = buffer.withUnsafeMutableBytes { raw -> Int in
        guard let base = raw.baseAddress else { return -1 }
        return read(fd, base + old, 65_536)
      }
      if got < 0 && errno == EINTR { continue }
      guard got >= 0 else {
        buffer.removeLast(65_536)
        throw .importFileUnreadable(path: name, reason: String(cString: strerror(errno)))
      }
      buffer.removeLast(65_536 - got)
      if got == 0 { ended = true }
      return got > 0
    }
  }

  func peek(_ count: Int) throws(AccountsError) -> [UInt8] {
    while buffer.count - start < count, try fill() {}
    return Array(buffer[start..<min(buffer.count, start + count)])
  }

  func nextLine() throws(AccountsError) -> [UInt8]? {
    // How much past `start` has been searched already (kept relative: `fill` may move the
    // buffer's contents to its front).
    var scanned = 0
    while true {
      if let newline = buffer[(start + scanned)...].firstIndex(of: UInt8(ascii: "\n")) {
        var end = newline
        if end > start && buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        let line = Array(buffer[start..<min(end, start + Self.lineLimit)])
        consumed += newline + 1 - start + dropped
        dropped = 0
        start = newline + 1
        return line
      }
      if buffer.count - start > Self.lineLimit {
        // Keep the start of an endless line, drop the rest of it as it comes.
        dropped += buffer.count - (start + Self.lineLimit)
        buffer.removeSubrange((start + Self.lineLimit)..<buffer.count)
      }
      scanned = buffer.count - start
      if try !fill() {
        guard start < buffer.count else { return nil }
        let line = Array(buffer[start..<buffer.count])
        consumed += buffer.count - start + dropped
        dropped = 0
        start = buffer.count
        return line
      }
    }
  }

  func nextBlock() throws(AccountsError) -> [UInt8]? {
    if start >= buffer.count, try !fill() { return nil }
    defer {
      consumed += buffer.count - start
      start = buffer.count
    }
    return Array(buffer[start...])
  }
}
