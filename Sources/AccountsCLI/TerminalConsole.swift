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
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
      let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
      if written < 0 {
        if errno == EINTR { continue }
        return
      }
      bytes = bytes.dropFirst(written)
    }
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
struct LineReader {
  let fd: Int32
  let limit: Int
  private var buffer: [UInt8] = []
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
        let line = Array(buffer[start..<newline])
        start = newline + 1
        compact()
        if discarding || line.count > limit { return .tooLong }
        return .bytes(line.last == UInt8(ascii: "\r") ? Array(line.dropLast()) : line)
      }
      if buffer.count - start > limit {
        discarding = true
        buffer.removeAll(keepingCapacity: true)
        start = 0
      }
      if atEnd {
        let rest = Array(buffer[start...])
        buffer.removeAll()
        start = 0
        if discarding { return .tooLong }
        if rest.isEmpty { return .endOfInput }
        return .bytes(rest.last == UInt8(ascii: "\r") ? Array(rest.dropLast()) : rest)
      }
      fill()
    }
  }

  private mutating func compact() {
    if start > 65536 || start == buffer.count {
      buffer.removeFirst(start)
      start = 0
    }
  }

  private mutating func fill() {
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
      let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
      if count > 0 {
        buffer.append(contentsOf: chunk[0..<count])
        return
      }
      if count < 0 && errno == EINTR { continue }
      atEnd = true
      return
    }
  }
}
