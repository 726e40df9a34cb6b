import AccountsCore
import Testing

/// Which store a `--database` value names, and how it is shown.
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
    // A password typed with `?`, `/` or `@` as they are (libpq wants them percent-encoded).
    ("postgresql://user:pa?ss/w@rd@host/db", "postgresql://user@host/db"),
    ("postgresql://alice:1234/x@h:5432/db", "postgresql://alice@h:5432/db"),
    ("postgresql://alice:a@b@h/db?sslmode=disable", "postgresql://alice@h/db?sslmode=disable"),
    ("postgresql://alice:pa?user=x@h/db", "postgresql://alice@h/db"),
    ("postgresql://alice:?@h/db", "postgresql://alice@h/db"),
    ("postgresql://alice:/@h/db", "postgresql://alice@h/db"),
    ("postgresql://alice:@@h/db", "postgresql://alice@h/db"),
    ("postgresql://alice:p%40ss@h/db", "postgresql://alice@h/db"),
    ("postgresql://alice:p%3Fw@[::1]:5432,h2:5433/db", "postgresql://alice@[::1]:5432,h2:5433/db"),
    ("postgres://u:pässwörd €@h/db", "postgres://u@h/db"),
    ("postgresql://alice:@h/db", "postgresql://alice@h/db"),
    ("postgresql://alice:pw@h/db?password=pw", "postgresql://alice@h/db"),
    ("postgresql://alice:1?sslmode=x@h/db", "postgresql://alice@h/db"),
    ("postgresql://alice:p@ss?sslmode=x@h/db?sslmode=y", "postgresql://alice@h/db?sslmode=y"),
    ("postgresql://alice:pw@h/db?application_name=what?user=bob@corp", "postgresql://alice@corp"),
    ("postgres://alice:p@ss?sslmode=disable@/accounts", "postgres://alice@/accounts"),
    (
      "postgresql://h/db?application_name=x@y&password=p?sslmode=z",
      "postgresql://h/db?application_name=x@y"
    ),
    ("postgresql://?password=a@b", "postgresql://"),
    // The same in a parameter, and the other secret parameters.
    ("postgresql:///db?password=pa?ss/w@rd", "postgresql:///db"),
    ("postgresql:///db?sslmode=require&password=p?w/d@x", "postgresql:///db?sslmode=require"),
    ("postgresql:///db?password=a&b&user=bob", "postgresql:///db?user=bob"),
    ("postgresql:///db?password=a=b&c&sslmode=disable", "postgresql:///db?sslmode=disable"),
    ("postgresql:///db?foo=1&password=x", "postgresql:///db?foo=1"),
    ("postgresql:///db?PASSWORD=x&application_name=a", "postgresql:///db?application_name=a"),
    ("postgresql:///db?password", "postgresql:///db?password"),
    ("postgresql:///db?sslpassword=k&host=/tmp", "postgresql:///db?host=/tmp"),
    ("postgresql:///db?oauth_client_secret=s", "postgresql:///db"),
    // No password: nothing changes, whatever `@` the rest holds.
    (
      "postgresql://h:5432/db?user=bob@corp.example", "postgresql://h:5432/db?user=bob@corp.example"
    ),
    ("postgresql://bob@corp@h/db", "postgresql://bob@corp@h/db"),
    ("postgresql://alice@h/db?options=-c%20x=y", "postgresql://alice@h/db?options=-c%20x=y"),
    ("postgresql://h/my@db", "postgresql://h/my@db"),
    ("postgresql://u:pw", "postgresql://u:pw"),
    // Read two ways, it hides more: `5432/my` might be a password typed with its `/`.
    ("postgresql://h:5432/my@db", "postgresql://h@db"),
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

  /// Passwords of every awkward shape, in the user part and as a parameter: the shown URI is
  /// the one written without them, and a message quoting the URI shows none of them.
  @Test(arguments: [
    "pa?ss/w@rd", "p@ss", "a/b/c", "??", "//", "@@", "p%40ss", "p%2Fw%3F", "::@@//??",
    "päss wörd", "s3cret#frag", "x=y", "&&x", "%zz", "p@ss?sslmode=disable",
  ]) func hidesPasswordsOfEveryShape(_ password: String) {
    let shapes = [
      (
        "postgresql://alice:\(password)@db.example:5432/accounts?sslmode=require",
        "postgresql://alice@db.example:5432/accounts?sslmode=require"
      ),
      ("postgres://alice:\(password)@/accounts", "postgres://alice@/accounts"),
      ("postgresql:///accounts?password=\(password)", "postgresql:///accounts"),
      (
        "postgresql:///accounts?sslmode=disable&password=\(password)&application_name=x",
        "postgresql:///accounts?sslmode=disable&application_name=x"
      ),
    ]
    for (uri, expected) in shapes {
      #expect(StoreLocation.shown(uri) == expected, "\(uri)")
      #expect(StoreLocation.holdsPassword(uri), "\(uri)")
      #expect(StoreLocation.passwords(in: uri).contains(password), "\(uri)")
      let message = StoreLocation.scrubbed("invalid URI: \"\(uri)\"; \(password)", of: uri)
      // (`//` is in every URI shown: what is left around it must not hold the password.)
      let rest = message.replacingOccurrences(of: expected, with: "")
      #expect(!rest.contains(password), "\(message)")
      if let decoded = password.removingPercentEncoding {
        #expect(!rest.contains(decoded), "\(message)")
      }
      #expect(message.contains(expected), "\(message)")
    }
  }

  /// libpq quotes the piece of a URI it cannot read, here one that holds the end of a password
  /// typed with `?` and `@` as they are: the piece is hidden, other quoted text stays.
  @Test func hidesAQuotedPieceOfThePassword() {
    let uri = "postgresql://user:pa?ss/w@rd@host/db"
    let message = StoreLocation.scrubbed(
      "missing key/value separator \"=\" in URI query parameter: \"ss/w@rd@host/db\"", of: uri)
    #expect(
      message
        == "missing key/value separator \"=\" in URI query parameter: \"(part of the URI hidden)\"")
    #expect(
      StoreLocation.scrubbed("could not translate host name \"host\" to address", of: uri)
        == "could not translate host name \"host\" to address")
    // libpq read `bob` as the host and the password's start as the port.
    #expect(
      StoreLocation.scrubbed("at bob:Kq1", of: "postgresql://bob:Kq1/Wm3@Tn4@h:5/db")
        == "at bob:(password hidden)")
  }
}
