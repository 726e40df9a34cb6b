import AccountsCore
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The few file operations the store needs, with private permissions.
enum FileSystem {
  enum Kind { case regular, directory, symlink, other }

  /// What `lstat` says of a path: its kind, owner, permission bits and size.
  struct Info {
    var kind: Kind
    var owner: uid_t
    var mode: mode_t
    var size: Int64
  }

  /// What is at `path` without following a final link; nil (with `errno` set) when nothing is.
  static func info(_ path: String) -> Info? {
    var status = stat()
    guard lstat(path, &status) == 0 else { return nil }
    let kind: Kind
    switch status.st_mode & S_IFMT {
    case S_IFREG: kind = .regular
    case S_IFDIR: kind = .directory
    case S_IFLNK: kind = .symlink
    default: kind = .other
    }
    return Info(
      kind: kind, owner: status.st_uid, mode: status.st_mode & 0o7777,
      size: Int64(status.st_size))
  }

  /// What is at `path` (following links), or nil when nothing is.
  static func kind(of path: String) -> Kind? {
    var status = stat()
    guard stat(path, &status) == 0 else { return nil }
    switch status.st_mode & S_IFMT {
    case S_IFREG: return .regular
    case S_IFDIR: return .directory
    default: return .other
    }
  }

  /// The folder that holds `path` (as `dirname` says: trailing slashes ignored, "." for a bare
  /// name, "/" for a name at the root).
  ///
  /// Written on the path's bytes: Foundation's `NSString` path methods cost more than the rest
  /// of `accounts status` spends in this module.
  static func folder(of path: String) -> String {
    let bytes = Array(trimmingTrailingSlashes(path).utf8)
    guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return "." }
    var end = slash
    while end > 0 && bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
    return end == 0 ? "/" : String(decoding: bytes[..<end], as: UTF8.self)
  }

  /// The last component of `path` (as `basename` says, trailing slashes ignored).
  static func name(of path: String) -> String {
    let trimmed = trimmingTrailingSlashes(path)
    if trimmed == "/" { return trimmed }
    guard let slash = trimmed.utf8.lastIndex(of: UInt8(ascii: "/")) else { return trimmed }
    return String(trimmed[trimmed.utf8.index(after: slash)...])
  }

  private static func trimmingTrailingSlashes(_ path: String) -> String {
    var trimmed = Substring(path)
    while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
    return String(trimmed)
  }

  /// `path` with its folder resolved to the real one (links to folders followed), so that only
  /// the last component can still be a link; nil when the folder does not exist.
  static func canonical(_ path: String) -> String? {
    guard let resolved = realpath(folder(of: path), nil) else { return nil }
    defer { free(resolved) }
    let folder = String(cString: resolved)
    return folder == "/" ? "/" + name(of: path) : folder + "/" + name(of: path)
  }

  /// The first of `path`'s ancestors that exists and is not a folder (why `path` cannot exist).
  static func blockingAncestor(of path: String) -> String? {
    var ancestors: [String] = []
    var current = folder(of: path)
    while current != "/" && current != "." && !current.isEmpty {
      ancestors.append(current)
      current = Self.folder(of: current)
    }
    for ancestor in ancestors.reversed() {
      guard let kind = kind(of: ancestor) else { return nil }
      if kind != .directory { return ancestor }
    }
    return nil
  }

  /// True when the file system holding `folder` has less than 64 KiB left for this user.
  static func isNearlyFull(_ folder: String) -> Bool {
    var info = statvfs()
    guard statvfs(folder, &info) == 0 else { return false }
    return UInt64(info.f_bavail) * UInt64(info.f_frsize) < 64 * 1024
  }

  /// True when this process may write `path` (false on a read-only file system too).
  ///
  /// Judged by the effective user, who opens the file: under a set-user-ID program (`su` and
  /// `passwd` run pam_accounts.so's helper as root for another real user) `access` would ask
  /// about the real one.
  static func isWritable(_ path: String) -> Bool {
    faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) == 0
  }

  /// An SQLite URI that opens `path` read-only as immutable: no locks, no -wal or -shm files.
  ///
  /// `path` is absolute, so plain paths never start with `file:` and are never taken as URIs.
  static func immutableURI(for path: String) -> String {
    var encoded = ""
    for byte in path.utf8 {
      switch byte {
      case UInt8(ascii: "%"), UInt8(ascii: "?"), UInt8(ascii: "#"), 0..<0x20, 0x7F...:
        encoded += (byte < 0x10 ? "%0" : "%") + String(byte, radix: 16, uppercase: true)
      default:
        encoded.unicodeScalars.append(Unicode.Scalar(byte))
      }
    }
    return "file:\(encoded)?mode=ro&immutable=1"
  }

  /// Creates the folder that holds `path`, and any missing parents, mode 0700; returns the
  /// folders it created, outermost first.
  @discardableResult
  static func createPrivateFolder(for path: String) throws(StoreError) -> [String] {
    let folder = Self.folder(of: path)
    var missing: [String] = []
    var current = folder
    while !current.isEmpty, current != "/", kind(of: current) == nil {
      missing.append(current)
      current = Self.folder(of: current)
    }
    if !current.isEmpty, let existing = kind(of: current), existing != .directory {
      throw .cannotCreateFolder(location: folder, reason: "\(current) is not a folder")
    }
    var created: [String] = []
    for directory in missing.reversed() {
      if mkdir(directory, 0o700) == 0 {
        created.append(directory)
      } else if errno != EEXIST {
        throw .cannotCreateFolder(location: folder, reason: String(cString: strerror(errno)))
      }
    }
    if kind(of: folder) != .directory {
      throw .cannotCreateFolder(location: folder, reason: "it is not a folder")
    }
    return created
  }

  /// Creates an empty file at `path`, mode 0600, unless something is there already; true when
  /// this call created it.
  static func createPrivateFile(at path: String) throws(StoreError) -> Bool {
    let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
    if fd >= 0 {
      close(fd)
      return true
    }
    let error = errno
    if error == EEXIST { return false }
    if error == EACCES || error == EROFS || error == EPERM { throw .readOnly(location: path) }
    throw .cannotOpen(location: path, reason: String(cString: strerror(error)))
  }

  /// Makes an existing file of ours private (mode 0600), without following a link.
  static func makePrivate(_ path: String) -> Bool {
    let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return fchmod(fd, 0o600) == 0
  }

  /// The name of the user with id `uid`, or the number when it has none.
  static func userName(_ uid: uid_t) -> String {
    guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "\(uid)" }
    return String(cString: name)
  }

  /// Runs `body` holding an exclusive advisory `flock` on `path`.
  ///
  /// SQLite's own locks are POSIX record locks, which `flock` does not interfere with on Linux.
  static func withExclusiveLock<T>(on path: String, _ body: () throws -> T) throws -> T {
    let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
    guard fd >= 0 else { return try body() }
    defer { close(fd) }
    while flock(fd, LOCK_EX) != 0 && errno == EINTR {}
    defer { flock(fd, LOCK_UN) }
    return try body()
  }
}

