import AccountsCore
import AccountsCrypto
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The live records folders: files written as root, mode 0644, each whole or absent (written
/// under a temporary name, flushed, then renamed; the folder flushed after), under the folder's
/// lock (`flock`), every call relative to the folder's descriptor.
///
/// What a store wrote is listed in its manifest, the folder `.accounts-STOREID.manifest.d` in
/// the records folder (`UserRecordManifest`), with the SHA-256 of each file's content (of a
/// link: its target): a file is rewritten or removed only when it is listed there, and removed
/// only when its content is one the store wrote. A name wanted but held by another file is left
/// alone and reported.
public struct SystemUserRecordFolders: UserRecordFolders {
  /// Called after each batch of files is renamed into place (a test's hook: the program stops
  /// there, to be killed part-way through a large write).
  let afterBatch: (() -> Void)?

  /// Creates the live folders.
  public init(afterBatch: (() -> Void)? = nil) {
    self.afterBatch = afterBatch
  }

  public func open(_ folder: String, storeID: String, create: Bool, repair: Bool)
    throws(AccountsError)
    -> (any UserRecordFolderSession)?
  {
    guard geteuid() == 0 else { throw .userdbNeedsRoot }
    var created = false
    var descriptor = Glibc.open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    if descriptor < 0 && errno == ENOENT {
      guard create else { return nil }
      created = mkdir(folder, 0o755) == 0
      guard created || errno == EEXIST else {
        throw .userdbFolder(path: folder, reason: Self.reason(errno))
      }
      descriptor = Glibc.open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
      if descriptor >= 0 && created { _ = fchmod(descriptor, 0o755) }
    }
    guard descriptor >= 0 else {
      throw .userdbFolder(
        path: folder,
        reason: errno == ENOTDIR || errno == ELOOP
          ? "it is not a folder (or is a symbolic link)" : Self.reason(errno))
    }
    let session = Session(folder: folder, descriptor: descriptor, storeID: storeID)
    session.afterBatch = afterBatch
    do throws(AccountsError) {
      try Session.checkOwner(descriptor, path: folder, what: "the folder")
      guard flock(descriptor, LOCK_EX) == 0 else {
        throw .userdbFolder(path: folder, reason: Self.reason(errno))
      }
      try session.loadManifest(created: created, repair: repair)
      if created {
        // Written down before anything goes in: a folder whose first records could not be
        // written (a full disk, a kill) is still known as made by accounts, for disable to
        // remove; one where even that cannot be written is removed again at once.
        do throws(AccountsError) {
          try session.saveHead()
        } catch {
          for name in session.manifestFolderEntries() {
            _ = unlinkat(session.manifestDescriptor, name, 0)
          }
          _ = unlinkat(descriptor, session.manifestFolderName, AT_REMOVEDIR)
          _ = rmdir(folder)
          throw error
        }
      }
    } catch {
      session.close()
      throw error
    }
    return session
  }

  /// Reads the record `name` of `folder` for `userdb ssh-authorized-keys`; nil when there is none.
  ///
  /// Refuses a folder or record that is not root's, or that group or others may write.
  public static func readRecord(folder: String, name: String) throws(AccountsError) -> [UInt8]? {
    let descriptor = Glibc.open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard descriptor >= 0 else {
      if errno == ENOENT { return nil }
      throw .userdbFolder(path: folder, reason: reason(errno))
    }
    defer { close(descriptor) }
    try Session.checkOwner(descriptor, path: folder, what: "the folder")
    let file = openat(descriptor, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
    guard file >= 0 else {
      if errno == ENOENT { return nil }
      throw .userdbFolder(path: folder, reason: reason(errno))
    }
    defer { close(file) }
    try Session.checkOwner(file, path: folder + "/" + name, what: "the record", regular: true)
    return Session.readAll(file, limit: 1 << 20)
  }

  static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }

  /// One opened folder.
  final class Session: UserRecordFolderSession {
    let folder: String
    var descriptor: Int32
    let storeID: String
    /// The manifest folder's descriptor; -1 until it is opened or made.
    var manifestDescriptor: Int32 = -1
    /// The listed files of the shards read so far, by name.
    var entries: [String: ManifestEntry] = [:]
    /// The shards read so far (all of them for a manifest of an earlier release).
    var loadedShards: Set<Int> = []
    /// Each shard file's SHA-256 (hex), as the head lists them: a shard not listed is empty.
    var shardDigests: [String: String] = [:]
    var createdFolder = false
    /// True when the manifest's head exists.
    var manifestOnDisk = false
    /// True when the manifest is the single file of an earlier release (converted at the next
    /// write).
    var legacy = false
    /// True when a damaged manifest was dropped: a file that holds what the store would write
    /// is listed again as the store's.
    var repairing = false
    /// True when a damaged manifest may be dropped (a whole comparison follows).
    var mayRepair = false
    var generation: Int64?
    var recordCounts = (users: 0, groups: 0)
    var progress: ((_ done: Int, _ total: Int) -> Void)?
    var afterBatch: (() -> Void)?

    init(folder: String, descriptor: Int32, storeID: String) {
      self.folder = folder
      self.descriptor = descriptor
      self.storeID = storeID
    }

    /// The manifest folder, in the records folder.
    var manifestFolderName: String { ".accounts-\(storeID).manifest.d" }
    /// The single-file manifest of earlier releases.
    var legacyManifestName: String { ".accounts-\(storeID).manifest" }
    /// The temporary file of earlier releases.
    var legacyTemporaryName: String { ".accounts-\(storeID).tmp" }

    func close() {
      if manifestDescriptor >= 0 { _ = Glibc.close(manifestDescriptor) }
      manifestDescriptor = -1
      if descriptor >= 0 { _ = Glibc.close(descriptor) }
      descriptor = -1
    }

    func manifestCount() -> Int { entries.count }

    /// Refuses what root does not own or what group or others may write.
    static func checkOwner(_ file: Int32, path: String, what: String, regular: Bool = false)
      throws(AccountsError)
    {
      var status = stat()
      guard fstat(file, &status) == 0 else {
        throw .userdbFolder(path: path, reason: SystemUserRecordFolders.reason(errno))
      }
      if regular && status.st_mode & S_IFMT != S_IFREG {
        throw .userdbFolder(path: path, reason: "\(what) is not a regular file")
      }
      guard status.st_uid == 0 else {
        throw .userdbFolder(
          path: path, reason: "\(what) is owned by uid \(status.st_uid), not root")
      }
      guard status.st_mode & 0o022 == 0 else {
        throw .userdbFolder(
          path: path,
          reason:
            "group or others may write \(what) (mode \(String(status.st_mode & 0o7777, radix: 8)))")
      }
    }

    /// The SHA-256 (hex) a file's manifest entry holds: of a record's bytes, of `->` and a
    /// link's target.
    func digest(of file: UserRecordFile) -> String {
      digest(file.content ?? Array(("->" + (file.linkTarget ?? "")).utf8))
    }

    func digest(_ bytes: [UInt8]) -> String { Hex.encode((try? SHA256.hash(bytes)) ?? []) }

    /// The digest of what is on disk under `name` (its content, or `->` and its target); nil
    /// when nothing is.
    func digestOnDisk(_ name: String) -> String?? {
      var status = stat()
      guard fstatat(descriptor, name, &status, AT_SYMLINK_NOFOLLOW) == 0 else { return .some(nil) }
      if status.st_mode & S_IFMT == S_IFLNK {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlinkat(descriptor, name, &buffer, buffer.count)
        guard count >= 0 else { return nil }
        let target = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return .some(digest(of: .link(name, to: target)))
      }
      guard status.st_mode & S_IFMT == S_IFREG, let bytes = try? read(name) else {
        return .some("other")
      }
      return .some(digest(of: .record(name, bytes)))
    }

    /// A regular file's bytes (of `directory`, the records folder by default); nil when there
    /// is none.
    func read(_ name: String, in directory: Int32? = nil, limit: Int = 1 << 20)
      throws(AccountsError) -> [UInt8]?
    {
      let file = openat(
        directory ?? descriptor, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
      guard file >= 0 else {
        if errno == ENOENT { return nil }
        throw .userdbFolder(
          path: folder + "/" + name, reason: SystemUserRecordFolders.reason(errno))
      }
      defer { Glibc.close(file) }
      return Self.readAll(file, limit: limit)
    }

    /// Up to `limit` bytes of an open file.
    static func readAll(_ file: Int32, limit: Int) -> [UInt8] {
      var bytes: [UInt8] = []
      var buffer = [UInt8](repeating: 0, count: 65536)
      while bytes.count < limit {
        let count = Glibc.read(file, &buffer, buffer.count)
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        bytes += buffer[..<count]
      }
      return bytes
    }

    func failure(_ name: String) -> AccountsError {
      .userdbFolder(path: folder + "/" + name, reason: SystemUserRecordFolders.reason(errno))
    }

    /// The records folder's last change of its entries (`st_mtim`): a file added, removed or
    /// renamed in it by anyone changes it.
    func folderTime() -> String {
      var status = stat()
      guard fstat(descriptor, &status) == 0 else { return "" }
      return "\(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec)"
    }
  }
}

/// One file a manifest lists: whose it is, and the SHA-256 values (hex) accepted as the
/// store's (the last written, and while a write is under way the one before).
struct ManifestEntry: Equatable {
  var owner: String
  var digests: [String]
}
