import AccountsCore
import AccountsCrypto
import AccountsStore
import AccountsTestSupport
import Foundation
import Testing

/// Shorthands for the session and second-factor tests.
extension World {
  /// Logs alice in from a pipe; returns Home and what was said (a failure is recorded).
  @discardableResult
  func loginAlice(code: String? = nil, startsSession: Bool = true) throws(AccountsError)
    -> (HomeScreen, ScriptedConsole)
  {
    let console = ScriptedConsole(["alice", password] + (code.map { [$0] } ?? []))
    let home = try LoginFlow.run(
      environment(console), options: LoginOptions(startsSession: startsSession))
    return (home, console)
  }

  /// The live sessions, in id order.
  func liveSessions() throws -> [SessionListing] {
    var listings: [SessionListing] = []
    try SessionAdminFlow.list(environment(ScriptedConsole([])), username: nil) {
      listings.append($0)
    }
    return listings
  }

  /// Every session row, live or not.
  func sessionRows() throws -> Int {
    try store.read { reader throws(AccountsError) in
      var count = 0
      try reader.forEachSession(accountID: nil, liveAt: .distantPast) { _ in count += 1 }
      return count
    }
  }

  /// Adds bob (an administrator's `user add`).
  func addBob() throws {
    try UserAddFlow.run(
      environment(ScriptedConsole([password])),
      options: ActivationOptions(
        username: "bob", fullName: "Bob Stone", email: "bob@example.org",
        passwordFromStandardInput: true))
  }
}

