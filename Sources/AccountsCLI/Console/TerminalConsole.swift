import AccountsCore
import CTerminal
import Foundation

/// Writes whole lines to standard output and standard error, unbuffered.
///
/// Everything `accounts` prints passes here, and here every line is escaped
/// (`Escaping.visible`): text from the database, from input or from a path can never move the
/// cursor, set the window title or hide itself.
enum StandardStreams {
  /// One line on standard output; a newline inside it is shown escaped.
  static func output(_ line: String) { write(Escaping.visible(line) + "\n", to: STDOUT_FILENO) }
  /// One line on standard error; a newline inside it is shown escaped.
  static func error(_ line: String) { write(Escaping.visible(line) + "\n", to: STDERR_FILENO) }
  /// A prompt on standard error, escaped, with no line end.
  static func prompt(_ text: String) { write(Escaping.visible(text), to: STDERR_FILENO) }

  /// Writes all of `text` to `fd`, as it is.
  static func write(_ text: String, to fd: Int32) {
    Array(text.utf8).withUnsafeBytes { write(bytes: $0, to: fd) }
  }

  /// Standard input to its end; nil when it holds more than `limit` bytes (the rest is not
  /// read) or cannot be read.
  static func readAll(limit: Int) -> [UInt8]? {
    var bytes = [UInt8](repeating: 0, count: limit + 1)
    var count = 0
    while count <= limit {
      let got = bytes.withUnsafeMutableBytes { buffer -> Int in
        guard let base = buffer.baseAddress else { return -1 }
        return Glibc.read(STDIN_FILENO, base + count, buffer.count - count)
      }
      if got < 0 && errno == EINTR { continue }
      if got < 0 { return nil }
      if got == 0 { break }
      count += got
    }
    guard count <= limit else {
      bytes.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) }
      return nil
    }
    let result = Array(bytes[0..<count])
    bytes.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) }
    return result
  }

  /// Writes all of `bytes` to `fd`.
  ///
  /// Standard output carries results: when it refuses them the program ends at once (see
  /// `outputFailed`). Standard error is written as far as it goes: there is nowhere left to
  /// say that it failed.
  static func write(bytes: UnsafeRawBufferPointer, to fd: Int32) {
    var offset = 0
    while offset < bytes.count {
      let written = Glibc.write(fd, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
      if written < 0 && errno == EINTR { continue }
      if written <= 0 {
        let error = written < 0 ? errno : EIO
        if fd == STDOUT_FILENO { outputFailed(error) }
        return
      }
      offset += written
    }
  }

  /// Ends the program because standard output refused a result, as a signal would: whatever
  /// transaction is open is rolled back by the store, the terminal is put back.
  ///
  /// A reader that went away (`accounts log | head -1` with SIGPIPE ignored, so `EPIPE`) ends it
  /// quietly with 141, the status SIGPIPE itself gives; any other failure (a full disk, a
  /// closed descriptor) says so in one sentence on standard error and exits 3.
  static func outputFailed(_ error: Int32) -> Never {
    accounts_terminal_restore()
    if error == EPIPE { Glibc.exit(128 + SIGPIPE) }
    let reason = String(cString: strerror(error))
    write(Escaping.visible(Messages.standardOutputFailed(reason)) + "\n", to: STDERR_FILENO)
    Glibc.exit(ExitStatus.storage.rawValue)
  }
}

/// The live console: standard input, output and error, with echo off for secrets at a terminal.
final class TerminalConsole: Console {
  /// The longest line accepted, in bytes: more than any field allows (1,024 characters of
  /// up to 4 bytes each); longer lines are discarded as they are read, never kept whole.
  static let lineLimit = 8192

  let isInteractive = isatty(STDIN_FILENO) == 1
  private var reader = LineReader(fd: STDIN_FILENO, limit: TerminalConsole.lineLimit)

  func output(_ line: String) { StandardStreams.output(line) }

  func outputDrawing(_ line: String) { StandardStreams.write(line + "\n", to: STDOUT_FILENO) }

  private let progressShown = isatty(STDERR_FILENO) == 1

  func progress(_ line: String?) {
    guard progressShown else { return }
    // Back to the line's start and clear it: the next progress line replaces this one.
    StandardStreams.write("\r\u{1B}[K" + (line.map(Escaping.visible) ?? ""), to: STDERR_FILENO)
  }

  func message(_ line: String) { StandardStreams.error(line) }

  func readLine(prompt: String) -> ConsoleLine {
    guard isInteractive else { return reader.next() }
    StandardStreams.prompt(prompt)
    let line = reader.next()
    // Ctrl-D leaves the cursor after the prompt: what is said next starts a line of its own.
    if line == .endOfInput { StandardStreams.write("\n", to: STDERR_FILENO) }
    return line
  }

  func readSecret(prompt: String) -> ConsoleLine {
    guard isInteractive else { return reader.next() }
    let shown = Escaping.visible(prompt)
    let quiet = accounts_terminal_echo_off(STDIN_FILENO, shown) == 0
    StandardStreams.prompt(shown)
    let line = reader.next()
    if quiet { accounts_terminal_restore() }
    StandardStreams.write("\n", to: STDERR_FILENO)
    return line
  }
}

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

/// Standard output in 64 KiB blocks: a million lines cost a few hundred `write` calls, not a
/// million.
final class StandardOutputBuffer: BulkOutput {
  private static let blockSize = 65536
  private var buffer: [UInt8] = []

  init() { buffer.reserveCapacity(Self.blockSize + 4096) }

  func line(_ text: String) {
    buffer.append(contentsOf: Escaping.visible(text).utf8)
    buffer.append(UInt8(ascii: "\n"))
    if buffer.count >= Self.blockSize { flush() }
  }

  func escapedLine(_ body: (inout [UInt8]) -> Void) {
    body(&buffer)
    buffer.append(UInt8(ascii: "\n"))
    if buffer.count >= Self.blockSize { flush() }
  }

  func flush() {
    guard !buffer.isEmpty else { return }
    buffer.withUnsafeBytes { StandardStreams.write(bytes: $0, to: STDOUT_FILENO) }
    buffer.removeAll(keepingCapacity: true)
  }
}

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
