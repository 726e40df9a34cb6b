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
  func nextBlock() -> [UInt8]? {
    guard start < bytes.count else { return nil }
    // Small blocks, so that elements and tokens straddle them.
    let end = min(bytes.count, start + 7)
    defer { start = end }
    return Array(bytes[start..<end])
  }
}

/// An import input whose every read fails with `error`.
final class UnreadableInput: ImportInput {
  let error: AccountsError
  init(_ error: AccountsError) { self.error = error }
  var fraction: Double? { nil }
  func peek(_ count: Int) throws(AccountsError) -> [UInt8] { throw error }
  func nextLine() throws(AccountsError) -> [UInt8]? { throw error }
  func nextBlock() throws(AccountsError) -> [UInt8]? { throw error }
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

  /// An import file that cannot be read is the person's input, not the store's: its own
  /// sentence naming the file, the usage exit code (2), and nothing imported.
  @Test func unreadableFileIsAUsageError() throws {
    let error = AccountsError.importFileUnreadable(
      path: "/srv/users.csv", reason: "Permission denied")
    #expect(
      error.description
        == "Cannot read the import file /srv/users.csv: Permission denied. Name a readable file, "
        + "or - for standard input.")
    #expect(error.exitStatus == .usage)
    #expect(error.exitStatus.rawValue == 2)
    let world = try World()
    try world.activateAlice()
    let console = ScriptedConsole([])
    #expect(throws: error) {
      try ImportFlow.run(
        world.environment(console), input: UnreadableInput(error),
        options: ImportOptions(format: .csv, emailDomain: nil, dryRun: false, name: "users.csv"))
    }
    #expect(try world.store.auditEvents(limit: nil).map(\.kind) == [.activation])
  }

  /// A good file whose only problems are names the store already has is refused (exit 1, as
  /// `user add` is); a file with a problem of its own is bad input (exit 2).
  @Test func takenNamesAreRefusedBadLinesAreInvalid() throws {
    let world = try World()
    try world.activateAlice()
    let taken = importing(
      world, "username,full_name,email,password_hash\nalice,A,a@example.org,\(hash)\n")
    #expect(throws: AccountsError.importRefused(problems: 1)) { try taken.0.get() }
    #expect(AccountsError.importRefused(problems: 1).exitStatus == .refused)
    let bad = importing(
      world,
      "username,full_name,email,password_hash\nalice,A,a@example.org,\(hash)\nbob,B,b@example.org,x\n"
    )
    #expect(throws: AccountsError.importInvalid(problems: 2)) { try bad.0.get() }
    #expect(AccountsError.importInvalid(problems: 2).exitStatus == .usage)
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
    #expect(throws: AccountsError.importInvalid(problems: 5)) { try result.get() }
    #expect(console.messages[0] == "line 3 (BOB): user name BOB is also on line 2.")
    #expect(console.messages[1].hasPrefix("line 4 (carol): "))
    #expect(console.messages[2] == "line 5 (dave): MD5-crypt ($1$) hashes are too weak to keep.")
    #expect(
      console.messages[3]
        == "line 6 (erin): the password is not a hash that can be kept (plain text is refused).")
    #expect(console.messages[4] == "line 7 (alice): user name alice is already taken.")
    #expect(try world.store.accountCount() == 1)
  }

  /// A file longer than a batch is said in its order, each duplicate with its first line,
  /// whichever batch that line was stored in.
  @Test func problemsAcrossBatchesInLineOrder() throws {
    let world = try World()
    try world.activateAlice()
    var lines = ["username,full_name,email,password_hash"]
    for entry in 1...(ImportFlow.batchSize * 5 / 2) {
      let name = [950: "u949", 1500: "u1", 2400: "U1700"][entry] ?? "u\(entry)"
      let email = entry == 1600 ? "not-an-address" : "\(name)@example.org"
      lines.append("\(name),User,\(email),\(hash)")
    }
    let (result, console) = importing(world, lines.joined(separator: "\n") + "\n")
    #expect(throws: AccountsError.importInvalid(problems: 4)) { try result.get() }
    #expect(console.messages.count == 4)
    #expect(console.messages[0] == "line 951 (u949): user name u949 is also on line 950.")
    #expect(console.messages[1] == "line 1501 (u1): user name u1 is also on line 2.")
    #expect(console.messages[2].hasPrefix("line 1601 (u1600): "))
    #expect(console.messages[3] == "line 2401 (U1700): user name U1700 is also on line 1701.")
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

  /// A Django list read in 7-byte blocks: strings holding quotes, brackets, braces and escaped
  /// backslashes, entries across the blocks' edges, white space anywhere; is_active as a JSON
  /// boolean or the number 1 or 0.
  @Test func djangoListInSmallBlocks() throws {
    let world = try World()
    try world.activateAlice()
    func user(_ name: String, _ active: String, first: String) -> String {
      #"{ "model" : "auth.user", "pk": 9, "fields": {"username": "\#(name)", "password": "\#(hash)", "first_name": "\#(first)", "last_name": "", "email": "\#(name)@example.org", "is_active": \#(active), "groups": [[1, "]"]]}}"#
    }
    let text =
      "\n [ " + user("bob", "true", first: #"Say \"]}\" \\"#) + " ,\n"
      + user("carol", "0", first: "[{Carol}]") + ",\r\n\t" + user("dave", "1.0", first: "Dave")
      + "\n]\n\n"
    let (result, console) = importing(world, text)
    #expect(console.messages == [])
    #expect(try result.get().imported == 3)
    #expect(try world.store.account(key: "bob")?.fullName == #"Say "]}" \"#)
    #expect(try world.store.account(key: "carol")?.isDisabled == true)
    #expect(try world.store.account(key: "dave")?.isDisabled == false)
  }

  /// A broken Django list: an entry that is not JSON is a problem on its entry (the rest is
  /// read on); a list that breaks off, or anything after its `]`, names the line and ends
  /// the reading; a string `is_active` is a problem.
  @Test func djangoListProblems() throws {
    let world = try World()
    try world.activateAlice()
    let good =
      #"{"model": "auth.user", "fields": {"username": "bob", "password": "\#(hash)", "email": "b@example.org"}}"#
    let cases: [(String, [String])] = [
      (
        "[\n" + good + ",\n{\"model\": nope},\n" + good.replacingOccurrences(of: "bob", with: "eve")
          + "\n]",
        ["entry 2: the entry starting on line 3 is not valid JSON."]
      ),
      (
        "[" + good + "\n\n" + good + "]",
        [
          "line 3: the JSON list breaks off here, after entry 1 (a ',' or ']' is missing, or "
            + "the file ends early)."
        ]
      ),
      (
        "[" + good + ",]",
        [
          "line 1: the JSON list breaks off here, after entry 1 (a ',' or ']' is missing, or the file ends early)."
        ]
      ),
      ("[" + good + "]\n[]", ["line 2: something follows the end of the JSON list (']')."]),
      (
        "[" + good.replacingOccurrences(of: #""email""#, with: #""is_active": "false", "email""#)
          + "]",
        [#"entry 1 (bob): is_active must be true or false (or 1 or 0), not "false"."#]
      ),
    ]
    for (text, problems) in cases {
      let (result, console) = importing(world, text, format: .django)
      #expect(throws: AccountsError.importInvalid(problems: problems.count)) { try result.get() }
      #expect(console.messages == problems, "\(text)")
    }
    #expect(try world.store.accountCount() == 1)
  }

  /// A CSV record whose quoted field spans lines is read as one record, its line breaks kept
  /// as `\n`; the entry is numbered by the record's first line.
  @Test func csvRecordOverLines() throws {
    let world = try World()
    try world.activateAlice()
    let note = (1...500).map { "line \($0), \"quoted\"" }.joined(separator: "\n")
      .replacingOccurrences(of: "\"", with: "\"\"")
    let text =
      "username,full_name,email,password_hash,note\nbob,Bob,b@example.org,\(hash),\"\(note)\"\n"
      + "BOB,Bob,b2@example.org,\(hash),\n"
    let (result, console) = importing(world, text)
    #expect(throws: AccountsError.importInvalid(problems: 1)) { try result.get() }
    #expect(console.messages == ["line 502 (BOB): user name BOB is also on line 2."])
    #expect(ImportTests.fields("a,\"b\nc\",d") == ["a", "b\nc", "d"])
  }

  /// A stored crypt(3) hash over its scheme's ceiling is damaged at login: the generic
  /// refusal, the failure counted, the audit detail naming the cost (libxcrypt is not asked).
  @Test func cryptHashOverTheCeilingIsDamaged() throws {
    let world = try World()
    try world.activateAlice()
    let (imported, _) = importing(
      world, "username,full_name,email,password_hash\nbob,Bob,b@example.org,\(hash)\n")
    _ = try imported.get()
    // `mkpasswd -m bcrypt -R 18 'correct horse battery staple'`.
    let costly = "$2b$18$2JfQ5CrQD4bcgFBPWtXVheMJGeOyaesm9YWJwSKe/hutoIROUbVae"
    try world.store.write { writer throws(AccountsError) in
      guard var bob = try writer.account(key: "bob") else { return }
      bob.passwordHash = costly
      try writer.update(bob)
    }
    let (result, _) = world.login("bob", "correct horse battery staple")
    #expect(throws: AccountsError.invalidCredentials) { try result.get() }
    let last = try #require(try world.store.auditEvents().last)
    #expect(last.kind == .loginFailure)
    #expect(
      last.detail
        == "the stored password hash is over the cost ceiling (a bcrypt hash with cost 18; the "
        + "ceiling is cost 17), so it was not checked")
    #expect(try world.store.loginRecord(usernameKey: "bob").tally.failures == 1)
  }

  /// A Django entry or a csv record longer than 1 MiB is a problem on its entry or line; the
  /// reading goes on after it.
  @Test func overlongEntriesAndRecords() throws {
    let world = try World()
    try world.activateAlice()
    let long = String(repeating: "x", count: (1 << 20) + 10)
    let good =
      #"{"model": "auth.user", "fields": {"username": "bob", "password": "\#(hash)", "email": "b@example.org"}}"#
    let json =
      "[\n" + #"{"model": "auth.user", "fields": {"first_name": "\#(long)"}}"# + ",\n" + good + "]"
    let (django, djangoConsole) = importing(world, json)
    #expect(throws: AccountsError.importInvalid(problems: 1)) { try django.get() }
    #expect(
      djangoConsole.messages == ["entry 1: the entry starting on line 2 is longer than 1 MiB."])
    let csv =
      "username,full_name,email,password_hash,note\ncarl,Carl,c@example.org,\(hash),\"\(long)\n\"\n"
      + "dora,Dora,d@example.org,\(hash),\n"
    let (records, csvConsole) = importing(world, csv)
    #expect(throws: AccountsError.importInvalid(problems: 1)) { try records.get() }
    #expect(csvConsole.messages == ["line 2: the record is longer than 1 MiB."])
  }
}
