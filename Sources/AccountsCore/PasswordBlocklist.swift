import Foundation

/// The administrator's list of forbidden passwords: a text file, one password per line.
///
/// Named by the `ACCOUNTS_PASSWORD_BLOCKLIST` environment variable. Compared after NFKC, ignoring
/// case. Read line by line, so a large list (millions of lines) needs little memory.
public struct PasswordBlocklist: Sendable {
  /// The file's path.
  public let path: String

  /// A blocklist read from `path`.
  public init(path: String) {
    self.path = path
  }

  /// True when `password` is a line of the file.
  public func contains(_ password: String) throws(AccountsError) -> Bool {
    guard let handle = FileHandle(forReadingAtPath: path) else {
      throw .blocklistUnreadable(path: path, reason: "it cannot be opened")
    }
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
}
