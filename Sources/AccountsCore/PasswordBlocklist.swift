import Foundation

/// The administrator's list of forbidden passwords: a text file, one password per line.
///
/// Named by the `ACCOUNTS_PASSWORD_BLOCKLIST` environment variable. Compared after NFKC, ignoring
/// case. Read line by line, so a large list (millions of lines) needs little memory. Only a
/// regular file is read: a device, a FIFO or a directory is refused before anything is read.
public struct PasswordBlocklist: Sendable {
  /// The file's path.
  public let path: String

  /// A blocklist read from `path`.
  public init(path: String) {
    self.path = path
  }

  /// Checks that the file can be opened and is a regular file, without reading it.
  ///
  /// Lets a flow refuse an unusable blocklist before it changes anything.
  public func checkReadable() throws(AccountsError) {
    let descriptor = try openRegularFile()
    close(descriptor)
  }

  /// True when `password` is a line of the file.
  public func contains(_ password: String) throws(AccountsError) -> Bool {
    let handle = FileHandle(fileDescriptor: try openRegularFile(), closeOnDealloc: true)
    defer { try? handle.close() }
    let wanted = PasswordRules.normalized(password).lowercased()
    var pending = Data()
    func matches(_ line: Data) -> Bool {
      var bytes = line
      if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
      guard let text = String(data: bytes, encoding: .utf8) else { return false }
      return PasswordRules.normalized(text).lowercased() == wanted
    }
    while true {
      let chunk: Data
      do {
        chunk = try handle.read(upToCount: 1 << 16) ?? Data()
      } catch {
        throw .blocklistUnreadable(path: path, reason: "reading it failed")
      }
      if chunk.isEmpty { break }
      pending.append(chunk)
      while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
        if matches(pending[pending.startIndex..<newline]) { return true }
        pending.removeSubrange(pending.startIndex...newline)
      }
    }
    return !pending.isEmpty && matches(pending)
  }

  /// Opens the file for reading and checks that it is a regular file.
  private func openRegularFile() throws(AccountsError) -> Int32 {
    // O_NONBLOCK: opening a FIFO with no writer must not wait for one (it is refused below).
    // O_NOCTTY: a terminal device must not become the controlling terminal.
    let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
    guard descriptor >= 0 else {
      throw .blocklistUnreadable(path: path, reason: "it cannot be opened")
    }
    var status = stat()
    guard fstat(descriptor, &status) == 0 else {
      close(descriptor)
      throw .blocklistUnreadable(path: path, reason: "it cannot be opened")
    }
    guard status.st_mode & S_IFMT == S_IFREG else {
      close(descriptor)
      throw .blocklistUnreadable(path: path, reason: "it is not a regular file")
    }
    return descriptor
  }
}