@Suite("Sessions")
struct SessionFlowTests {
  /// A login stores the token's SHA-256 (never the token) and the client keeps the token;
  /// the session lasts 24 hours, 1 hour idle.
  @Test func loginStartsASession() throws {
    // Given an activated device
    let world = try World()
    try world.activateAlice()
    // When alice logs in
    try world.loginAlice()
    // Then the client holds a 32-byte token whose hash names a live session of hers
    let saved = try #require(world.sessions.saved)
    #expect(saved.token.count == 32)
    #expect(saved.database == world.store.location)
    let hash = try SHA256.hash(saved.token)
    let session = try #require(
      try world.store.read { reader throws(AccountsError) in try reader.session(tokenHash: hash) })
    #expect(session.createdAt == start)
    #expect(session.expiresAt == start + 24 * 3600)
    #expect(session.idleUntil == start + 3600)
    #expect(session.idleSeconds == 3600)
    #expect(
      try world.store.read { reader throws(AccountsError) in
        try reader.session(tokenHash: saved.token)
      } == nil)
  }

  /// Each login makes a new token and ends the session this client held before.
  @Test func aNewTokenAtEveryLogin() throws {
    let world = try World()
    try world.activateAlice()
    try world.loginAlice()
    let first = try #require(world.sessions.saved)
    world.clock.advance(5)
    try world.loginAlice()
    let second = try #require(world.sessions.saved)
    #expect(first.token != second.token)
    #expect(try world.sessionRows() == 1)
  }

  /// `--no-session`: checked and recorded, no session on either side.
  @Test func noSession() throws {
    let world = try World()
    try world.activateAlice()
    try world.loginAlice(startsSession: false)
    #expect(world.sessions.saved == nil)
    #expect(try world.sessionRows() == 0)
  }

  /// The bare flow with a live session goes straight to Home, asking nothing.
  @Test func bareFlowResumes() throws {
    let world = try World()
    try world.activateAlice()
    try world.loginAlice()
    world.clock.advance(120)
    let console = ScriptedConsole([])
    let home = try AppFlow.run(world.environment(console))
    #expect(home.fullName == "Alice Liddell")
    #expect(console.prompts.isEmpty)
    // And its use was recorded: the idle end moved.
    #expect(try world.liveSessions().first?.session.idleUntil == start + 120 + 3600)
  }

  /// The last use is written at most once a minute.
  @Test func lastSeenAtMostOnceAMinute() throws {
    let world = try World()
    try world.activateAlice()
    try world.loginAlice()
    world.clock.advance(59)
    _ = try SessionFlow.whoami(world.environment(ScriptedConsole([])))
    #expect(try world.liveSessions().first?.session.lastSeenAt == start)
    world.clock.advance(1)
    _ = try SessionFlow.whoami(world.environment(ScriptedConsole([])))
    #expect(try world.liveSessions().first?.session.lastSeenAt == start + 60)
  }

  /// An hour without use ends it: whoami says not logged in, the bare flow asks to log in,
  /// and both sides forget it.
  @Test func idleTimeout() throws {
    let world = try World()
    try world.activateAlice()
    try world.loginAlice()
    world.clock.advance(3600)
    #expect(throws: AccountsError.notLoggedIn) {
      try SessionFlow.whoami(world.environment(ScriptedConsole([])))
    }
    #expect(world.sessions.saved == nil)
    #expect(try world.sessionRows() == 0)
    let console = ScriptedConsole(["alice", password])
    _ = try AppFlow.run(world.environment(console))
    #expect(console.prompts == ["User name: ", "(secret) Password: "])
  }

  /// Used every 50 minutes, it still ends 24 hours after the login.
  @Test func absoluteTimeout() throws {
    let world = try World()
    try world.activateAlice()
    try world.loginAlice()
    for _ in 0..<28 {
      world.clock.advance(50 * 60)
      _ = try SessionFlow.whoami(world.environment(ScriptedConsole([])))
    }
    world.clock.advance(24 * 3600 - 28 * 50 * 60)
    #expect(throws: AccountsError.notLoggedIn) {
      try SessionFlow.whoami(world.environment(ScriptedConsole([])))
    }
  }

  /// Lower settings are stored in the session.
  @Test func lowerSettings() throws {
    var world = try World()
    world.sessionPolicy = SessionPolicy(lifetime: 2 * 3600, idle: 600)
    try world.activateAlice()
    try world.loginAlice()
    let session = try #require(try world.liveSessions().first?.session)
    #expect(session.expiresAt == start + 7200)
    #expect(session.idleUntil == start + 600)
    world.clock.advance(600)
    #expect(try world.liveSessions().isEmpty)
  }

  /// logout ends this session on both sides and logs it; logout again is refused.
  @Test func logout() throws {
    let world = try World()
    try world.activateAlice()
    try world.loginAlice()
    #expect(try SessionFlow.logout(world.environment(ScriptedConsole([])), all: false) == 1)
    #expect(world.sessions.saved == nil)
    #expect(try world.sessionRows() == 0)
    #expect(try world.store.auditEvents().last?.kind == .logout)
    #expect(throws: AccountsError.notLoggedIn) {
      try SessionFlow.logout(world.environment(ScriptedConsole([])), all: false)
    }
  }

  /// logout --all ends every session of the account, and only its.
  @Test func logoutAll() throws {
    let world = try World()
    try world.activateAlice()
    try world.addBob()
    for _ in 0..<2 {
      try world.loginAlice()
      world.sessions.saved = nil
    }
    let bob = ScriptedConsole(["bob", password])
    _ = try LoginFlow.run(world.environment(bob), options: LoginOptions())
    world.sessions.saved = nil
    try world.loginAlice()
    #expect(try world.liveSessions().count == 4)
    #expect(try SessionFlow.logout(world.environment(ScriptedConsole([])), all: true) == 3)
    #expect(try world.liveSessions().map(\.username) == ["bob"])
  }

  /// A session file of another database is not a login here, and is left alone.
  @Test func otherDatabase() throws {
    let world = try World()
    try world.activateAlice()
    try world.loginAlice()
    let saved = try #require(world.sessions.saved)
    world.sessions.saved = SavedSession(database: "/elsewhere.sqlite3", token: saved.token)
    #expect(throws: AccountsError.notLoggedIn) {
      try SessionFlow.whoami(world.environment(ScriptedConsole([])))
    }
    #expect(world.sessions.saved?.database == "/elsewhere.sqlite3")
  }

  /// passwd ends the account's other sessions and keeps this client's.
  @Test func passwordChangeEndsOtherSessions() throws {
    let world = try World()
    try world.activateAlice()
    try world.loginAlice()
    world.sessions.saved = nil
    try world.loginAlice()
    let mine = try #require(world.sessions.saved)
    let newPassword = "a different long passphrase here"
    try PasswordChangeFlow.run(
      world.environment(ScriptedConsole([password, newPassword, newPassword])),
      username: "alice")
    #expect(try world.liveSessions().count == 1)
    #expect(world.sessions.saved == mine)
    _ = try SessionFlow.whoami(world.environment(ScriptedConsole([])))
  }

  /// An administrator's new password, a disabled account, a removal and a reset end every
  /// session of the account.
  @Test(arguments: ["passwd", "disable", "remove", "reset"])
  func administratorChangesEndSessions(_ change: String) throws {
    let world = try World()
    try world.activateAlice()
    try world.addBob()
    let bob = ScriptedConsole(["bob", password])
    _ = try LoginFlow.run(world.environment(bob), options: LoginOptions())
    #expect(try world.liveSessions().count == 1)
    let env = world.environment(ScriptedConsole(["another long passphrase ok"]))
    switch change {
    case "passwd":
      try UserPasswordFlow.run(
        env, username: "bob", passwordFromStandardInput: true, mustChange: false)
    case "disable": try UserStateFlow.run(env, username: "bob", disabled: true)
    case "remove": try UserRemoveFlow.run(env, username: "bob", confirmed: true)
    default: try ResetFlow.run(env, confirmed: true)
    }
    #expect(try world.sessionRows() == 0)
    #expect(throws: AccountsError.notLoggedIn) {
      try SessionFlow.whoami(world.environment(ScriptedConsole([])))
    }
  }

  /// session revoke: one by id (logged), an unknown id refused, all of an account by name.
  @Test func revoke() throws {
    let world = try World()
    try world.activateAlice()
    try world.loginAlice()
    world.sessions.saved = nil
    try world.loginAlice()
    let ids = try world.liveSessions().map(\.session.id)
    let env = world.environment(ScriptedConsole([]))
    #expect(try SessionAdminFlow.revoke(env, id: ids[0]) == "Session \(ids[0]) of Alice ended.")
    #expect(throws: AccountsError.noSuchSession(ids[0])) {
      try SessionAdminFlow.revoke(env, id: ids[0])
    }
    #expect(try SessionAdminFlow.revoke(env, username: "ALICE") == "Ended 1 session of Alice.")
    #expect(try world.liveSessions().isEmpty)
    #expect(
      try world.store.auditEvents().suffix(2).map(\.kind) == [.sessionRevoked, .sessionRevoked])
  }

  /// The session file cannot be written: the login fails and its session is ended again.
  @Test func unwritableSessionFileLeavesNoSession() throws {
    final class FailingKeeper: SessionKeeper {
      let location = "/nowhere/session"
      func load() -> SavedSession? { nil }
      func save(_ session: SavedSession) throws(AccountsError) {
        throw .clientFile(.unusable(.sessionFile, path: location, reason: "disk full"))
      }
      func remove() {}
    }
    let world = try World()
    try world.activateAlice()
    let env = AccountsEnvironment(
      console: ScriptedConsole(["alice", password]), store: world.store,
      now: { [clock = world.clock] in clock.now }, hasher: world.hasher,
      sessions: FailingKeeper())
    #expect(throws: AccountsError.self) { try LoginFlow.run(env, options: LoginOptions()) }
    #expect(try world.sessionRows() == 0)
  }
}
