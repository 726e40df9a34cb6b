import AccountsCore
import FoundationEssentials
import Glibc

/// Where `user export` writes: standard output, or a new private file.
final class ExportSink {
  private let fd: Int32
  private let path: String?
  private var buffer: [UInt8] = []
  private var failed: Int32 = 0
  private var closed = false

  init(path: String?) throws(AccountsError) {
    self.path = path
    guard let path else {
      fd = STDOUT_FILENO
      return
    }
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard fd >= 0 else {
      if errno == EEXIST { throw .exportFileExists(path) }
      throw .storage(.cannotOpen(location: path, reason: String(cString: strerror(errno))))
    }
  }

  func write(_ bytes: [UInt8]) {
    buffer.append(contentsOf: bytes)
    if buffer.count >= 65_536 { flush() }
  }

  private func flush() {
    guard path != nil else {
      // Standard output: a failure ends the program there (StandardStreams.outputFailed).
      buffer.withUnsafeBytes { StandardStreams.write(bytes: $0, to: fd) }
      buffer.removeAll(keepingCapacity: true)
      return
    }
    var offset = 0
    while offset < buffer.count && failed == 0 {
      let done = buffer.withUnsafeBytes { raw -> Int in
        guard let base = raw.baseAddress else { return -1 }
        return Glibc.write(fd, base + offset, raw.count - offset)
      }
      if done < 0 && errno == EINTR { continue }
      if done <= 0 {
        failed = errno == 0 ? EIO : errno
        break
      }
      offset += done
    }
    buffer.removeAll(keepingCapacity: true)
  }

  /// Writes what is left; a file is synced and closed.
  ///
  /// Throws when anything failed to write to a file (standard output ends the program instead).
  func finish() throws(AccountsError) {
    flush()
    if let path {
      if failed == 0 && fsync(fd) != 0 { failed = errno }
      close(fd)
      closed = true
      if failed != 0 {
        unlink(path)
        throw .storage(.cannotOpen(location: path, reason: String(cString: strerror(failed))))
      }
    }
  }

  /// After a failure: a half-written file is removed.
  func discard() {
    guard let path else { return }
    if !closed { close(fd) }
    closed = true
    unlink(path)
  }
}
