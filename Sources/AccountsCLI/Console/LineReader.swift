import AccountsCore
import CTerminal
import FoundationEssentials
import Glibc

/// Reads lines from a file descriptor with a bound on their length.
///
/// Its own copies of what it read are zeroed once handed out or discarded (a typed password
/// stays in memory no longer than the caller keeps it), and its storage is sized up front so
/// that growing never leaves an old, unwiped copy behind.
struct LineReader {
  /// How much one `read` asks for.
  static let chunkSize = 65536

  let fd: Int32
  let limit: Int
  /// Bytes read and not yet compacted away; those already handed out are zero.
  private(set) var buffer: [UInt8] = []
  private var start = 0
  private var atEnd = false

  init(fd: Int32, limit: Int) {
    self.fd = fd
    self.limit = limit
  }

  /// The next line without its `\n` (or `\r\n`); `.tooLong` after discarding a line over the
  /// limit; `.endOfInput` when nothing is left.
  mutating func next() -> ConsoleLine {
    var discarding = false
    while true {
      if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
        let tooLong = discarding || newline - start > limit
        let line = tooLong ? [] : Array(buffer[start..<withoutCarriageReturn(newline)])
        wipe(start..<newline + 1)
        start = newline + 1
        compact()
        return tooLong ? .tooLong : .bytes(line)
      }
      if buffer.count - start > limit {
        discarding = true
        wipe(start..<buffer.count)
        buffer.removeAll(keepingCapacity: true)
        start = 0
      }
      if atEnd {
        let rest = buffer.count - start
        let line = discarding ? [] : Array(buffer[start..<withoutCarriageReturn(buffer.count)])
        wipe(start..<buffer.count)
        buffer.removeAll()
        start = 0
        if discarding { return .tooLong }
        if rest == 0 { return .endOfInput }
        return .bytes(line)
      }
      fill()
    }
  }

  /// `end`, or one less when the line before it ends in `\r`.
  private func withoutCarriageReturn(_ end: Int) -> Int {
    end > start && buffer[end - 1] == UInt8(ascii: "\r") ? end - 1 : end
  }

  /// Zeroes `range` of the buffer in a way the optimizer cannot remove.
  private mutating func wipe(_ range: Range<Int>) {
    buffer.withUnsafeMutableBytes { bytes in
      guard let base = bytes.baseAddress, !range.isEmpty else { return }
      accounts_secure_zero(base + range.lowerBound, range.count)
    }
  }

  /// Moves what is left to the front, zeroing the tail it came from (Array's `removeFirst`
  /// would leave a copy of it there, beyond `count`).
  private mutating func compact() {
    guard start > Self.chunkSize || start == buffer.count else { return }
    let rest = buffer.count - start
    buffer.withUnsafeMutableBytes { bytes in
      guard let base = bytes.baseAddress else { return }
      memmove(base, base + start, rest)
      accounts_secure_zero(base + rest, bytes.count - rest)
    }
    buffer.removeLast(buffer.count - rest)
    start = 0
  }

  private mutating func fill() {
    // At most a compaction's worth of handed-out lines, a line up to the limit and one read:
    // reserved once, so `append` never reallocates.
    if buffer.capacity == 0 { buffer.reserveCapacity(2 * Self.chunkSize + limit) }
    var chunk = [UInt8](repeating: 0, count: Self.chunkSize)
    while true {
      let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
      if count > 0 {
        buffer.append(contentsOf: chunk[0..<count])
        chunk.withUnsafeMutableBytes { accounts_secure_zero($0.baseAddress, count) }
        return
      }
      if count < 0 && errno == EINTR { continue }
      atEnd = true
      return
    }
  }
}
