import AccountsCore
import AccountsCrypto
import AccountsStore
import AccountsTestSupport
import Foundation
import Testing

/// The core's side of the outside review's findings (issue 8).
@Suite("Review fixes: login and flows")
struct ReviewFixesCoreTests {
  /// Stores alice with a hash made at `iterations`, whatever the world's hasher says.
  func storeAlice(_ world: World, iterations: Int, hash: String? = nil) throws {
    let made = try PasswordHasher().hash(
      password: password, salt: "abcdefghijklmnopqrstuv", iterations: iterations)
    try world.store.activate(
      NewUser(
        username: "alice", usernameKey: "alice", fullName: "Alice Liddell",
        email: "alice@example.org", passwordHash: hash ?? made.description),
      at: start)
  }

  /// The work of a failed login is the stored hash's count, never the count configured for new
  /// hashes: unknown name, wrong password and impossible name all cost 5,000 iterations while
  /// the environment says 1,000 (§4).
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
  /// cost (no ten-minute stall), and the audit log says why (§7).
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
  /// no 8,000-character names in the database (§10).
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
  /// scripted console fails the test if it is) (§18).
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

  /// End of input says what really happened at each place (§12).
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

  /// The first login after activation counts failures "since activation" (§13).
  @Test func failuresSinceActivation() throws {
    let world = try World()
    try world.activateAlice()
    _ = world.login("alice", "wrong wrong wrong")
    let home = try world.login("alice", password).0.get()
    #expect(home.lines(timeZone: gmt).last == "1 failed attempt since activation")
  }

  /// Every printed text passes one escaping path: escapes, bidirectional overrides and
  /// separators become visible, printable text is untouched, and escaping twice changes
  /// nothing (§5).
  @Test func escapingIsVisibleAndIdempotent() {
    let hostile = "Eve\u{1B}]0;pwned\u{07}\u{202E}\u{2028}\r\nend"
    let shown = Escaping.visible(hostile)
    #expect(shown == "Eve\\u{1b}]0;pwned\\u{7}\\u{202e}\\u{2028}\\u{d}\\u{a}end")
    #expect(Escaping.visible(shown) == shown)
    #expect(Escaping.visible("Zoë Ångström, C:\\x") == "Zoë Ångström, C:\\x")
    #expect(Escaping.unambiguous("a\\u{1b}") == "a\\\\u{1b}")
  }
}
