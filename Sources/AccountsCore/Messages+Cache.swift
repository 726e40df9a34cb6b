/// The sentences of this host's login cache (`store cache`).
extension Messages {
  /// `store cache` on a store that is no server's.
  public static func loginCacheNeedsServer(_ location: String) -> String {
    "A login cache keeps a PostgreSQL server's logins, and \(location) is a file of this host: "
      + "name a postgresql:// store with --database or ACCOUNTS_DATABASE."
  }
  /// `store cache` run by another user than root.
  public static let loginCacheNeedsRoot =
    "The login cache is root's (it must be owned by root): run this command as root."
  /// `store cache status` or `disable` where no cache is kept.
  public static func loginCacheNotEnabled(_ path: String) -> String {
    "This host keeps no login cache (\(path) does not exist); turn it on with "
      + "accounts store cache enable."
  }
  /// `--days` out of range.
  public static let loginCacheDaysRule =
    "--days needs a number of days from 1 to 365."
  /// `store cache enable` done.
  public static func loginCacheEnabled(_ path: String, days: Int) -> String {
    "This host now keeps a login cache at \(path): a person who logged in here within "
      + "\(days) \(days == 1 ? "day" : "days") can log in while the server is away."
  }
  /// `store cache disable` done.
  public static func loginCacheDisabled(_ path: String) -> String {
    "The login cache \(path) is removed: nobody can log in here while the server is away."
  }
  /// A login while the server cannot be reached, for a person this host's cache cannot log in.
  public static func serverAway(_ location: String) -> String {
    "The server of \(location) cannot be reached, and this host cannot log you in without it; "
      + "try again when it is back."
  }
}
