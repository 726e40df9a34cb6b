import AccountsCore
import AccountsCrypto
import AccountsStore
import AccountsTestSupport
import Foundation
import GRDB
import Testing

let password = "correct horse battery staple"
let start = Date(timeIntervalSince1970: 1_800_000_000)
let gmt = TimeZone(identifier: "GMT") ?? .current

/// A test clock that moves only when told.
final class TestClock: @unchecked Sendable {
  var now = start
  func advance(_ seconds: TimeInterval) { now += seconds }
}

/// An in-memory world: store, clock, fast hasher.
struct World {
  let store: SQLiteStore
  let clock = TestClock()
  var hasher = PasswordHasher(iterations: 1000)
  var blocklist: PasswordBlocklist?
  /// This client's session file, shared by every flow of the world.
  let sessions = MemorySessionKeeper()
  /// The key file beside the database.
  let keys = MemorySealingKeyStore()
  var sessionPolicy = SessionPolicy.standard

  init() throws {
    store = try SQLiteStore.inMemory()
  }

  func environment(_ console: ScriptedConsole) -> AccountsEnvironment {
    AccountsEnvironment(
      console: console, store: store, now: { [clock] in clock.now }, hasher: hasher,
      blocklist: blocklist, sessions: sessions, keys: keys, sessionPolicy: sessionPolicy)
  }

  /// Activates alice through the flow, from a pipe.
  func activateAlice(fullName: String = "Alice Liddell", secret: String = password) throws {
    let console = ScriptedConsole([secret])
    try ActivationFlow.run(
      environment(console),
      options: ActivationOptions(
        username: "Alice", fullName: fullName, email: "alice@example.org",
        passwordFromStandardInput: true))
  }

  /// Logs in from a pipe; returns Home or the error, and what was said.
  func login(_ name: String, _ secret: String) -> (
    Result<HomeScreen, AccountsError>, ScriptedConsole
  ) {
    let console = ScriptedConsole([name, secret])
    let result = Result { () throws(AccountsError) in
      try LoginFlow.run(environment(console), options: LoginOptions())
    }
    return (result, console)
  }
}

@Suite("Activation form validation")
struct ValidationTests {
  func check(
    _ name: String = "alice", _ full: String = "Alice Liddell",
    mail: String = "alice@example.org", first: String = password,
    second: String? = nil, blocklist: PasswordBlocklist? = nil
  ) -> String? {
    let form = ActivationForm(
      username: name, fullName: full, email: mail, password: first,
      passwordAgain: second ?? first)
    do {
      _ = try form.validate(blocklist: blocklist)
      return nil
    } catch {
      return error.description
    }
  }

