import AccountsCore
import AccountsCrypto
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The live records folders: files written as root, mode 0644, each atomically (a temporary
/// file in the folder, fsync, rename; the folder fsynced after), under the folder's lock
/// (`flock`), every call relative to the folder's descriptor.
///
/// What a store wrote is listed in its manifest, `.accounts-STOREID.manifest` in the folder,
/// with the SHA-256 of each file's content (of a link: its target): a file is rewritten or
/// removed only when it is listed there, and removed only when its content is one the store
/// wrote. A name wanted but held by another file is left alone and reported.
public struct SystemUserRecordFolders: UserRecordFolders {
  /// Creates the live folders.
  public init() {}

  public func open(_ folder: String, storeID: String, create: Bool) throws(AccountsError)
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
    do throws(AccountsError) {
      try Session.checkOwner(descriptor, path: folder, what: "the folder")
      guard flock(descriptor, LOCK_EX) == 0 else {
        throw .userdbFolder(path: folder, reason: Self.reason(errno))
      }
      try session.loadManifest(created: created)
      if created {
        // Written down before anything goes in: a folder whose first records could not be
        // written (a full disk, a kill) is still known as made by accounts, for disable to
        // remove; one where even that cannot be written is removed again at once.
        do throws(AccountsError) {
          try session.saveManifest()
        } catch {
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
    return Session.readAll(file)
  }

  static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }

  /// One opened folder.
  final class Session: UserRecordFolderSession {
    let folder: String
    var descriptor: Int32
    let storeID: String
    /// Each listed file's accepted SHA-256 values (hex): the last written, and while a write is
    /// under way the one before.
    var manifest: [String: [String]] = [:]
    var createdFolder = false
    /// True when the manifest file exists.
    var manifestOnDisk = false

    init(folder: String, descriptor: Int32, storeID: String) {
      self.folder = folder
      self.descriptor = descriptor
      self.storeID = storeID
    }

    var manifestName: String { ".accounts-\(storeID).manifest" }
    var temporaryName: String { ".accounts-\(storeID).tmp" }

    func close() {
      if descriptor >= 0 { _ = Glibc.close(descriptor) }
      descriptor = -1
    }

    func manifestCount() -> Int { manifest.count }

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

    /// Reads the store's manifest (none: nothing written yet).
    func loadManifest(created: Bool) throws(AccountsError) {
      createdFolder = created
      guard let bytes = try read(manifestName) else { return }
      struct Stored: Decodable {
        var createdFolder: Bool
        var files: [String: [String]]
      }
      guard let stored = try? JSONDecoder().decode(Stored.self, from: Data(bytes)) else {
        throw .userdbFolder(path: folder + "/" + manifestName, reason: "its manifest is damaged")
      }
      manifest = stored.files
      // Another command may have found the folder this one made and written the manifest
      // first (the lock is taken once the folder exists): the folder is still accounts'.
      createdFolder = stored.createdFolder || created
      manifestOnDisk = true
    }

    func saveManifest() throws(AccountsError) {
      var bytes = Array("{\"createdFolder\":\(createdFolder),\"files\":{".utf8)
      for (index, name) in manifest.keys.sorted().enumerated() {
        if index > 0 { bytes.append(UInt8(ascii: ",")) }
        bytes += jsonString(name) + [UInt8(ascii: ":"), UInt8(ascii: "[")]
        bytes += manifest[name, default: []].map { jsonString($0) }.joined(separator: [
          UInt8(ascii: ",")
        ])
        bytes.append(UInt8(ascii: "]"))
      }
      bytes += Array("}}\n".utf8)
      try write(.record(manifestName, bytes))
      manifestOnDisk = true
    }

    private func jsonString(_ text: String) -> [UInt8] {
      guard let data = try? JSONEncoder().encode(text) else { return Array("\"\"".utf8) }
      return [UInt8](data)
    }

    /// The SHA-256 (hex) a file's manifest entry holds: of a record's bytes, of `->` and a
    /// link's target.
    func digest(of file: UserRecordFile) -> String {
      let bytes = file.content ?? Array(("->" + (file.linkTarget ?? "")).utf8)
      return Hex.encode((try? SHA256.hash(bytes)) ?? [])
    }

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

    /// A regular file's bytes; nil when there is none.
    func read(_ name: String) throws(AccountsError) -> [UInt8]? {
      let file = openat(descriptor, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
      guard file >= 0 else {
        if errno == ENOENT { return nil }
        throw .userdbFolder(
          path: folder + "/" + name, reason: SystemUserRecordFolders.reason(errno))
      }
      defer { Glibc.close(file) }
      return Self.readAll(file)
    }

    static func readAll(_ file: Int32) -> [UInt8] {
      var bytes: [UInt8] = []
      var buffer = [UInt8](repeating: 0, count: 65536)
      while bytes.count < 1 << 20 {
        let count = Glibc.read(file, &buffer, buffer.count)
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        bytes += buffer[..<count]
      }
      return bytes
    }

    /// Writes one file or link atomically (temporary name, fsync, rename).
    func write(_ file: UserRecordFile) throws(AccountsError) {
      let temporary = temporaryName
      _ = unlinkat(descriptor, temporary, 0)
      if let target = file.linkTarget {
        guard symlinkat(target, descriptor, temporary) == 0 else { throw failure(file.name) }
      } else {
        let handle = openat(
          descriptor, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard handle >= 0 else { throw failure(file.name) }
        var ok = fchmod(handle, 0o644) == 0
        let bytes = file.content ?? []
        var offset = 0
        while ok && offset < bytes.count {
          let count = bytes[offset...].withUnsafeBytes {
            Glibc.write(handle, $0.baseAddress, $0.count)
          }
          if count < 0 && errno == EINTR { continue }
          ok = count > 0
          offset += max(count, 0)
        }
        ok = ok && fsync(handle) == 0
        let code = errno
        Glibc.close(handle)
        guard ok else {
          _ = unlinkat(descriptor, temporary, 0)
          throw .userdbFolder(
            path: folder + "/" + file.name, reason: SystemUserRecordFolders.reason(code))
        }
      }
      guard renameat(descriptor, temporary, descriptor, file.name) == 0 else {
        let error = failure(file.name)
        _ = unlinkat(descriptor, temporary, 0)
        throw error
      }
    }

    private func failure(_ name: String) -> AccountsError {
      .userdbFolder(path: folder + "/" + name, reason: SystemUserRecordFolders.reason(errno))
    }

    func apply(_ files: [UserRecordFile], dryRun: Bool) throws(AccountsError) -> UserRecordChanges {
      var changes = UserRecordChanges()
      var wanted: [String: String] = [:]
      var toWrite: [UserRecordFile] = []
      for file in files {
        let want = digest(of: file)
        let onDisk = digestOnDisk(file.name)
        if manifest[file.name] == nil, onDisk != .some(nil) {
          changes.foreign.append(file.name)
          continue
        }
        wanted[file.name] = want
        if onDisk != .some(want) { toWrite.append(file) }
      }
      var toRemove: [String] = []
      for (name, accepted) in manifest where wanted[name] == nil {
        switch digestOnDisk(name) {
        case .some(nil): continue
        case .some(let found?) where accepted.contains(found): toRemove.append(name)
        default: changes.leftAlone.append(name)
        }
      }
      changes.written = toWrite.map(\.name).sorted()
      changes.removed = toRemove.sorted()
      changes.foreign.sort()
      changes.leftAlone.sort()
      guard !dryRun else { return changes }
      let settled = manifest == wanted.mapValues { [$0] }
      if toWrite.isEmpty && toRemove.isEmpty && settled && manifestOnDisk { return changes }
      // Listed first (the old digest kept beside the new), so that a kill part-way leaves
      // every file it wrote listed as the store's.
      var listed = manifest
      for (name, want) in wanted where !(listed[name]?.contains(want) ?? false) {
        listed[name] = (listed[name]?.suffix(1) ?? []) + [want]
      }
      manifest = listed
      try saveManifest()
      for file in toWrite { try write(file) }
      for name in toRemove {
        guard unlinkat(descriptor, name, 0) == 0 || errno == ENOENT else { throw failure(name) }
      }
      manifest = wanted.mapValues { [$0] }
      try saveManifest()
      guard fsync(descriptor) == 0 else { throw failure(".") }
      return changes
    }

    func removeAll() throws(AccountsError) -> UserRecordRemoval {
      var removal = UserRecordRemoval()
      for (name, accepted) in manifest {
        guard case .some(let found?) = digestOnDisk(name), accepted.contains(found) else {
          continue
        }
        guard try remove(name) else { continue }
        removal.files += 1
      }
      if unlinkat(descriptor, temporaryName, 0) == 0 { removal.files += 1 }
      if try remove(manifestName) { removal.files += 1 }
      _ = fsync(descriptor)
      manifest = [:]
      manifestOnDisk = false
      if createdFolder {
        // Only when empty: another store's records, or anyone's files, keep it.
        removal.folderRemoved = rmdir(folder) == 0
      }
      return removal
    }

    /// Unlinks `name`; false when it was already gone.
    private func remove(_ name: String) throws(AccountsError) -> Bool {
      guard unlinkat(descriptor, name, 0) == 0 else {
        guard errno == ENOENT else { throw failure(name) }
        return false
      }
      return true
    }
  }
}
