import AccountsCore
import AccountsTestSupport
import Foundation
import Testing

/// What `pam_accounts.so`'s stages write to the log an administrator reads: a login its auth
/// did not log (a key login), the account stage's refusals, the factors of its own logins, and
/// where a password changed through it came from.
@Suite("pam_accounts.so in the audit log")
struct PamModuleLogTests {
  let world: World

  init() throws {
    world = try World()
    try world.activateAlice()
  }

  func run(_ stage: PamStage, _ request: PamModuleRequest, _ answers: [PamAnswer] = [])
    -> PamVerdict
  {
    let conversation = ScriptedConversation(answers)
    return PamModuleFlow.run(
      world.environment(ScriptedConsole([])), stage: stage, request: request,
      conversation: conversation)
  }

  func sshd(_ login: PamSessionLogin?, groups: [String] = [], user: String = "Alice")
    -> PamModuleRequest
  {
    PamModuleRequest(
      username: user, service: "sshd", remoteHost: "203.0.113.5", tty: "ssh",
      allowedGroups: groups, sessionLogin: login)
  }

  func events() throws -> [String] {
    try world.store.auditEvents().filter { $0.kind != .activation }.map {
      "\($0.kind.rawValue): \($0.detail ?? "-")"
    }
  }

  /// A session the module's auth did not start is a login: logged with how and where from
  /// before the session itself, and the account's last login set.
  @Test func keyLoginIsALogin() throws {
    // Given an account that never logged in
    #expect(try world.store.account(key: "alice")?.lastLoginAt == nil)
    // When sshd's key login runs the account stage, then opens the session
    #expect(run(.account, sshd(nil)) == .success)
    #expect(run(.openSession, sshd(.sshKey)) == .success)
    // Then one login, with the method, service and remote host, and its time as last login
    let origin = "pam service=sshd rhost=203.0.113.5 tty=ssh"
    #expect(
      try events() == ["login_success: ssh-key; \(origin)", "pam_session_opened: \(origin)"])
    #expect(try world.store.account(key: "alice")?.lastLoginAt == world.clock.now)
  }

  /// Another service's session without the module's auth (root's `su`) says so; the account
  /// stage alone, and a session the module's auth started, log no login.
  @Test func onlyASessionWithoutAuthIsALogin() throws {
    let su = PamModuleRequest(username: "Alice", service: "su", tty: "pts/1")
    #expect(run(.account, su) == .success)
    #expect(try events() == [])
    var withSession = su
    withSession.sessionLogin = .pamSession
    #expect(run(.openSession, withSession) == .success)
    #expect(run(.openSession, su) == .success)
    #expect(
      try events() == [
        "login_success: pam-session; pam service=su tty=pts/1",
        "pam_session_opened: pam service=su tty=pts/1",
        "pam_session_opened: pam service=su tty=pts/1",
      ])
  }

  /// The account stage's refusals are logged as `access_refused` with the reason and where
  /// from, and no tally counts them.
  @Test func refusalsAreLoggedNotCounted() throws {
    #expect(run(.account, sshd(nil, groups: ["wheel"])) == .permissionDenied)
    try UserStateFlow.run(world.environment(ScriptedConsole([])), username: "Alice", disabled: true)
    #expect(run(.account, sshd(nil)) == .accountExpired)
    let origin = "pam service=sshd rhost=203.0.113.5 tty=ssh"
    #expect(
      try events().filter { $0.hasPrefix("access_refused") } == [
        "access_refused: in none of the allowed groups; \(origin)",
        "access_refused: account disabled; \(origin)",
      ])
    #expect(try world.store.tally(key: "alice").failures == 0)
    // A disabled account's session is no login.
    #expect(run(.openSession, sshd(.sshKey)) == .success)
    #expect(try events().filter { $0.hasPrefix("login_success") } == [])
  }

  /// The module's own auth logs which factors it passed.
  @Test func authSaysItsFactors() throws {
    let request = PamModuleRequest(username: "Alice", service: "login", tty: "tty1")
    #expect(run(.auth, request, [typed(password)]) == .success)
    #expect(try events() == ["login_success: password; pam service=login tty=tty1"])
  }

  /// A password changed through the password stage, by choice or because it had to change, is
  /// logged with where it came from, as a login is; one changed with `accounts passwd` is not.
  @Test func passwordChangeSaysWhereFrom() throws {
    // Given a password that must change
    let first = "a brand new passphrase for alice"
    let second = "another new passphrase for alice"
    let third = "yet another passphrase for alice"
    try UserPasswordFlow.run(
      world.environment(ScriptedConsole([first])), username: "Alice",
      passwordFromStandardInput: true, mustChange: true)
    // When sshd's forced change, then `passwd` at a terminal, then `accounts passwd` change it
    var forced = sshd(nil)
    forced.expiredOnly = true
    forced.authenticated = true
    #expect(run(.password, forced, [typed(first), typed(second), typed(second)]) == .success)
    let passwd = PamModuleRequest(username: "Alice", service: "passwd", tty: "pts/2")
    #expect(run(.password, passwd, [typed(second), typed(third), typed(third)]) == .success)
    try PasswordChangeFlow.run(
      world.environment(ScriptedConsole(["Alice", third, password, password])), username: nil)
    // Then each PAM change names its service and terminal, and the program's change nothing
    #expect(
      try events().filter { $0.hasPrefix("password_changed") } == [
        "password_changed: pam service=sshd rhost=203.0.113.5 tty=ssh",
        "password_changed: pam service=passwd tty=pts/2", "password_changed: -",
      ])
  }
}
