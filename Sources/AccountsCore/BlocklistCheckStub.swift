import Foundation

// TEMPORARY until the blocklist rewrite lands (helper branch wt-blocklist defines it).
extension PasswordBlocklist {
  /// Refuses a blocklist that cannot be opened.
  public func checkReadable() throws(AccountsError) {
    guard FileManager.default.isReadableFile(atPath: path) else {
      throw .blocklistUnreadable(path: path, reason: "it cannot be opened")
    }
  }
}
