import AccountsCore
import CFolderSync
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Bringing a folder up to date, and removing a store's files.
extension SystemUserRecordFolders.Session {
  /// Files written between two flushes: each batch is written under temporary names, flushed
  /// by one `syncfs`, and only then renamed to its names, so that a crash leaves every file
  /// whole or absent (a name never points at data not yet on disk).
  static let batchSize = 4096
  /// Up to this many files, each is flushed by its own `fsync` (a `syncfs` would flush the
  /// whole filesystem's pending writes, other programs' too).
  static let fsyncEachUpTo = 8

  /// A user record (`NAME.user`, not the link `UID.user`: names start with a letter or `_`).
  static func isUserRecord(_ name: String) -> Bool {
    name.hasSuffix(".user") && !(name.first?.isNumber ?? true)
  }
  /// A group record (`NAME.group`, not the link `GID.group`).
  static func isGroupRecord(_ name: String) -> Bool {
    name.hasSuffix(".group") && !(name.first?.isNumber ?? true)
  }

  func apply(
    _ files: [UserRecordFile], owners: Set<String>?, generation: Int64, dryRun: Bool
  ) throws(AccountsError) -> UserRecordChanges {
    if let owners {
      try loadShards(Set(owners.map(Self.shard(of:))))
    } else {
      try loadShards(Set(0..<Self.shardCount))
    }
    func inScope(_ entry: ManifestEntry) -> Bool {
      owners?.contains(entry.owner) ?? true
    }
    var changes = UserRecordChanges()
    var wanted: [String: ManifestEntry] = [:]
    var toWrite: [UserRecordFile] = []
    for file in files {
      let want = digest(of: file)
      let onDisk = digestOnDisk(file.name)
      if entries[file.name] == nil, onDisk != .some(nil), !(repairing && onDisk == .some(want)) {
        changes.foreign.append(file.name)
        continue
      }
      wanted[file.name] = ManifestEntry(owner: file.owner, digests: [want])
      if onDisk != .some(want) { toWrite.append(file) }
    }
    var toRemove: [String] = []
    var gone: [String] = []
    for (name, entry) in entries where wanted[name] == nil && inScope(entry) {
      switch digestOnDisk(name) {
      case .some(nil): gone.append(name)
      case .some(let found?) where entry.digests.contains(found): toRemove.append(name)
      default:
        gone.append(name)
        changes.leftAlone.append(name)
      }
    }
    changes.written = toWrite.map(\.name).sorted()
    changes.removed = toRemove.sorted()
    changes.foreign.sort()
    changes.leftAlone.sort()
    guard !dryRun else { return changes }
    let before = entries.filter { inScope($0.value) }
    let counts = count(wanted.keys)
    let beforeCounts = count(before.keys)
    let newCounts =
      owners == nil
      ? counts
      : (
        recordCounts.users - beforeCounts.users + counts.users,
        recordCounts.groups - beforeCounts.groups + counts.groups
      )
    if toWrite.isEmpty && toRemove.isEmpty && before == wanted && manifestOnDisk && !legacy {
      if self.generation != generation || newCounts != recordCounts {
        self.generation = generation
        recordCounts = newCounts
        try saveHead(folderTime: folderTime())
      }
      return changes
    }
    try clearTemporaryFiles()
    // Listed first (the old digest kept beside the new), so that a kill part-way leaves
    // every file it wrote listed as the store's; the head keeps the counter's old value until
    // the end, so that the next command does this again.
    var dirty: Set<Int> = legacy ? Set(0..<Self.shardCount) : []
    for (name, entry) in wanted {
      let old = entries[name]
      if let old, old.owner == entry.owner, old.digests.contains(entry.digests[0]) { continue }
      entries[name] = ManifestEntry(
        owner: entry.owner, digests: (old?.digests.suffix(1) ?? []) + entry.digests)
      dirty.insert(Self.shard(of: entry.owner))
      if let old { dirty.insert(Self.shard(of: old.owner)) }
    }
    try saveShards(dirty)
    try saveHead(folderTime: nil)
    try writeFiles(toWrite, into: descriptor, counting: true)
    for name in toRemove {
      guard unlinkat(descriptor, name, 0) == 0 || errno == ENOENT else { throw failure(name) }
    }
    dirty = []
    for name in toRemove + gone {
      if let entry = entries.removeValue(forKey: name) { dirty.insert(Self.shard(of: entry.owner)) }
    }
    for (name, entry) in wanted where entries[name] != entry {
      entries[name] = entry
      dirty.insert(Self.shard(of: entry.owner))
    }
    guard fsync(descriptor) == 0 else { throw failure(".") }
    try saveShards(dirty)
    self.generation = generation
    recordCounts = newCounts
    try saveHead(folderTime: folderTime())
    if legacy {
      _ = unlinkat(descriptor, legacyManifestName, 0)
      _ = unlinkat(descriptor, legacyTemporaryName, 0)
      legacy = false
    }
    repairing = false
    return changes
  }

