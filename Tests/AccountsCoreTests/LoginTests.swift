import AccountsCore
import AccountsCrypto
import AccountsTestSupport
import Foundation
import Testing

@testable import AccountsStore

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
