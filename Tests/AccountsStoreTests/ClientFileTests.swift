import AccountsCore
import AccountsStore
import AccountsTestSupport
import Foundation
import Testing

/// The session file and the key file: private, whole, refused otherwise.
@Suite("Client files")
struct ClientFileTests {
  /// A saved session reads back; the file is mode 0600 in a folder made 0700; remove forgets.
  @Test func sessionFileRoundTrip() throws {
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("state/accounts/session").path
    let file = SessionFile(path: path)
    #expect(try file.load() == nil)
    let saved = SavedSession(database: "/data/odd\nname.sqlite3", token: Array(0..<32))
    try file.save(saved)
    #expect(try file.load() == saved)
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    #expect((attributes[.posixPermissions] as? Int) == 0o600)
    let parent = try FileManager.default.attributesOfItem(
      atPath: folder.appendingPathComponent("state/accounts").path)
    #expect((parent[.posixPermissions] as? Int) == 0o700)
    try file.remove()
    #expect(try file.load() == nil)
    try file.remove()
  }

  /// A PostgreSQL store's identity reads back from its own line, and a file without one reads
  /// with none; a path whose line looks like one keeps it as part of the path.
  @Test func sessionFileStoreIdentity() throws {
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("session").path
    let file = SessionFile(path: path)
    let id = "0123456789abcdef0123456789abcdef"
    let saved = SavedSession(database: "postgresql:///db", storeID: id, token: Array(0..<32))
    try file.save(saved)
    #expect(
      try String(contentsOfFile: path, encoding: .utf8)
        == "accounts-session 1\ndatabase postgresql:///db\nstore \(id)\ntoken "
        + (0..<32).map { String(format: "%02x", $0) }.joined()
        + "\n")
    #expect(try file.load() == saved)
    try file.save(SavedSession(database: "postgresql:///db", token: Array(0..<32)))
    #expect(try file.load()?.storeID == nil)
    let oddPath = SavedSession(database: "/data/a\nstore \(id)", token: Array(0..<32))
    try file.save(oddPath)
    #expect(try file.load() == oddPath)
  }

  /// A session file readable by others, a link or damaged content is refused.
  @Test func sessionFileRefusals() throws {
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("session").path
    let file = SessionFile(path: path)
    try file.save(SavedSession(database: "/db", token: Array(repeating: 1, count: 32)))
    chmod(path, 0o644)
    #expect(throws: AccountsError.clientFile(.notPrivate(.sessionFile, path: path, mode: "644"))) {
      try file.load()
    }
    try FileManager.default.removeItem(atPath: path)
    try "accounts-session 1\ndatabase /db\ntoken 12\n".write(
      toFile: path, atomically: false, encoding: .utf8)
    chmod(path, 0o600)
    #expect(throws: AccountsError.clientFile(.damaged(.sessionFile, path: path))) {
      try file.load()
    }
    try FileManager.default.removeItem(atPath: path)
    try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "/etc/passwd")
    #expect(throws: AccountsError.clientFile(.notAFile(.sessionFile, path: path))) {
      try file.load()
    }
  }

  /// The key is made once, 64 hex digits and a newline, mode 0600; a second maker gets it too.
  @Test func keyFile() throws {
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let database = folder.appendingPathComponent("a.sqlite3").path
    let keys = KeyFile(databasePath: database)
    #expect(keys.location == database + ".key")
    #expect(try keys.existingKey() == nil)
    let made = try keys.keyMakingIfNeeded()
    #expect(try KeyFile(databasePath: database).keyMakingIfNeeded() == made)
    let text = try String(contentsOfFile: keys.location, encoding: .utf8)
    #expect(text.count == 65 && text.hasSuffix("\n"))
    let attributes = try FileManager.default.attributesOfItem(atPath: keys.location)
    #expect((attributes[.posixPermissions] as? Int) == 0o600)
    chmod(keys.location, 0o640)
    #expect(throws: AccountsError.self) { try keys.existingKey() }
    chmod(keys.location, 0o600)
    try "not a key\n".write(toFile: keys.location, atomically: false, encoding: .utf8)
    #expect(throws: AccountsError.clientFile(.damaged(.keyFile, path: keys.location))) {
      try keys.existingKey()
    }
  }
}