  /// Empty and white-space-only fields come first, before the password match; the fixed
  /// message is followed by a line naming the empty fields.
  @Test func fillComesFirst() {
    let fill = "Please fill all fields!\n"
    #expect(check("") == fill + "Empty: User name.")
    #expect(check("alice", " \t ") == fill + "Empty: Full name.")
    #expect(
      check("alice", "Alice", mail: "", first: "a", second: "b") == fill + "Empty: E-mail address.")
    #expect(
      check("alice", "Alice", mail: "a@b.c", first: "   ", second: "   ")
        == fill + "Empty: Password, Password again.")
  }

  /// Different passwords come second, before any other rule.
  @Test func matchComesSecond() {
    #expect(
      check("bad name!", "A", mail: "nope", first: "short", second: "other")
        == "Passwords must match!")
    #expect(
      check("alice", "Alice", mail: "a@b.c", first: password, second: password + " ")
        == "Passwords must match!")
  }

  /// The same password typed as composed or decomposed characters matches (NFKC).
  @Test func matchAfterNormalization() {
    #expect(
      check(
        first: "caf\u{E9} au lait, s'il vous plait", second: "cafe\u{301} au lait, s'il vous plait")
        == nil)
  }

  /// User names: 1 to 64 letters, digits, `.`, `_`, `-`.
  @Test(arguments: [
    "a b", "alice!", "al@ce", String(repeating: "a", count: 65), "\u{202E}evil", "a\u{200B}b",
  ])
  func badUsernames(_ name: String) {
    let message = check(name)
    #expect(
      message == "User name must be 1 to 64 letters, digits, '.', '_' or '-'!"
        || message == "User name must not contain control or invisible formatting characters!")
  }

  /// Letters of any script, digits, dots, underscores and dashes are fine.
  @Test(arguments: ["alice", "Alice.Liddell_2-x", "Zoë", "李小龍", String(repeating: "a", count: 64)])
  func goodUsernames(_ name: String) {
    #expect(check(name) == nil)
  }

  /// E-mail: one @, a local part, a dotted domain, no spaces.
  @Test(arguments: [
    "alice", "alice@", "@example.org", "alice@example", "a@b@c.d", "a lice@x.org", "a@.org",
    "a@x..org",
  ])
  func badEmails(_ mail: String) {
    #expect(check(mail: mail) == "E-mail address must look like name@example.org, with no spaces!")
  }

  /// Each password rule, with its own sentence.
  @Test func passwordRules() {
    #expect(check(first: "fourteen chars") == "Password must be at least 15 characters!")
    #expect(
      check(first: String(repeating: "ab", count: 513))
        == "Password must be at most 1024 characters!")
    #expect(check(first: String(repeating: "xy", count: 512)) == nil)
    #expect(
      check("alicealicealice", first: "AliceAliceAlice")
        == "Password must not be your user name, full name or e-mail address!")
    #expect(
      check(first: "alice  liddell alice liddell")
        == "Password must not be your user name, full name or e-mail address!")
    #expect(
      check(first: "ALICE@example.org")
        == "Password must not be your user name, full name or e-mail address!")
    #expect(
      check(first: String(repeating: "z", count: 20))
        == "Password is too easy to guess: it is a repeat of a shorter pattern!")
    #expect(
      check(first: "12345678901234567890")
        == "Password is too easy to guess: it is a repeat of a shorter pattern!")
    #expect(
      check(first: "abcdefghijklmnopq")
        == "Password is too easy to guess: it is a run like 12345 or abcde!")
    #expect(
      check(first: "ZYXWVUTSRQPONMLKJ")
        == "Password is too easy to guess: it is a run like 12345 or abcde!")
  }

  /// No composition rules: a long lowercase phrase is fine.
  @Test func noCompositionRules() {
    #expect(check(first: "correct horse battery staple") == nil)
  }

  /// Length counts code points after NFKC: 15 characters typed as 19 code points make 15.
  @Test func lengthAfterNormalization() {
    let decomposed = "e\u{301}te\u{301} ro\u{302}ti cafe\u{301}s!"
    #expect(decomposed.unicodeScalars.count == 19)
    #expect(check(first: decomposed) == nil)
    let fourteen = String(repeating: "e\u{301}", count: 14)
    #expect(check(first: fourteen) == "Password must be at least 15 characters!")
  }

  /// The administrator's blocklist refuses its lines, ignoring case.
  @Test func blocklist() throws {
    let list = PasswordBlocklist(
      source: BlocklistText("first line ignored\nPassword123456789\r\nmonkey monkey monkey\n"))
    #expect(
      check(first: "password123456789", blocklist: list)
        == "Password is on the administrator's list of forbidden passwords!")
    #expect(
      check(first: "MONKEY MONKEY MONKEY", blocklist: list)
        == "Password is on the administrator's list of forbidden passwords!")
    #expect(check(first: password, blocklist: list) == nil)
    #expect(
      check(
        first: password,
        blocklist: PasswordBlocklist(
          source: BlocklistText(failing: .cannotOpen, path: "/nonexistent/list")))
        == "Cannot read the password blocklist /nonexistent/list: it cannot be opened.")
  }

  /// Bytes that are not UTF-8, and control characters, get a sentence naming the field.
  @Test func hostileBytes() {
    let form = ActivationForm(
      username: .text("alice"), fullName: FieldValue([0x41, 0xFF, 0x42]),
      email: .text("a@b.co"), password: .text(password), passwordAgain: .text(password))
    #expect(throws: AccountsError.invalidForm(.invalidUTF8(field: "Full name"))) {
      try form.validate(blocklist: nil)
    }
    #expect(
      check("alice", "Alice\u{1B}[31m")
        == "Full name must not contain control or invisible formatting characters!")
    #expect(
      check(first: "correct horse\u{0} battery")
        == "Password must not contain control or invisible formatting characters!")
  }
}

