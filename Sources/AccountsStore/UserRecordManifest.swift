import AccountsCore
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A store's manifest in a records folder: the folder `.accounts-STOREID.manifest.d`, holding
/// `head` and up to 256 shards (`00` to `ff`).
///
/// Each shard lists the files of the owners (`u` and an account's id, `g` and a group's) whose
/// name hashes to it, one line each: owner, file name, accepted SHA-256 values. The head names
/// every shard that is not empty with its SHA-256 (a missing or changed shard is a damaged
/// manifest), the store's change counter the folder last applied, the folder's modification
/// time just after (another value: someone else changed the folder since), the numbers of
/// user and group records, and whether `accounts` made the folder. A change rewrites the
/// shards of its owners and the head, each whole or absent (temporary name, flush, rename).
extension SystemUserRecordFolders.Session {
  static let shardCount = 256
  static let headName = "head"

  /// The shard that lists `owner`'s files (FNV-1a of its bytes).
  static func shard(of owner: String) -> Int {
    var hash: UInt32 = 2_166_136_261
    for byte in owner.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
    return Int(hash % UInt32(shardCount))
  }

  static func shardName(_ index: Int) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[index / 16], digits[index % 16]])
  }

  struct Head: Codable {
    var createdFolder: Bool
    var generation: Int64?
    var folderTime: String?
    var users: Int
    var groups: Int
    var shards: [String: String]
  }

  var damaged: AccountsError {
    .userdbFolder(path: folder + "/" + manifestFolderName, reason: UserdbFlow.damagedManifest)
  }

  /// Reads the manifest's head (none: nothing written yet), or an earlier release's single
  /// file; with `repair`, a damaged one is dropped rather than refused.
  func loadManifest(created: Bool, repair: Bool) throws(AccountsError) {
    createdFolder = created
    mayRepair = repair
    manifestDescriptor = openat(
      descriptor, manifestFolderName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    guard manifestDescriptor >= 0 else {
      guard errno == ENOENT else { throw damaged }
      return try loadLegacyManifest(repair: repair)
    }
    try Self.checkOwner(
      manifestDescriptor, path: folder + "/" + manifestFolderName, what: "the manifest")
    guard let bytes = try read(Self.headName, in: manifestDescriptor),
      let head = try? JSONDecoder().decode(Head.self, from: Data(bytes))
    else {
      guard repair else { throw damaged }
      repairing = true
      return
    }
    createdFolder = head.createdFolder || created
    shardDigests = head.shards
    recordCounts = (head.users, head.groups)
    generation = head.folderTime == folderTime() ? head.generation : nil
    manifestOnDisk = true
  }

  private func loadLegacyManifest(repair: Bool) throws(AccountsError) {
    guard let bytes = try read(legacyManifestName, limit: 1 << 30) else { return }
    struct Stored: Decodable {
      var createdFolder: Bool
      var files: [String: [String]]
    }
    guard let stored = try? JSONDecoder().decode(Stored.self, from: Data(bytes)) else {
      guard repair else {
        throw .userdbFolder(
          path: folder + "/" + legacyManifestName, reason: UserdbFlow.damagedManifest)
      }
      repairing = true
      return
    }
    entries = stored.files.mapValues { ManifestEntry(owner: "", digests: $0) }
    loadedShards = Set(0..<Self.shardCount)
    createdFolder = stored.createdFolder || createdFolder
    legacy = true
  }

  /// Reads the shards `indexes` not read yet; a shard whose digest is not the head's is
  /// refused (or, repairing, dropped).
  func loadShards(_ indexes: Set<Int>) throws(AccountsError) {
    for index in indexes.subtracting(loadedShards).sorted() {
      loadedShards.insert(index)
      let name = Self.shardName(index)
      guard let expected = shardDigests[name] else { continue }
      guard let bytes = try read(name, in: manifestDescriptor, limit: 1 << 28),
        digest(bytes) == expected, let parsed = Self.parse(bytes)
      else {
        guard mayRepair else { throw damaged }
        repairing = true
        shardDigests[name] = nil
        continue
      }
      for (name, entry) in parsed { entries[name] = entry }
    }
  }

  /// A shard's lines: owner, tab, file name, tab, digests joined by commas.
  static func parse(_ bytes: [UInt8]) -> [(String, ManifestEntry)]? {
    var parsed: [(String, ManifestEntry)] = []
    for line in bytes.split(separator: UInt8(ascii: "\n")) {
      let fields = line.split(separator: UInt8(ascii: "\t"), omittingEmptySubsequences: false)
      guard fields.count == 3, !fields[1].isEmpty else { return nil }
      let digests = fields[2].split(separator: UInt8(ascii: ",")).map {
        String(decoding: $0, as: UTF8.self)
      }
      guard !digests.isEmpty else { return nil }
      parsed.append(
        (
          String(decoding: fields[1], as: UTF8.self),
          ManifestEntry(owner: String(decoding: fields[0], as: UTF8.self), digests: digests)
        ))
    }
    return parsed
  }

  /// Makes the manifest folder if it is missing.
  func openManifestFolder() throws(AccountsError) {
    guard manifestDescriptor < 0 else { return }
    guard mkdirat(descriptor, manifestFolderName, 0o755) == 0 || errno == EEXIST else {
      throw failure(manifestFolderName)
    }
    manifestDescriptor = openat(
      descriptor, manifestFolderName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    guard manifestDescriptor >= 0 else { throw failure(manifestFolderName) }
    _ = fchmod(manifestDescriptor, 0o755)
  }

  /// Writes the shards `indexes` from the entries (an empty one is removed).
  func saveShards(_ indexes: Set<Int>) throws(AccountsError) {
    guard !indexes.isEmpty else { return }
    try openManifestFolder()
    var lines: [Int: [UInt8]] = [:]
    for (name, entry) in entries.sorted(by: { $0.key < $1.key }) {
      let index = Self.shard(of: entry.owner)
      guard indexes.contains(index) else { continue }
      lines[index, default: []] += Array(
        "\(entry.owner)\t\(name)\t\(entry.digests.joined(separator: ","))\n".utf8)
    }
    var files: [UserRecordFile] = []
    for index in indexes.sorted() {
      let name = Self.shardName(index)
      if let bytes = lines[index] {
        files.append(.record(name, bytes))
        shardDigests[name] = digest(bytes)
      } else if shardDigests.removeValue(forKey: name) != nil {
        guard unlinkat(manifestDescriptor, name, 0) == 0 || errno == ENOENT else {
          throw failure(manifestFolderName + "/" + name)
        }
      }
    }
    try writeFiles(files, into: manifestDescriptor)
  }

  /// Writes the head, flushed, and then the manifest folder.
  func saveHead(folderTime time: String? = nil) throws(AccountsError) {
    try openManifestFolder()
    let head = Head(
      createdFolder: createdFolder, generation: generation, folderTime: time,
      users: recordCounts.users, groups: recordCounts.groups, shards: shardDigests)
    guard let data = try? JSONEncoder().encode(head) else { throw damaged }
    try writeFiles([.record(Self.headName, [UInt8](data) + [10])], into: manifestDescriptor)
    guard fsync(manifestDescriptor) == 0 else { throw failure(manifestFolderName) }
    manifestOnDisk = true
  }

  /// The names in the manifest folder.
  func manifestFolderEntries() -> [String] {
    guard manifestDescriptor >= 0 else { return [] }
    let copy = dup(manifestDescriptor)
    guard copy >= 0, let directory = fdopendir(copy) else { return [] }
    defer { closedir(directory) }
    rewinddir(directory)
    var names: [String] = []
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
      }
      if name != "." && name != ".." { names.append(name) }
    }
    return names
  }
}
