import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The few file operations the store needs, with private permissions.
enum FileSystem {
  enum Kind { case regular, directory, other }

  /// What is at `path` (following links), or nil when nothing is.
  static func kind(of path: String) -> Kind? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    switch info.st_mode & S_IFMT {
    case S_IFREG: return .regular
    case S_IFDIR: return .directory
    default: return .other
    }
  }

  /// The folder that holds `path`.
  static func folder(of path: String) -> String {
    let folder = (path as NSString).deletingLastPathComponent
    return folder.isEmpty ? "." : folder
  }

  /// True when the file system holding `folder` has less than 64 KiB left for this user.
  static func isNearlyFull(_ folder: String) -> Bool {
    var info = statvfs()
    guard statvfs(folder, &info) == 0 else { return false }
    return UInt64(info.f_bavail) * UInt64(info.f_frsize) < 64 * 1024
  }

  /// True when this process may write `path` (false on a read-only file system too).
  static func isWritable(_ path: String) -> Bool {
    access(path, W_OK) == 0
  }

  /// An SQLite URI that opens `path` read-only as immutable: no locks, no -wal or -shm files.
  ///
  /// `path` is absolute, so plain paths never start with `file:` and are never taken as URIs.
  static func immutableURI(for path: String) -> String {
    var encoded = ""
    for byte in path.utf8 {
      switch byte {
      case UInt8(ascii: "%"), UInt8(ascii: "?"), UInt8(ascii: "#"), 0..<0x20, 0x7F...:
        encoded += String(format: "%%%02X", byte)
      default:
        encoded.unicodeScalars.append(Unicode.Scalar(byte))
      }
    }
    return "file:\(encoded)?mode=ro&immutable=1"
  }

  /// Creates the folder that holds `path`, and any missing parents, mode 0700.
  static func createPrivateFolder(for path: String) throws(StoreError) {
    let folder = Self.folder(of: path)
    var missing: [String] = []
    var current = folder
    while !current.isEmpty, current != "/", kind(of: current) == nil {
      missing.append(current)
      current = (current as NSString).deletingLastPathComponent
    }
    if !current.isEmpty, let existing = kind(of: current), existing != .directory {
      throw .cannotCreateFolder(path: folder, reason: "\(current) is not a folder")
    }
    for directory in missing.reversed() {
      if mkdir(directory, 0o700) != 0 && errno != EEXIST {
        throw .cannotCreateFolder(path: folder, reason: String(cString: strerror(errno)))
      }
    }
    if kind(of: folder) != .directory {
      throw .cannotCreateFolder(path: folder, reason: "it is not a folder")
    }
  }

  /// Creates an empty file at `path`, mode 0600, unless something is there already.
  static func createPrivateFile(at path: String) throws(StoreError) {
    let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
    if fd >= 0 {
      close(fd)
      return
    }
    let error = errno
    if error == EEXIST { return }
    if error == EACCES || error == EROFS || error == EPERM { throw .readOnly(path: path) }
    throw .cannotOpen(path: path, reason: String(cString: strerror(error)))
  }

  /// Runs `body` holding an exclusive advisory `flock` on `path`.
  ///
  /// SQLite's own locks are POSIX record locks, which `flock` does not interfere with on Linux.
  static func withExclusiveLock<T>(on path: String, _ body: () throws -> T) throws -> T {
    let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return try body() }
    defer { close(fd) }
    while flock(fd, LOCK_EX) != 0 && errno == EINTR {}
    defer { flock(fd, LOCK_UN) }
    return try body()
  }
}
