import AccountsCore
import CTerminal
import FoundationEssentials
import Glibc

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
