import AccountsCore
import Testing

/// Storage messages are chosen by what happened, never by looking at the location's form: the
/// same location reads the same way in every case.
@Suite("Storage messages")
struct StorageMessagesTests {
  /// Another program's schema, and a server that only allows reading, have words of their own.
  @Test func wordsFollowTheCase() {
    let uri = "postgresql://db.example/app"
    #expect(
      Messages.storage(.foreignSchema(location: uri, schema: "accounts"))
        == "Cannot use the database \(uri): its schema accounts was not made by accounts. "
        + "Choose another database with --database.")
    #expect(
      Messages.storage(.readOnlyServer(location: uri))
        == "Cannot write the database \(uri): the server only allows reading (a standby?). "
        + "Name the primary, for example with target_session_attrs=read-write.")
    // A store error about a URI that is not about its schema or server reads as any other.
    #expect(
      Messages.storage(.readOnly(location: uri))
        == "Cannot write the database \(uri): the file or its folder is read-only.")
    #expect(
      Messages.storage(.foreignDatabase(location: "/srv/a.sqlite3"))
        == "Cannot use the database /srv/a.sqlite3: it was not made by accounts. Choose another "
        + "file with --database.")
  }

  /// `status` with no store says what is missing by what holds the store.
  @Test func aMissingStoreIsToldByItsContainer() {
    #expect(
      Messages.databaseMissing("postgresql:///app", in: .sharedDatabase)
        == "Database: postgresql:///app (this database holds no accounts store yet)")
    #expect(
      Messages.databaseMissing("/srv/a.sqlite3", in: .ownFile)
        == "Database: /srv/a.sqlite3 (no database exists at this path)")
  }
}
