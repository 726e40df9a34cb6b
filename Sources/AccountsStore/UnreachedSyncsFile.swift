import AccountsCore
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// This host's syncs that could not reach the server: `unreached-syncs` beside the login cache
/// (`/var/lib/accounts`, or the folder of `ACCOUNTS_LOGIN_CACHE`), root's, mode 0600, in a
/// private folder; a few lines of text, nothing secret.
///
/// Each change is one write of the whole file (a temporary file, synced, renamed into place),
/// made while the folder's `flock` is held: a crash leaves the old text or the new, and two
/// syncs at once count both.
public final class UnreachedSyncsFile: UnreachedSyncsKeeper {
  /// The file.
  public let location: String

  /// The file named `name` in the folder of `loginCache` (the login cache's path, absolute).
  public init(besideLoginCache loginCache: String) {
    location = FileSystem.folder(of: loginCache).appendingPath(Self.name)
  }

  /// The file's name.
  public static let name = "unreached-syncs"

  public func load() throws(AccountsError) -> UnreachedSyncs? {
    guard FileSystem.info(FileSystem.folder(of: location)) != nil else { return nil }
    return try read()
  }

  public func update(_ change: (UnreachedSyncs?) -> UnreachedSyncs?) throws(AccountsError) {
    let folder = FileSystem.folder(of: location)
    do {
      try FileSystem.createPrivateFolder(for: location)
    } catch {
      throw .clientFile(
        .unusable(.unreachedSyncsFile, path: location, reason: Messages.storage(error)))
    }
    let folderFD = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
    guard folderFD >= 0 else {
      throw .clientFile(
        .unusable(.unreachedSyncsFile, path: location, reason: String(cString: strerror(errno))))
    }
    defer { close(folderFD) }
    while flock(folderFD, LOCK_EX) != 0 && errno == EINTR {}
    defer { flock(folderFD, LOCK_UN) }
    try checkFolder()
    // A damaged file is replaced: it only counts, and the count starts again.
    let kept = try? read()
    guard let changed = change(kept) else {
      guard unlink(location) == 0 || errno == ENOENT else {
        throw .clientFile(
          .unusable(
            .unreachedSyncsFile, path: location, reason: String(cString: strerror(errno))))
      }
      return
    }
    guard changed != kept else { return }
    try PrivateFile.write(
      Array(changed.text.utf8), to: location, kind: .unreachedSyncsFile, placing: .replacing)
  }

  private func read() throws(AccountsError) -> UnreachedSyncs? {
    guard let bytes = try PrivateFile.read(location, kind: .unreachedSyncsFile) else {
      return nil
    }
    guard let text = String(validating: bytes, as: UTF8.self),
      let syncs = UnreachedSyncs(text: text)
    else { throw .clientFile(.damaged(.unreachedSyncsFile, path: location)) }
    return syncs
  }

  /// Refuses a folder another user could replace the file in.
  private func checkFolder() throws(AccountsError) {
    guard let real = FileSystem.canonical(FileSystem.folder(of: location)) else {
      throw .clientFile(
        .unusable(.unreachedSyncsFile, path: location, reason: "its folder is missing"))
    }
    do {
      try FileSafety.checkFolders(of: real, database: location)
    } catch {
      throw .clientFile(.folderNotPrivate(.unreachedSyncsFile, path: location))
    }
  }
}
