import AccountsCore
import AccountsTestSupport
import Foundation
import Testing

@testable import AccountsPostgres

/// Rows of PostgreSQL are decoded by type: a NULL where a value is required, or text that does
/// not spell the type, is a store error, never an empty string or a zero.
@Suite("PostgreSQL rows")
struct PostgresRowTests {
  /// The decoder's answers on one row: values, NULL for an optional, and both failures.
  @Test func decodesByType() throws {
    let (uri, drop) = try temporaryPostgresDatabase()
    defer { drop() }
    let db = try PGConnection.open(uri: uri, location: uri)
    let rows = try db.run("SELECT 'alice', '42', 't', NULL::text, 'x1', 'zz'")
    #expect(try rows.decode(String.self, 0, 0) == "alice")
    #expect(try rows.decode(Int64.self, 0, 1) == 42)
    #expect(try rows.decode(Bool.self, 0, 2))
    #expect(try rows.decode(String?.self, 0, 3) == nil)
    #expect(throws: PGUnreadableValue.self) { try rows.decode(String.self, 0, 3) }
    #expect(throws: PGUnreadableValue.self) { try rows.decode(Int64.self, 0, 4) }
    #expect(throws: PGUnreadableValue.self) { try rows.decode([UInt8].self, 0, 5) }
  }

  /// A stored account whose e-mail is NULL (a constraint dropped by hand) reads as a store
  /// error in one sentence, not as an account with an empty address.
  @Test func aNullValueIsAStoreError() throws {
    let (uri, drop) = try temporaryPostgresDatabase()
    defer { drop() }
    let store = try #require(try PostgresStore(uri: uri).opened(for: .readWrite))
    _ = try store.write { writer throws(AccountsError) in
      try writer.activate(
        owner: NewAccount(
          username: "alice", usernameKey: "alice", fullName: "Alice Liddell",
          email: "alice@example.org", passwordHash: "pbkdf2_sha256$1000$salt$key"),
        at: Date())
    }
    let psql = try runTool(
      "/usr/bin/psql",
      [
        "-qAt", "-v", "ON_ERROR_STOP=1", "-d", uri, "-c",
        "ALTER TABLE accounts.account ALTER COLUMN email DROP NOT NULL; "
          + "UPDATE accounts.account SET email = NULL",
      ])
    #expect(psql.status == 0, "\(psql.output)")
    let error = #expect(throws: AccountsError.self) {
      try store.read { reader throws(AccountsError) in try reader.owner() }
    }
    let reason = "column 5 is empty where text is required"
    #expect(error == .storage(.unreadableValue(location: store.location, reason: reason)))
    #expect(
      Messages.storage(.unreadableValue(location: "postgresql:///x", reason: reason))
        == "Cannot use the database postgresql:///x: a stored value is not what accounts wrote "
        + "(column 5 is empty where text is required). Restore it from a backup.")
  }
}
