import AccountsCore
import AccountsStore
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where the database lives when `--database` does not say.
enum DatabaseLocation {
  /// Root's store when nothing names one: where a system tool keeps its data, the place the PAM
  /// examples name.
  static let systemPath = "/var/lib/accounts/accounts.sqlite3"

  /// This host's login cache (`store cache`) when `ACCOUNTS_LOGIN_CACHE` does not name
  /// another: beside the system store, root's.
  static let loginCacheSystemPath = "/var/lib/accounts/login-cache.sqlite3"

  /// `$ACCOUNTS_LOGIN_CACHE` (made absolute), else `loginCacheSystemPath`.
  static func loginCachePath(variable: (String) -> String?) -> String {
    guard let path = variable("ACCOUNTS_LOGIN_CACHE"), !path.isEmpty else {
      return loginCacheSystemPath
    }
    return absolute(path)
  }

  /// The store a command uses, and what to say of root's store at its former default place.
  struct Choice: Equatable {
    /// The database path or URI.
    var path: String
    /// A note for standard error, or nil.
    var note: String?
  }

  /// `--database`, else `$ACCOUNTS_DATABASE`, else for root `systemPath`, else the XDG data
  /// folder.
  static func resolve(flag: String?, variable: (String) -> String?) throws(AccountsError)
    -> String
  {
    try choose(flag: flag, variable: variable).path
  }

  /// The path `resolve` gives, with a note for root.
  ///
  /// Root (the effective user) whose `systemPath` does not exist while its former default (the
  /// XDG path below) does keeps the former one, with a note saying how to move it; when both
  /// exist the system one is used, with a note that the former one is still there. Nothing is
  /// moved or created here.
  ///
  /// Always absolute, so SQLite never takes it for a `file:` URI. A `HOME` that is not absolute
  /// is not used: the home folder then comes from the user database.
  static func choose(
    flag: String?, variable: (String) -> String?, asRoot: Bool = geteuid() == 0,
    exists: (String) -> Bool = { path in
      var info = stat()
      return lstat(path, &info) == 0
    }
  ) throws(AccountsError) -> Choice {
    if let flag, !flag.isEmpty {
      // A path whose bytes are not UTF-8 arrives with U+FFFD in their place: it would name
      // another file than the one meant, so it is refused, shown as given.
      if let raw = RawInput.undecodableArgument(flag) {
        throw .invalidSetting(
          name: "A database path", value: Escaping.visible(bytes: raw), expected: "valid UTF-8")
      }
      return Choice(path: absolute(flag))
    }
    if let path = variable("ACCOUNTS_DATABASE"), !path.isEmpty {
      return Choice(path: absolute(path))
    }
    guard asRoot else { return Choice(path: try userPath(variable: variable)) }
    guard let former = try? userPath(variable: variable), former != systemPath, exists(former)
    else { return Choice(path: systemPath) }
    if exists(systemPath) {
      return Choice(
        path: systemPath, note: Messages.formerRootStoreLeft(former, system: systemPath))
    }
    return Choice(path: former, note: Messages.formerRootStoreInUse(former, system: systemPath))
  }

  /// `$XDG_DATA_HOME/accounts/accounts.sqlite3`, else `~/.local/share/accounts/accounts.sqlite3`.
  private static func userPath(variable: (String) -> String?) throws(AccountsError) -> String {
    if let data = variable("XDG_DATA_HOME"), data.hasPrefix("/") {
      return data.appendingPath("accounts/accounts.sqlite3")
    }
    guard
      let home = variable("HOME").flatMap({ $0.hasPrefix("/") ? $0 : nil }) ?? homeFromPasswd()
    else {
      throw .storage(
        .cannotOpen(
          location: "~/.local/share/accounts/accounts.sqlite3",
          reason: "HOME is not set; pass --database"))
    }
    return home.appendingPath(".local/share/accounts/accounts.sqlite3")
  }

  /// The key file sealing TOTP secrets: `given` (ACCOUNTS_KEY_FILE, `--key-file`), else
  /// `<database>.key` beside an SQLite file, else, for a PostgreSQL store (whose hosts each keep
  /// a copy), `$XDG_CONFIG_HOME/accounts/postgresql.key` or `~/.config/accounts/postgresql.key`.
  static func keyFile(database: String, given: String?, variable: (String) -> String?)
    throws(AccountsError) -> KeyFile
  {
    if let given, !given.isEmpty { return KeyFile(path: absolute(given)) }
    guard StoreLocation.isPostgres(database) else { return KeyFile(databasePath: database) }
    if let config = variable("XDG_CONFIG_HOME"), config.hasPrefix("/") {
      return KeyFile(path: config.appendingPath("accounts/postgresql.key"))
    }
    guard
      let home = variable("HOME").flatMap({ $0.hasPrefix("/") ? $0 : nil }) ?? homeFromPasswd()
    else {
      throw .invalidSetting(
        name: "ACCOUNTS_KEY_FILE", value: "", expected: "set (HOME is not set)")
    }
    return KeyFile(path: home.appendingPath(".config/accounts/postgresql.key"))
  }

  /// `path` made absolute; a PostgreSQL URI as it is.
  static func absolute(_ path: String) -> String {
    if path.hasPrefix("/") || StoreLocation.isPostgres(path) { return path }
    let expanded = path.hasPrefix("~") ? tildeExpanded(path) : path
    if expanded.hasPrefix("/") { return expanded }
    return FileManager.default.currentDirectoryPath.appendingPath(path)
  }

  /// `~` and `~/…` under the home folder (HOME, else the user database's), `~name/…` under that
  /// user's; as it is when there is none (as the shell leaves it).
  private static func tildeExpanded(_ path: String) -> String {
    let slash = path.firstIndex(of: "/") ?? path.endIndex
    let name = String(path[path.index(after: path.startIndex)..<slash])
    let home: String?
    if name.isEmpty {
      home =
        ProcessInfo.processInfo.environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
        ?? homeFromPasswd()
    } else {
      home = getpwnam(name).flatMap { $0.pointee.pw_dir }.map { String(cString: $0) }
    }
    guard let home else { return path }
    let rest = path[slash...].drop { $0 == "/" }
    return rest.isEmpty ? home : home.appendingPath(String(rest))
  }

  /// The running (effective) user's home folder from the user database, as libpq finds it for
  /// ~/.pgpass: under a set-user-ID caller such as `su` (whose `pam_exec` child keeps the real
  /// user of the person typing) it is root's, not that person's.
  static func homeFromPasswd() -> String? {
    guard let entry = getpwuid(geteuid()), let directory = entry.pointee.pw_dir else { return nil }
    return String(cString: directory)
  }
}