@Suite("User names")
struct UsernameTests {
  /// `Alice`, `alice`, `ALICE` and full-width `Ａｌｉｃｅ` are one user (RFC 8265 case mapping).
  @Test func caseAndWidthMapping() {
    let keys = ["Alice", "alice", "ALICE", "\u{FF21}\u{FF4C}\u{FF49}\u{FF43}\u{FF45}"].map(
      UsernameRules.key(for:))
    #expect(keys == ["alice", "alice", "alice", "alice"].map(Optional.some))
  }

  /// Keys are NFC: a decomposed accent gives the same key as the composed one.
  @Test func nfc() {
    #expect(UsernameRules.key(for: "Zoe\u{308}") == UsernameRules.key(for: "Zo\u{EB}"))
  }
}

@Suite("Activation flow")
struct ActivationFlowTests {
  /// From a pipe, the prompts are read in order and the user is stored with a Django hash.
  @Test func pipeActivation() throws {
    // Given a Public device
    let world = try World()
    let console = ScriptedConsole([
      "alice", "Alice Liddell", "alice@example.org", password, password,
    ])
    // When the form is filled from a pipe
    try ActivationFlow.run(world.environment(console), options: ActivationOptions())
    // Then the prompts came in order, and the user is stored, hashed
    #expect(
      console.prompts == [
        "User name: ", "Full name: ", "E-mail address: ", "(secret) Password: ",
        "(secret) Password again: ",
      ])
    #expect(console.outputs == ["Device activated for alice."])
    let user = try #require(try world.store.user())
    #expect(user.fullName == "Alice Liddell")
    #expect(user.passwordHash.hasPrefix("pbkdf2_sha256$1000$"))
    #expect(!user.passwordHash.contains(password))
    #expect(try world.store.status().state == .activated)
  }

  /// From a pipe, a failing form exits with its message and stores nothing.
  @Test func pipeFailureStoresNothing() throws {
    let world = try World()
    let console = ScriptedConsole([
      "alice", "Alice", "alice@example.org", password, "different one!",
    ])
    #expect(throws: AccountsError.invalidForm(.passwordsMustMatch)) {
      try ActivationFlow.run(world.environment(console), options: ActivationOptions())
    }
    #expect(try world.store.status().state == .publicState)
    #expect(try world.store.auditEvents(limit: nil).isEmpty)
  }

  /// End of input at any prompt cancels; nothing is stored.
  @Test(arguments: 0...4)
  func inputEnds(after lines: Int) throws {
    let world = try World()
    let all = ["alice", "Alice", "alice@example.org", password, password]
    let console = ScriptedConsole(Array(all.prefix(lines)), endsWith: [.endOfInput])
    #expect(throws: AccountsError.inputEnded(.form)) {
      try ActivationFlow.run(world.environment(console), options: ActivationOptions())
    }
    #expect(try world.store.status().state == .publicState)
  }

  /// At a terminal a failed form shows its message and asks again, typed values as defaults.
  @Test func terminalAsksAgain() throws {
    let world = try World()
    let console = ScriptedConsole(
      interactive: true,
      [
        "alice", "Alice Liddell", "alice@example.org", password, "typo", "", "", "", password,
        password,
      ])
    try ActivationFlow.run(world.environment(console), options: ActivationOptions())
    #expect(console.messages == [Messages.passwordRules, "Passwords must match!"])
    #expect(
      Array(console.prompts.suffix(5)) == [
        "User name [alice]: ", "Full name [Alice Liddell]: ",
        "E-mail address [alice@example.org]: ", "(secret) Password: ", "(secret) Password again: ",
      ])
    #expect(try world.store.user()?.email == "alice@example.org")
  }

  /// On an Activated device activation is refused before any prompt.
  @Test func alreadyActivated() throws {
    let world = try World()
    try world.activateAlice()
    let console = ScriptedConsole([])
    #expect(throws: AccountsError.alreadyActivated) {
      try ActivationFlow.run(world.environment(console), options: ActivationOptions())
    }
    #expect(AccountsError.alreadyActivated.description.contains("already activated"))
    #expect(console.prompts.isEmpty)
  }

  /// With flags and --password-stdin only the password is read, once.
  @Test func flagsAndPasswordStdin() throws {
    let world = try World()
    let console = ScriptedConsole([password])
    try ActivationFlow.run(
      world.environment(console),
      options: ActivationOptions(
        username: "bob", fullName: "Bob", email: "bob@example.org", passwordFromStandardInput: true)
    )
    #expect(console.prompts == ["(secret) Password: "])
    #expect(console.isExhausted)
  }
}

