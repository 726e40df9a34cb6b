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

  /// `store upgrade` says what it applied, or that the store is up to date, and names the
  /// contract steps it left for `--contract`.
  @Test func storeUpgradeSaysWhatItAppliedAndWhatWaits() {
    let uri = "postgresql://db.example/accounts"
    #expect(
      Messages.storeUpgraded(
        StoreUpgrade(applied: ["v18", "v19"], waiting: ["v20"], release: "1.3.0"), location: uri)
        == [
          "The store \(uri) is upgraded for accounts 1.3.0: applied v18, v19.",
          "Once every host runs accounts 1.3.0, run accounts store upgrade --contract to apply "
            + "v20.",
        ])
    #expect(
      Messages.storeUpgraded(
        StoreUpgrade(applied: [], waiting: [], release: "1.2.0"), location: uri)
        == ["The store \(uri) is up to date for accounts 1.2.0."])
    #expect(
      Messages.storeUpgraded(
        StoreUpgrade(applied: ["v18"], waiting: [], release: "1.2.0", rolesBehind: true),
        location: uri)
        == [
          "The store \(uri) is upgraded for accounts 1.2.0: applied v18.",
          "The fleet's roles got their rights before a migration of this store: run accounts "
            + "store roles --apply again, as its owner, with accounts 1.2.0.",
        ])
    #expect(
      Messages.storage(.needsRelease(location: uri, release: "1.3.0"))
        == "Cannot use the database \(uri): its store needs accounts 1.3.0 or later; upgrade "
        + "accounts on this host to use it.")
  }
}
