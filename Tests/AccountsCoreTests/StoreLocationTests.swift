import AccountsCore
import Testing

/// Which store a `--database` value names, and how it is shown (issue 13).
@Suite("Store location")
struct StoreLocationTests {
  /// PostgreSQL URIs by their two schemes; everything else is a path.
  @Test func choosesTheStore() {
    #expect(StoreLocation.isPostgres("postgresql://db.example/accounts"))
    #expect(StoreLocation.isPostgres("postgres:///accounts"))
    #expect(!StoreLocation.isPostgres("/var/lib/accounts.sqlite3"))
    #expect(!StoreLocation.isPostgres("postgresql:/x"))
    #expect(!StoreLocation.isPostgres("./postgresql://x"))
  }

  /// The password goes, from the user part and from the parameters; nothing else changes.
  @Test(arguments: [
    (
      "postgresql://alice:s3cret@127.0.0.1:5432/acc?sslmode=disable&password=x",
      "postgresql://alice@127.0.0.1:5432/acc?sslmode=disable"
    ),
    ("postgres://alice:p%40ss:w@h/db", "postgres://alice@h/db"),
    ("postgresql://:only@h/db", "postgresql://@h/db"),
    ("postgresql:///db?password=x", "postgresql:///db"),
    ("postgresql:///db?Password=x&user=bob", "postgresql:///db?user=bob"),
    ("postgresql:///db?pass%77ord=x", "postgresql:///db"),
    (
      "postgresql://alice@h/db?application_name=a:b@c",
      "postgresql://alice@h/db?application_name=a:b@c"
    ),
    ("postgresql:///?service=accounts", "postgresql:///?service=accounts"),
    ("/srv/accounts.sqlite3", "/srv/accounts.sqlite3"),
  ]) func hidesThePassword(_ uri: String, _ shown: String) {
    #expect(StoreLocation.shown(uri) == shown)
    #expect(StoreLocation.holdsPassword(uri) == (uri != shown))
  }

  /// A message that quotes the URI (libpq does, for a malformed one) never shows its password.
  @Test func scrubsMessages() {
    let uri = "postgresql://bob:p%40ss@[::1/x?password=two"
    let message = "missing \"]\" in URI: \"\(uri)\"; p@ss two"
    let scrubbed = StoreLocation.scrubbed(message, of: uri)
    #expect(!scrubbed.contains("p%40ss") && !scrubbed.contains("p@ss") && !scrubbed.contains("two"))
    #expect(scrubbed.contains("postgresql://bob@[::1/x"))
    #expect(StoreLocation.passwords(in: "postgresql:///db") == [])
  }
}
