import AccountsCore
import AccountsCrypto
import AccountsStore
import AccountsTestSupport
import Foundation
import Testing

@Suite("Account expiry")
struct ExpiryTests {
  /// alice, expiring `offset` seconds from the world's start.
  func aliceExpiring(in offset: TimeInterval) throws -> World {
    let world = try World()
    try world.activateAlice()
    let env = world.environment(ScriptedConsole([]))
    let at = Timestamp.string(from: start + offset)
    try UserEditFlow.run(
      env, username: "alice",
      edit: AccountEdit(expiry: try #require(AccountExpiry(parsing: at))))
    return world
  }

  /// The forms `--expires` takes, and what each means; anything else is nil.
  @Test func parsesItsForms() throws {
    #expect(AccountExpiry(parsing: "never") == .never)
    let day = try #require(Timestamp.date(from: "2026-12-31T00:00:00.000Z"))
    #expect(AccountExpiry(parsing: "2026-12-31") == .at(day))
    #expect(AccountExpiry(parsing: "2026-12-31T18:00:00Z") == .at(day + 18 * 3600))
    #expect(AccountExpiry(parsing: "2026-12-31T19:00:00.5+01:00") == .at(day + 18 * 3600 + 0.5))
    let evening = try #require(Timestamp.date(from: "2026-12-31T18:00:00.123Z"))
    #expect(AccountExpiry(parsing: "2026-12-31T12:00:00.123456-06:00") == .at(evening))
    for bad in [
      "", "Never", "tomorrow", "2026-02-30", "2026-12-31T18:00:00", "2026-12-31 18:00:00Z",
      "2026-12-31T25:00:00Z", "2026-12-31T18:00:00+1:00", "2026-12-31T18:00:00.Z", "31/12/2026",
      "2026-12-31T18:00:00+24:00",
    ] {
      #expect(AccountExpiry(parsing: bad) == nil, "\(bad)")
    }
  }

  /// Expired from the moment on, not a millisecond before (`expiresAt <= now`).
  @Test func expiresAtTheMoment() {
    let account = Account(
      id: 1, username: "a", usernameKey: "a", fullName: "A", email: "a@example.org",
      passwordHash: "x", isOwner: true, mustChangePassword: false, disabledAt: nil,
      createdAt: start, updatedAt: start, passwordChangedAt: start, lastLoginAt: nil,
      expiresAt: start)
    #expect(!account.isExpired(at: start - 0.001))
    #expect(account.isExpired(at: start))
    #expect(Messages.detailExpired == "account expired")
  }

  /// Before the moment the login works; from it on the right password gets the disabled
  /// account's answer, is counted and logged `account expired`.
  @Test func loginRefusedOnceExpired() throws {
    let world = try aliceExpiring(in: 60)
    try world.login("alice", password).0.get()
    world.clock.advance(60)
    let (result, console) = world.login("alice", password)
    #expect(throws: AccountsError.invalidCredentials) { try result.get() }
    #expect(console.outputs.isEmpty)
    let event = try #require(try world.store.auditEvents(limit: 1).first)
    #expect(event.kind == .loginFailure && event.detail == "account expired")
    #expect(try world.store.tally(key: "alice").failures == 1)
  }

  /// An expired account costs what a wrong password costs.
  @Test func sameWorkAsAWrongPassword() throws {
    var world = try World()
    let meter = WorkMeter()
    world.hasher = PasswordHasher(iterations: 5000, meter: meter)
    try world.activateAlice()
    try UserEditFlow.run(
      world.environment(ScriptedConsole([])), username: "alice",
      edit: AccountEdit(expiry: .at(start)))
    let before = meter.iterations
    _ = world.login("alice", password)
    let expired = meter.iterations - before
    _ = world.login("alice", "not the password at all")
    #expect(expired == meter.iterations - before - expired)
  }

  /// verify, passwd and pam-auth refuse an expired account as a wrong password.
  @Test func verifyPasswdAndPamRefuse() throws {
    let world = try aliceExpiring(in: -1)
    #expect(throws: AccountsError.invalidCredentials) {
      try VerifyFlow.run(world.environment(ScriptedConsole([password])), username: "alice")
    }
    let newPassword = "yet another long passphrase"
    #expect(throws: AccountsError.invalidCredentials) {
      try PasswordChangeFlow.run(
        world.environment(ScriptedConsole(["alice", password, newPassword, newPassword])),
        username: nil)
    }
    #expect(throws: AccountsError.invalidCredentials) {
      try PamAuthFlow.run(
        world.environment(ScriptedConsole([])),
        request: PamRequest(username: "Alice", secret: Array(password.utf8), service: "sshd"))
    }
    let details = try world.store.auditEvents(limit: 3).map(\.detail)
    #expect(details.allSatisfy { $0?.hasPrefix("account expired") == true }, "\(details)")
  }

  /// A login checked before the expiry but recorded after it is refused (the commit checks
  /// again), as is a session that outlives the account.
  @Test func commitChecksAgain() throws {
    let world = try aliceExpiring(in: 60)
    try world.login("alice", password).0.get()
    #expect(
      try SessionFlow.whoami(world.environment(ScriptedConsole([]))).account.username == "Alice")
    world.clock.advance(60)
    #expect(throws: AccountsError.notLoggedIn) {
      try SessionFlow.whoami(world.environment(ScriptedConsole([])))
    }
    let account = try #require(try world.store.account(key: "alice"))
    let outcome = try LoginRecorder.recordSuccess(
      world.store, username: "alice", usernameKey: "alice", at: world.clock.now,
      expected: account)
    #expect(outcome == .gone)
  }

  /// `never` clears an expiry; the edit is logged with what it set.
  @Test func neverClears() throws {
    let world = try aliceExpiring(in: -1)
    let said = try UserEditFlow.run(
      world.environment(ScriptedConsole([])), username: "alice",
      edit: AccountEdit(expiry: .never))
    #expect(said == ["Alice no longer expires."])
    try world.login("alice", password).0.get()
    let edits = try world.store.auditEvents().filter { $0.kind == .accountEdited }.map(\.detail)
    #expect(edits == ["expires 2027-01-15T07:59:59.000Z", "expires never"])
  }
}
