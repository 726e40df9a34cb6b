import AccountsCore
import AccountsCrypto
import AccountsStore
import AccountsTestSupport
import Foundation
import Testing

/// An import input over bytes in memory.
final class BytesInput: ImportInput {
  private var bytes: [UInt8]
  private var start = 0

  init(_ text: String) { bytes = Array(text.utf8) }

  var fraction: Double? { nil }
  func peek(_ count: Int) -> [UInt8] { Array(bytes[start..<min(bytes.count, start + count)]) }
  func nextLine() -> [UInt8]? {
    guard start < bytes.count else { return nil }
    let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
    defer { start = min(end + 1, bytes.count) }
    return Array(bytes[start..<end])
  }
  func remaining() -> [UInt8] {
    defer { start = bytes.count }
    return Array(bytes[start...])
  }
}

@Suite("Import and export")
struct ImportTests {
  let hash = "pbkdf2_sha256$1000$salt$" + String(repeating: "A", count: 43) + "="

  func importing(
    _ world: World, _ text: String, format: ImportFormat? = nil,
    domain: String? = nil, dryRun: Bool = false
  ) -> (Result<ImportSummary, AccountsError>, ScriptedConsole) {
    let console = ScriptedConsole([])
    let result = Result { () throws(AccountsError) in
      try ImportFlow.run(
        world.environment(console), input: BytesInput(text),
        options: ImportOptions(format: format, emailDomain: domain, dryRun: dryRun, name: "f"))
    }
    return (result, console)
  }

  /// CSV fields: quotes, doubled quotes, commas inside quotes; an unclosed quote is refused.
  @Test func csvFields() {
    #expect(
      ImportTests.fields(#"a,"b, c","say ""hi""",,d"#) == ["a", "b, c", #"say "hi""#, "", "d"])
    #expect(ImportTests.fields(#"a,"open"#) == nil)
  }

  static func fields(_ line: String) -> [String]? { ImportFlow.csvFields(line) }

  /// The format is guessed from the first bytes; nothing recognisable is a usage error.
  @Test func guessesTheFormat() throws {
    let world = try World()
    try world.activateAlice()
    let (csv, _) = importing(
      world, "username,full_name,email,password_hash\nbob,Bob,b@example.org,\(hash)\n")
    #expect(try csv.get().imported == 1)
    let (unknown, _) = importing(world, "just some text\n")
    #expect(throws: AccountsError.importFormatUnknown("f")) { try unknown.get() }
    let (htpasswd, _) = importing(world, "carol:$apr1$abc$def\n")
    #expect(throws: AccountsError.importNeedsEmailDomain("htpasswd")) { try htpasswd.get() }
  }

  /// All or nothing: one bad line among good ones imports nothing, and each problem is said
  /// with its line; duplicates name both lines.
  @Test func allOrNothing() throws {
    let world = try World()
    try world.activateAlice()
    let text = """
      username,full_name,email,password_hash
      bob,Bob,b@example.org,\(hash)
      BOB,Bob Again,b2@example.org,\(hash)
      carol,Carol,not-an-address,\(hash)
      dave,Dave,d@example.org,$1$salt$hash
      erin,Erin,e@example.org,plain text password
      alice,Alice,a@example.org,\(hash)

      """
    let (result, console) = importing(world, text)
    #expect(throws: AccountsError.importRefused(problems: 5)) { try result.get() }
    #expect(console.messages[0] == "line 3 (BOB): user name BOB is also on line 2.")
    #expect(console.messages[1].hasPrefix("line 4 (carol): "))
    #expect(console.messages[2] == "line 5 (dave): MD5-crypt ($1$) hashes are too weak to keep.")
    #expect(
      console.messages[3]
        == "line 6 (erin): the password is not a hash that can be kept (plain text is refused).")
    #expect(console.messages[4] == "line 7 (alice): user name alice is already taken.")
    #expect(try world.store.accountCount() == 1)
  }

