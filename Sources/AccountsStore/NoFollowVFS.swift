import AccountsCore
import CSQLite

#if canImport(Glibc)
import Glibc
#endif

/// SQLite's default file layer with `SQLITE_OPEN_NOFOLLOW`'s rule applied to every open.
///
/// Every connection the store opens goes through it, whatever its flags: the rule is applied
/// where SQLite applies `SQLITE_OPEN_NOFOLLOW`'s: when it resolves the path (`xFullPathname`),
/// a path that went through a symbolic link is refused with `SQLITE_CANTOPEN_SYMLINK`. SQLite then opens the resolved path with `O_NOFOLLOW`, so a link
/// swapped in afterwards fails too. The store hands SQLite paths whose folders are already
/// resolved, so only a link at the database itself (or one raced in) is refused.
enum NoFollowVFS {
  /// Registers the layer as SQLite's default, once; false if SQLite has no default to wrap.
  static let isInstalled: Bool = {
    guard let base = sqlite3_vfs_find(nil) else { return false }
    wrappedVFS = base
    let layer = UnsafeMutablePointer<sqlite3_vfs>.allocate(capacity: 1)
    layer.initialize(to: base.pointee)
    layer.pointee.zName = UnsafePointer(strdup("accounts-nofollow"))
    layer.pointee.pNext = nil
    layer.pointee.xFullPathname = { _, name, size, output in
      guard let base = wrappedVFS, let resolve = base.pointee.xFullPathname else {
        return SQLITE_ERROR
      }
      let code = resolve(base, name, size, output)
      return code == ResultCode.SQLITE_OK_SYMLINK.rawValue
        ? ResultCode.SQLITE_CANTOPEN_SYMLINK.rawValue : code
    }
    return sqlite3_vfs_register(layer, 1) == SQLITE_OK
  }()
}

/// The file layer `NoFollowVFS` wraps; written once, before SQLite can call the wrapper.
nonisolated(unsafe) private var wrappedVFS: UnsafeMutablePointer<sqlite3_vfs>?
