import AccountsCore
import AccountsTestSupport
import Foundation
import Testing

@testable import AccountsStore

/// `StatusReader` (a bare connection, what `accounts status` uses) gives the same answer as the
/// store's path (`SQLiteStore.open(path:access: .readOnly)?.status()`) for every kind of file.
@Suite("Status: the plain reader and the store's path agree")
struct StatusReaderTests {
  /// Each case makes one file (or none) at `path` inside `folder`.
  static let cases: [(String, @Sendable (_ folder: URL, _ path: String) throws -> Void)] = [
    ("missing", { _, _ in }),
    (
      "parent is a file",
      { folder, _ in try Data("x".utf8).write(to: folder.appendingPathComponent("file")) }
    ),
    (
      "directory",
      { _, path in
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
      }
    ),
    ("empty file", { _, path in try privateFile(path, Data()) }),
    ("not a database", { _, path in try privateFile(path, Data(repeating: 0x41, count: 5000)) }),
    ("public", { _, path in _ = try SQLiteStore.open(path: path, access: .readWrite) }),
    (
      "activated",
      { _, path in
        try #require(try SQLiteStore.open(path: path, access: .readWrite)).activate(
          alice, at: noon)
      }
    ),
    (
      "newer schema",
      { _, path in
        _ = try SQLiteStore.open(path: path, access: .readWrite)
        try DatabaseQueue(path: path).write {
          try $0.execute(sql: "INSERT INTO grdb_migrations VALUES ('v9-future')")
        }
      }
    ),
    (
      "foreign",
      { _, path in
        try DatabaseQueue(path: path).write { try $0.execute(sql: "CREATE TABLE t (x)") }
        chmod(path, 0o600)
      }
    ),
    (
      "corrupt",
      { _, path in
        try #require(try SQLiteStore.open(path: path, access: .readWrite)).activate(
          alice, at: noon)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes.replaceSubrange(100..<4096, with: Data(repeating: 0xA5, count: 3996))
        try bytes.write(to: URL(fileURLWithPath: path))
      }
    ),
    (
      "not private",
      { _, path in
        _ = try SQLiteStore.open(path: path, access: .readWrite)
        chmod(path, 0o644)
      }
    ),
    (
      "symbolic link",
      { folder, path in
        let target = folder.appendingPathComponent("target").path
        _ = try SQLiteStore.open(path: target, access: .readWrite)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
      }
    ),
    (
      "folder others may write",
      { folder, path in
        _ = try SQLiteStore.open(path: path, access: .readWrite)
        chmod(folder.path, 0o777)
      }
    ),
  ]

  static func privateFile(_ path: String, _ data: Data) throws {
    try data.write(to: URL(fileURLWithPath: path))
    chmod(path, 0o600)
  }

  /// Both readers, same file: the same status or the same error.
  @Test(arguments: cases.indices)
  func sameAnswer(_ index: Int) throws {
    let (name, make) = Self.cases[index]
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    chmod(folder.path, 0o700)
    let path =
      name == "parent is a file"
      ? folder.appendingPathComponent("file/db.sqlite3").path
      : folder.appendingPathComponent("db.sqlite3").path
    try make(folder, path)
    let before = try? Data(contentsOf: URL(fileURLWithPath: path))
    let plain = Result { () throws(StoreError) in try StatusReader.read(path: path) }
    let grdb = Result { () throws(StoreError) in
      try SQLiteStore.open(path: path, access: .readOnly)?.storeStatus()
    }
    #expect(plain == grdb, "\(name)")
    #expect((try? Data(contentsOf: URL(fileURLWithPath: path))) == before, "\(name) unchanged")
    chmod(folder.path, 0o700)
  }
}