/// The checks OpenSSH makes of a private key, made of the database, its companions and the
/// folders that hold them: ours, private, and in folders nobody else can replace them in.
enum FileSafety {
  /// The files SQLite keeps beside the database.
  static let companionSuffixes = ["-wal", "-shm", "-journal"]

  /// Refuses `folder` (canonical) or any folder above it that another user owns (root aside)
  /// or that others may write without the sticky bit: they could replace the database.
  static func checkFolders(of folder: String, database path: String) throws(StoreError) {
    let me = geteuid()
    var current = folder
    while true {
      guard let info = FileSystem.info(current) else {
        throw .cannotOpen(location: path, reason: "its folder \(current) cannot be examined")
      }
      if info.owner != me && info.owner != 0 {
        throw .unsafeFolder(
          location: path, folder: current,
          reason: .ownedBy(FileSystem.userName(info.owner)))
      }
      if info.mode & 0o022 != 0 && info.mode & S_ISVTX == 0 {
        throw .unsafeFolder(location: path, folder: current, reason: .writableByOthers(info.mode))
      }
      if current == "/" { return }
      current = FileSystem.folder(of: current)
    }
  }

  /// Refuses `file` (the database or a companion of `path`) when it is a link, not ours, or
  /// readable or writable by others; an empty file of ours is made private when `mayFix`.
  static func checkFile(_ file: String, isDatabase: Bool, reportedAs path: String, mayFix: Bool)
    throws(StoreError)
  {
    guard let info = FileSystem.info(file) else { return }
    if info.kind == .symlink { throw .symlink(location: path, file: file) }
    if info.kind == .directory && isDatabase { throw .isDirectory(location: path) }
    if info.kind != .regular {
      throw .cannotOpen(location: path, reason: "\(file) is not a regular file")
    }
    if info.owner != geteuid() {
      throw .notOurs(
        location: path, file: file, owner: FileSystem.userName(info.owner),
        me: FileSystem.userName(geteuid()))
    }
    guard info.mode & 0o077 != 0 else { return }
    // An empty file holds nothing to protect yet (e.g. made by `touch` under umask 022).
    if info.size == 0 && (!mayFix || FileSystem.makePrivate(file)) { return }
    throw .notPrivate(location: path, file: file, mode: info.mode)
  }

  /// Checks the database file `real` and every companion that exists; errors name `path`.
  static func checkFiles(database real: String, reportedAs path: String, mayFix: Bool)
    throws(StoreError)
  {
    try checkFile(real, isDatabase: true, reportedAs: path, mayFix: mayFix)
    for suffix in companionSuffixes {
      try checkFile(real + suffix, isDatabase: false, reportedAs: path, mayFix: mayFix)
    }
  }
}