@Suite("Login")
struct LoginTests {
  /// The right password opens Home; the user name is case-insensitive.
  @Test func welcome() throws {
    let world = try World()
    try world.activateAlice()
    let (result, console) = world.login("ALICE", password)
    let home = try result.get()
    #expect(home.lines(timeZone: gmt) == ["Welcome back Alice Liddell!"])
    #expect(console.prompts == ["User name: ", "(secret) Password: "])
  }

  /// Login on a Public device says to activate first, before asking anything.
  @Test func publicDevice() throws {
    let world = try World()
    let (result, console) = world.login("alice", password)
    #expect(throws: AccountsError.notActivated) { try result.get() }
    #expect(AccountsError.notActivated.description.contains("accounts activate"))
    #expect(console.prompts.isEmpty)
  }

  /// A wrong password and an unknown name give the same error, messages and exit code.
  @Test func noEnumeration() throws {
    let world = try World()
    try world.activateAlice()
    let (wrong, wrongConsole) = world.login("alice", "not the password at all")
    let (unknown, unknownConsole) = world.login("mallory", "not the password at all")
    #expect(throws: AccountsError.invalidCredentials) { try wrong.get() }
    #expect(throws: AccountsError.invalidCredentials) { try unknown.get() }
    #expect(wrongConsole.messages == unknownConsole.messages)
    #expect(wrongConsole.outputs == unknownConsole.outputs)
    #expect(AccountsError.invalidCredentials.description == "Invalid user name or password!")
  }

  /// An unknown name costs the same PBKDF2 work as a wrong password (counted, not timed).
  @Test func sameWork() throws {
    var world = try World()
    let meter = WorkMeter()
    world.hasher = PasswordHasher(iterations: 5000, meter: meter)
    try world.activateAlice()
    let before = meter.iterations
    _ = world.login("alice", "not the password at all")
    let wrongPassword = meter.iterations - before
    _ = world.login("nobody-here", "not the password at all")
    let unknownName = meter.iterations - before - wrongPassword
    #expect(wrongPassword == 5000)
    #expect(unknownName == wrongPassword)
  }