  /// shadow: kept schemes imported with NAME@DOMAIN, entries without a password skipped.
  @Test func shadow() throws {
    let world = try World()
    try world.activateAlice()
    let text = """
      root:*:19000:0:99999:7:::
      daemon:!:19000:0:99999:7:::
      bob:$y$j9T$abcdefghijklmnop$abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG:19000:0:99999:7:::

      """
    let (result, console) = importing(world, text, domain: "example.org")
    let summary = try result.get()
    #expect(summary.imported == 1)
    #expect(summary.skipped == ["root", "daemon"])
    #expect(
      console.outputs == [
        "Imported 1 account from f.", "Skipped 2 entries without a password: root, daemon.",
      ])
    let bob = try #require(try world.store.account(key: "bob"))
    #expect(bob.email == "bob@example.org")
    #expect(bob.passwordHash.hasPrefix("$y$"))
    #expect(try world.store.auditEvents().last?.kind == .accountsImported)
  }

  /// A dry run checks and writes nothing.
  @Test func dryRun() throws {
    let world = try World()
    try world.activateAlice()
    let (result, console) = importing(
      world, "username,full_name,email,password_hash\nbob,Bob,b@example.org,\(hash)\n",
      dryRun: true)
    #expect(try result.get().imported == 1)
    #expect(
      console.outputs == ["Dry run: 1 account would be imported from f; nothing was written."])
    #expect(try world.store.accountCount() == 1)
  }

  /// Django: full name from first and last name, inactive users disabled, unusable passwords
  /// skipped, another model refused.
  @Test func django() throws {
    let world = try World()
    try world.activateAlice()
    let text = """
      [{"model": "auth.user", "pk": 2, "fields": {"username": "bob", "password": "\(hash)",
        "first_name": "Bob", "last_name": "Stone", "email": "b@example.org", "is_active": false}},
       {"model": "auth.user", "pk": 3, "fields": {"username": "carl", "password": "!unusable",
        "first_name": "", "last_name": "", "email": "c@example.org", "is_active": true}}]
      """
    let (result, _) = importing(world, text)
    #expect(try result.get().imported == 1)
    let bob = try #require(try world.store.account(key: "bob"))
    #expect(bob.fullName == "Bob Stone")
    #expect(bob.isDisabled)
  }

  /// An imported crypt(3) hash logs in with its password and is replaced by PBKDF2; a wrong
  /// password still fails.
  @Test func cryptHashLogsInAndIsReplaced() throws {
    let world = try World()
    try world.activateAlice()
    // Made by `mkpasswd -m sha-512 -S saltsaltsalt 'bobs long password here'`.
    let sha512 =
      "$6$saltsaltsalt$ZvEM/hoGzw/nUyiRxevhHBm3/kSQM5sG.7GLt7XZi5J3EjCJccpLiEqSuoJvueM8ZQkoRCdKlAkLyhleWKKmL/"
    let (result, _) = importing(
      world, "username,full_name,email,password_hash\nbob,Bob,b@example.org,\(sha512)\n")
    _ = try result.get()
    let (wrong, _) = world.login("bob", "not bobs long password")
    #expect(throws: AccountsError.invalidCredentials) { try wrong.get() }
    let (right, _) = world.login("bob", "bobs long password here")
    _ = try right.get()
    #expect(try world.store.account(key: "bob")?.passwordHash.hasPrefix("pbkdf2_sha256$") == true)
  }

  /// Export: CSV quoting and the Django form, read back by import.
  @Test func exportReadsBack() throws {
    let world = try World()
    try world.activateAlice(fullName: #"Alice "Al" Liddell, Jr"#)
    var csv: [UInt8] = []
    try ExportFlow.run(world.environment(ScriptedConsole([])), format: .csv) { csv += $0 }
    let text = String(decoding: csv, as: UTF8.self)
    #expect(
      text.hasPrefix(
        ExportFlow.csvHeader
          + "\nAlice,\"Alice \"\"Al\"\" Liddell, Jr\",alice@example.org,pbkdf2_sha256$"))
    var json: [UInt8] = []
    try ExportFlow.run(world.environment(ScriptedConsole([])), format: .json) { json += $0 }
    let parsed = try JSONSerialization.jsonObject(with: Data(json)) as? [[String: Any]]
    let fields = try #require(parsed?.first?["fields"] as? [String: Any])
    #expect(fields["first_name"] as? String == #"Alice "Al" Liddell, Jr"#)
    #expect(fields["is_superuser"] as? Bool == true)
    let other = try World()
    try other.activateAlice()
    try other.store.write { writer throws(AccountsError) in
      guard var alice = try writer.account(key: "alice") else { return }
      alice.username = "owner"
      alice.usernameKey = "owner"
      try writer.update(alice)
    }
    let (back, _) = importing(other, String(decoding: json, as: UTF8.self))
    #expect(try back.get().imported == 1)
    #expect(try other.store.auditEvents().last?.kind == .accountsImported)
  }
}
