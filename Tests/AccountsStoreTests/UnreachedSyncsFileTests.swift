import AccountsCore
import AccountsStore
import FoundationEssentials
import Testing

/// The host's file of syncs that could not reach the server: beside the login cache, private,
/// read back as written, gone once cleared, and replaced when damaged.
@Suite("Unreached syncs file")
struct UnreachedSyncsFileTests {
  let now = Date(timeIntervalSince1970: 1_800_000_000)

  /// Written (its folder made 0700, the file 0600), read back, counted on, cleared.
  @Test func roundTrip() throws {
    // Given a login cache's folder not yet made
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = UnreachedSyncsFile(
      besideLoginCache: folder.appendingPathComponent("var/login-cache.sqlite3").path)
    #expect(file.location == folder.appendingPathComponent("var/unreached-syncs").path)
    #expect(try file.load() == nil)
    // When a sync that could not reach the server is kept
    let first = UnreachedSyncs(
      host: "web-1", count: 1, first: now, last: now, reason: "Cannot connect.\nAt all.")
    try file.update { _ in first }
    // Then it reads back, private in a private folder
    #expect(try file.load() == first)
    let attributes = try FileManager.default.attributesOfItem(atPath: file.location)
    #expect((attributes[.posixPermissions] as? Int) == 0o600)
    let parent = try FileManager.default.attributesOfItem(
      atPath: folder.appendingPathComponent("var").path)
    #expect((parent[.posixPermissions] as? Int) == 0o700)
    // And a second one adds to it, and clearing removes the file
    try file.update { $0?.adding(reason: "Again.", at: now.addingTimeInterval(5)) }
    #expect(try file.load()?.count == 2)
    try file.update { _ in nil }
    #expect(try file.load() == nil)
    #expect(!FileManager.default.fileExists(atPath: file.location))
  }

  /// A damaged file is refused when read and replaced by the next count.
  @Test func damagedIsReplaced() throws {
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = UnreachedSyncsFile(
      besideLoginCache: folder.appendingPathComponent("login-cache.sqlite3").path)
    #expect(
      FileManager.default.createFile(
        atPath: file.location, contents: Data("not ours\n".utf8),
        attributes: [.posixPermissions: 0o600]))
    #expect(throws: AccountsError.clientFile(.damaged(.unreachedSyncsFile, path: file.location))) {
      try file.load()
    }
    try file.update { kept in
      kept ?? UnreachedSyncs(host: "web-1", count: 1, first: now, last: now, reason: "r")
    }
    #expect(try file.load()?.count == 1)
  }
}