  /// An unknown name costs what the current setting for new hashes costs when that is more
  /// than the owner's hash: an account made under today's setting cannot be told from an
  /// unknown name by its cost, and a weaker one is padded up to it.
  @Test func unknownNamesCostTheCurrentSetting() throws {
    var world = try World()
    world.hasher = PasswordHasher(iterations: 1000)
    try world.activateAlice()
    world.hasher = PasswordHasher(iterations: 5000)
    try world.addBob()
    let meter = WorkMeter()
    world.hasher = PasswordHasher(iterations: 5000, meter: meter)
    var costs: [String: Int] = [:]
    for name in ["alice", "bob", "nobody-here", "bad name"] {
      let before = meter.iterations
      #expect(throws: AccountsError.invalidCredentials) {
        try world.login(name, "not the password at all").0.get()
      }
      costs[name] = meter.iterations - before
    }
    #expect(costs == ["alice": 5000, "bob": 5000, "nobody-here": 5000, "bad name": 5000])
  }

  /// Five failures lock the name for a minute, even for the right password; unknown names too.
  @Test(arguments: ["alice", "mallory"])
  func lockout(_ name: String) throws {
    var world = try World()
    let meter = WorkMeter()
    world.hasher = PasswordHasher(iterations: 1000, meter: meter)
    try world.activateAlice()
    for _ in 1...4 {
      #expect(throws: AccountsError.invalidCredentials) {
        try world.login(name, "wrong wrong wrong").0.get()
      }
    }
    let (fifth, fifthConsole) = world.login(name, "wrong wrong wrong")
    #expect(fifth.exitStatus == .locked)
    #expect(fifthConsole.messages == ["Invalid user name or password!"])
    #expect(fifth.errorText.contains("Too many failed attempts"))
    #expect(fifth.errorText.contains("1 minute"))
    let work = meter.iterations
    let (sixth, _) = world.login(name, password)
    #expect(sixth.exitStatus == .locked)
    #expect(meter.iterations == work)  // the password was not checked
    world.clock.advance(61)
    if name == "alice" {
      let home = try world.login(name, password).0.get()
      #expect(home.failuresSince == 6)
    }
  }

  /// The second lock lasts two minutes.
  @Test func lockDoubles() throws {
    let world = try World()
    try world.activateAlice()
    for _ in 1...5 { _ = world.login("alice", "wrong wrong wrong") }
    world.clock.advance(60)
    for _ in 1...4 { _ = world.login("alice", "wrong wrong wrong") }
    let (locked, _) = world.login("alice", "wrong wrong wrong")
    #expect(locked.errorText.contains("2 minutes"))
    world.clock.advance(119)
    #expect(world.login("alice", password).0.exitStatus == .locked)
    world.clock.advance(1)
    #expect(world.login("alice", password).0.exitStatus == .success)
  }

  /// Unlock clears the lock at once.
  @Test func unlock() throws {
    let world = try World()
    try world.activateAlice()
    for _ in 1...5 { _ = world.login("alice", "wrong wrong wrong") }
    let console = ScriptedConsole([])
    let said = try UnlockFlow.run(world.environment(console), username: "ALICE")
    #expect(said == "Unlocked ALICE: its lock and failed-login count are cleared.")
    #expect(console.outputs == [said])
    #expect(world.login("alice", password).0.exitStatus == .success)
  }

  /// Home shows the previous login and the failures since, like Unix login.
  @Test func homeLines() throws {
    let world = try World()
    try world.activateAlice()
    _ = try world.login("alice", password).0.get()
    world.clock.advance(3600)
    _ = world.login("alice", "wrong wrong wrong")
    _ = world.login("alice", "wrong again wrong")
    let home = try world.login("alice", password).0.get()
    #expect(
      home.lines(timeZone: gmt) == [
        "Welcome back Alice Liddell!", "Last login: Fri Jan 15 08:00:00 GMT 2027",
        "2 failed attempts since your last login",
      ])
    // With no login before, the failures are counted since activation.
    let single = HomeScreen(fullName: "A", previousLogin: nil, failuresSince: 1)
    #expect(
      single.lines(timeZone: gmt) == ["Welcome back A!", "1 failed attempt since activation"])
  }

  /// A password typed decomposed logs in to one set composed (NFKC).
  @Test func normalizedPasswords() throws {
    let world = try World()
    try world.activateAlice(secret: "caf\u{E9} au lait, s'il vous pla\u{EE}t")
    #expect(
      world.login("alice", "cafe\u{301} au lait, s'il vous plai\u{302}t").0.exitStatus == .success)
  }

  /// A Django hash at 100,000 iterations logs in and is replaced by one at the current count.
  @Test func rehashOnLogin() throws {
    var world = try World()
    world.hasher = PasswordHasher(iterations: 200_000)
    try world.activateAlice()
    try replaceHash(world.store, with: PasswordHasherTestsData.djangoAt100k)
    #expect(world.login("alice", password).0.exitStatus == .success)
    let stored = try #require(try world.store.user())
    let upgraded = try #require(EncodedPasswordHash(parsing: stored.passwordHash))
    #expect(upgraded.iterations == 200_000)
    #expect(upgraded.salt != "seasalt2024abcdefghij")
    #expect(world.login("alice", password).0.exitStatus == .success)
  }

  /// A failure to write the new hash never fails the login.
  @Test func rehashFailureIsHarmless() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("core-\(UUID())")
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("a.sqlite3").path
    let store = try #require(try SQLiteStore.open(path: path, access: .readWrite))
    let console = ScriptedConsole([password])
    let env = AccountsEnvironment(
      console: console, store: store, hasher: PasswordHasher(iterations: 200_000))
    try ActivationFlow.run(
      env,
      options: ActivationOptions(
        username: "alice", fullName: "A", email: "a@b.co", passwordFromStandardInput: true))
    try DatabaseQueue(path: path).write { db in
      try db.execute(
        sql: "UPDATE account SET password_hash = ?",
        arguments: [PasswordHasherTestsData.djangoAt100k])
      try db.execute(
        sql:
          "CREATE TRIGGER no_rehash BEFORE UPDATE OF password_hash ON account BEGIN SELECT RAISE(ABORT, 'disk says no'); END"
      )
    }
    let loginConsole = ScriptedConsole(["alice", password])
    let home = try LoginFlow.run(
      AccountsEnvironment(
        console: loginConsole, store: store, hasher: PasswordHasher(iterations: 200_000)),
      options: LoginOptions())
    #expect(home.fullName == "A")
    #expect(try store.user()?.passwordHash == PasswordHasherTestsData.djangoAt100k)
  }

  /// Empty fields at login get the fill message and record nothing.
  @Test func emptyLogin() throws {
    let world = try World()
    try world.activateAlice()
    #expect(throws: AccountsError.incompleteForm(empty: ["User name"])) {
      try world.login("  ", password).0.get()
    }
    #expect(try world.store.auditEvents(limit: nil).map(\.kind) == [.activation])
  }

  /// The work of a failed login is the stored hash's count, never the count configured for new
  /// hashes: unknown name, wrong password and impossible name all cost 5,000 iterations while
  /// the environment says 1,000.
  @Test func failedLoginsCostTheStoredCount() throws {
    var world = try World()
    let meter = WorkMeter()
    world.hasher = PasswordHasher(iterations: 1000, meter: meter)
    try storeAlice(world, iterations: 5000)
    var costs: [String: Int] = [:]
    for name in ["alice", "mallory", String(repeating: "x", count: 100), "bad name"] {
      let before = meter.iterations
      #expect(throws: AccountsError.invalidCredentials) {
        try world.login(name, "not the password at all").0.get()
      }
      costs[name] = meter.iterations - before
    }
    #expect(Set(costs.values) == [5000], "\(costs)")
  }

  /// A stored hash with an absurd count (2^31-1) is damaged: the usual answer at the usual
  /// cost (no ten-minute stall), and the audit log says why.
  @Test func absurdIterationCountIsDamaged() throws {
    var world = try World()
    let meter = WorkMeter()
    world.hasher = PasswordHasher(iterations: 1000, meter: meter)
    let key = "3Q6E4Qp/G0I5J9J2R4mJJrIndvJqPudUFstuQzBTD5E="
    try storeAlice(world, iterations: 1000, hash: "pbkdf2_sha256$2147483647$salt$\(key)")
    #expect(throws: AccountsError.invalidCredentials) {
      try world.login("alice", password).0.get()
    }
    #expect(meter.iterations == PasswordHasher.defaultIterations)
    let last = try #require(try world.store.auditEvents(limit: 1).first)
    #expect(last.kind == .loginFailure)
    #expect(last.detail?.contains("stored password hash is damaged") == true)
  }

  /// A name that can never be valid is answered like any wrong login, but nothing is written:
  /// no 8,000-character names in the database.
  @Test func impossibleNamesAreNotStored() throws {
    let world = try World()
    try world.activateAlice()
    let long = String(repeating: "n", count: 8000)
    for name in [long, "two words", "semi;colon"] {
      let (result, _) = world.login(name, "not the password at all")
      #expect(throws: AccountsError.invalidCredentials) { try result.get() }
    }
    #expect(try world.store.auditEvents(limit: nil).map(\.kind) == [.activation])
    #expect(throws: AccountsError.invalidForm(.usernameRule)) {
      try UnlockFlow.run(world.environment(ScriptedConsole([])), username: long)
    }
  }

  /// A locked name is told so right after the user name: the password is never asked (the
  /// scripted console fails the test if it is).
  @Test func lockedNameIsToldBeforeThePassword() throws {
    let world = try World()
    try world.activateAlice()
    for _ in 1...5 { _ = world.login("alice", "wrong wrong wrong") }
    let console = ScriptedConsole(["alice"])
    let result = Result { () throws(AccountsError) in
      try LoginFlow.run(world.environment(console), options: LoginOptions())
    }
    #expect(result.exitStatus == .locked)
    #expect(console.prompts == ["User name: "])
    #expect(try world.store.auditEvents(limit: 1).first?.detail == "locked")
  }

  /// The first login after activation counts failures "since activation".
  @Test func failuresSinceActivation() throws {
    let world = try World()
    try world.activateAlice()
    _ = world.login("alice", "wrong wrong wrong")
    let home = try world.login("alice", password).0.get()
    #expect(home.lines(timeZone: gmt).last == "1 failed attempt since activation")
  }

  /// The lockout arithmetic saturates at every extreme a stored value can take.
  @Test func lockoutArithmeticNeverTraps() {
    let policy = LockoutPolicy.standard
    for failures in [Int.min, -1, 0, 3, 4, Int.max - 1, Int.max] {
      for lockouts in [Int.min, -1, 0, 1, 40, Int.max] {
        let tally = ThrottleState(failures: failures, lockouts: lockouts, lockedUntil: nil)
        let (next, until) = policy.tally(afterFailure: tally, at: start)
        #expect(next.failures >= 0 && next.lockouts >= 0)
        if let until {
          let length = until.timeIntervalSince(start)
          #expect(length >= 60 && length <= 3600)
        }
      }
    }
    #expect(policy.duration(ofLock: Int.min) == 60)
    #expect(policy.duration(ofLock: Int.max) == 3600)
  }

  /// Stores alice with a hash made at `iterations`, whatever the world's hasher says.
  func storeAlice(_ world: World, iterations: Int, hash: String? = nil) throws {
    let made = try PasswordHasher().hash(
      password: password, salt: "abcdefghijklmnopqrstuv", iterations: iterations)
    try world.store.activate(
      NewAccount(
        username: "alice", usernameKey: "alice", fullName: "Alice Liddell",
        email: "alice@example.org", passwordHash: hash ?? made.description),
      at: start)
  }
}