  private func count<Names: Sequence>(_ names: Names) -> (users: Int, groups: Int)
  where Names.Element == String {
    var counts = (users: 0, groups: 0)
    for name in names {
      if Self.isUserRecord(name) { counts.users += 1 }
      if Self.isGroupRecord(name) { counts.groups += 1 }
    }
    return counts
  }

  /// Removes what a killed write left under a temporary name.
  func clearTemporaryFiles() throws(AccountsError) {
    try openManifestFolder()
    for name in manifestFolderEntries() where name.hasPrefix("tmp.") {
      _ = unlinkat(manifestDescriptor, name, 0)
    }
  }

  /// Writes `files` into the folder `directory` (the records folder or the manifest's), each
  /// whole or absent, in batches (`batchSize`); tells `progress` when `counting`.
  func writeFiles(_ files: [UserRecordFile], into directory: Int32, counting: Bool = false)
    throws(AccountsError)
  {
    let prefix = directory == descriptor ? "" : manifestFolderName + "/"
    var done = 0
    for start in stride(from: 0, to: files.count, by: Self.batchSize) {
      let batch = files[start..<min(start + Self.batchSize, files.count)]
      let each = files.count <= Self.fsyncEachUpTo
      for (offset, file) in batch.enumerated() {
        try writeTemporary(file, as: "tmp.\(offset)", flush: each, path: prefix + file.name)
      }
      if !each {
        guard accounts_syncfs(descriptor) == 0 else { throw failure(".") }
      }
      for (offset, file) in batch.enumerated() {
        guard renameat(manifestDescriptor, "tmp.\(offset)", directory, file.name) == 0 else {
          let error = failure(prefix + file.name)
          _ = unlinkat(manifestDescriptor, "tmp.\(offset)", 0)
          throw error
        }
      }
      done += batch.count
      if counting && files.count > Self.batchSize {
        progress?(done, files.count)
        afterBatch?()
      }
    }
  }

  /// Writes one file or link under `temporary` in the manifest folder (flushed if `flush`).
  private func writeTemporary(
    _ file: UserRecordFile, as temporary: String, flush: Bool, path: String
  ) throws(AccountsError) {
    _ = unlinkat(manifestDescriptor, temporary, 0)
    if let target = file.linkTarget {
      guard symlinkat(target, manifestDescriptor, temporary) == 0 else {
        throw failure(path)
      }
      return
    }
    let handle = openat(
      manifestDescriptor, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
    guard handle >= 0 else { throw failure(path) }
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
    ok = ok && (!flush || fsync(handle) == 0)
    let code = errno
    Glibc.close(handle)
    guard ok else {
      _ = unlinkat(manifestDescriptor, temporary, 0)
      throw .userdbFolder(
        path: folder + "/" + path, reason: SystemUserRecordFolders.reason(code))
    }
  }

  func removeAll() throws(AccountsError) -> UserRecordRemoval {
    try loadShards(Set(0..<Self.shardCount))
    var removal = UserRecordRemoval()
    for (name, entry) in entries {
      guard case .some(let found?) = digestOnDisk(name), entry.digests.contains(found) else {
        continue
      }
      guard try remove(name, in: descriptor) else { continue }
      removal.files += 1
    }
    _ = unlinkat(descriptor, legacyTemporaryName, 0)
    var manifestGone = try remove(legacyManifestName, in: descriptor)
    if manifestDescriptor >= 0 {
      for name in manifestFolderEntries() { _ = try remove(name, in: manifestDescriptor) }
      _ = Glibc.close(manifestDescriptor)
      manifestDescriptor = -1
      guard unlinkat(descriptor, manifestFolderName, AT_REMOVEDIR) == 0 || errno == ENOENT else {
        throw failure(manifestFolderName)
      }
      manifestGone = true
    }
    removal.manifestRemoved = manifestGone
    _ = fsync(descriptor)
    entries = [:]
    manifestOnDisk = false
    if createdFolder {
      // Only when empty: another store's records, or anyone's files, keep it.
      removal.folderRemoved = rmdir(folder) == 0
    }
    return removal
  }

  /// Unlinks `name` in `directory`; false when it was already gone.
  private func remove(_ name: String, in directory: Int32) throws(AccountsError) -> Bool {
    guard unlinkat(directory, name, 0) == 0 else {
      guard errno == ENOENT else { throw failure(name) }
      return false
    }
    return true
  }
}