enum PasswordHasherTestsData {
  /// Made by Django 5.2: PBKDF2PasswordHasher().encode("correct horse battery staple",
  /// "seasalt2024abcdefghij", 100000).
  static let djangoAt100k =
    "pbkdf2_sha256$100000$seasalt2024abcdefghij$n9OKb5gYvAGCxZx0dpKuHdDtudX7WwrUjnDpbmU9OhQ="
}

/// Replaces the stored hash through the store's own write path.
func replaceHash(_ store: SQLiteStore, with hash: String) throws {
  let key = try #require(try store.user()).usernameKey
  try store.updatePasswordHash(usernameKey: key, to: hash, at: start)
}

@Suite("Audit log")
struct AuditLogTests {
  /// Every kind of event is logged oldest first, with names as typed and never a secret.
  @Test func logHasNoSecrets() throws {
    let world = try World()
    try world.activateAlice()
    _ = world.login("ALICE", password)
    for _ in 1...5 { _ = world.login("alice", "wrong wrong wrong") }
    try UnlockFlow.run(world.environment(ScriptedConsole([])), username: "alice")
    try ResetFlow.run(world.environment(ScriptedConsole([])), confirmed: true)
    let events = try world.store.auditEvents(limit: nil)
    #expect(
      events.map(\.kind) == [
        .activation, .loginSuccess, .loginFailure, .loginFailure, .loginFailure, .loginFailure,
        .loginFailure, .lockout, .unlock, .reset,
      ])
    #expect(events[1].username == "ALICE")
    let text = events.map(AuditPresentation.line).joined(separator: "\n")
    let json = events.map(AuditPresentation.json).joined(separator: "\n")
    for secret in [password, "wrong wrong wrong", "pbkdf2"] {
      #expect(!text.contains(secret))
      #expect(!json.contains(secret))
    }
    #expect(events.map(\.id) == events.map(\.id).sorted())
  }

  /// Hostile names are shown escaped, never raw.
  @Test func escaping() {
    let event = AuditEvent(
      id: 1, occurredAt: start, kind: .loginFailure, username: "evil\u{1B}[2J\u{202E}", detail: nil)
    #expect(AuditPresentation.line(event).hasSuffix("evil\\u{1b}[2J\\u{202e}"))
    // JSON escapes invisible format characters too, so the line is safe at a terminal as it is.
    #expect(AuditPresentation.json(event).contains("\"user\":\"evil\\u001b[2J\\u202e\""))
    #expect(AuditPresentation.json(event).hasSuffix("\"detail\":null}"))
  }
}

@Suite("Reset and the whole flow")
struct ResetAndAppTests {
  /// Without a terminal and without --yes, reset refuses and changes nothing.
  @Test func resetNeedsConfirmation() throws {
    let world = try World()
    try world.activateAlice()
    #expect(throws: AccountsError.confirmationRequired(.reset)) {
      try ResetFlow.run(world.environment(ScriptedConsole([])), confirmed: false)
    }
    #expect(try world.store.status().state == .activated)
  }

  /// At a terminal the word must be typed; anything else cancels.
  @Test func resetConfirmation() throws {
    let world = try World()
    try world.activateAlice()
    #expect(throws: AccountsError.declined(.reset)) {
      try ResetFlow.run(
        world.environment(ScriptedConsole(interactive: true, ["yes"])), confirmed: false)
    }
    let console = ScriptedConsole(interactive: true, ["reset"])
    try ResetFlow.run(world.environment(console), confirmed: false)
    #expect(console.prompts == ["Type \"reset\" to confirm: "])
    #expect(console.outputs == ["Device reset: it is Public again and its accounts were deleted."])
    #expect(try world.store.status().state == .publicState)
    #expect(try world.store.user() == nil)
  }

  /// Bare `accounts` on a Public device: Activation → Form → Login → Home.
  @Test func wholeFlow() throws {
    let world = try World()
    let console = ScriptedConsole(
      interactive: true,
      ["", "alice", "Alice Liddell", "alice@example.org", password, password, "alice", password])
    let home = try AppFlow.run(world.environment(console))
    #expect(home.fullName == "Alice Liddell")
    #expect(
      console.messages == [
        "This device is not activated yet.", Messages.passwordRules, "Log in to continue.",
      ])
    #expect(console.prompts.first == "Activate now? [Y/n] ")
    #expect(console.prompts.suffix(2) == ["User name: ", "(secret) Password: "])
  }

  /// Answering no at the Activation screen stores nothing.
  @Test func declineActivation() throws {
    let world = try World()
    #expect(throws: AccountsError.declined(.activation)) {
      try AppFlow.run(world.environment(ScriptedConsole(interactive: true, ["n"])))
    }
    #expect(try world.store.status().state == .publicState)
  }

  /// At a terminal the flow gives three login attempts.
  @Test func threeAttempts() throws {
    let world = try World()
    try world.activateAlice()
    let console = ScriptedConsole(
      interactive: true,
      ["alice", "wrong wrong wrong", "alice", "wrong again wrong", "alice", password])
    let home = try AppFlow.run(world.environment(console))
    #expect(home.failuresSince == 2)
    #expect(
      console.messages == ["Invalid user name or password!", "Invalid user name or password!"])
  }

  /// End of input says what really happened at each place: after activation the device stays
  /// activated, at the reset confirmation nothing is deleted, at the first question nothing is
  /// stored.
  @Test func endOfInputSaysWhatHappened() throws {
    let world = try World()
    let bare = ScriptedConsole(
      interactive: true,
      ["", "alice", "Alice Liddell", "alice@example.org", password, password],
      endsWith: [.endOfInput])
    #expect(throws: AccountsError.inputEnded(.loginAfterActivation(username: "alice"))) {
      try AppFlow.run(world.environment(bare))
    }
    #expect(try world.store.status().state == .activated)
    #expect(
      AccountsError.inputEnded(.loginAfterActivation(username: "alice")).description
        == "Input ended before the login; the device stays activated for alice. Run "
        + "`accounts login` to log in.")
    let reset = ScriptedConsole(interactive: true, [], endsWith: [.endOfInput])
    #expect(throws: AccountsError.inputEnded(.resetConfirmation)) {
      try ResetFlow.run(world.environment(reset), confirmed: false)
    }
    #expect(try world.store.status().state == .activated)
    let question = ScriptedConsole(interactive: true, [], endsWith: [.endOfInput])
    let publicWorld = try World()
    #expect(throws: AccountsError.inputEnded(.activationQuestion)) {
      try AppFlow.run(publicWorld.environment(question))
    }
  }
}

extension Result where Failure == AccountsError {
  var exitStatus: AccountsCore.ExitStatus {
    switch self {
    case .success: return .success
    case .failure(let error): return error.exitStatus
    }
  }

  var errorText: String {
    if case .failure(let error) = self { return error.description }
    return ""
  }
}
