import AccountsCore
import AccountsCrypto
import AccountsStore
import AccountsTestSupport
import Foundation
import Testing

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
    #expect(
      AuditPresentation.json(event).hasSuffix("\"detail\":null,\"host\":null,\"offline\":false}"))
  }

  /// Every event a flow writes carries the environment's host, the session it starts too,
  /// without the flow naming it; `log --host` finds them.
  @Test func flowsRecordTheHost() throws {
    let world = try World()
    var env = world.environment(ScriptedConsole([password]))
    env.writingHost = "host-1"
    try ActivationFlow.run(
      env,
      options: ActivationOptions(
        username: "Alice", fullName: "Alice Liddell", email: "alice@example.org",
        passwordFromStandardInput: true))
    var other = world.environment(ScriptedConsole(["alice", password]))
    other.writingHost = "host-2"
    _ = try LoginFlow.run(other, options: LoginOptions())
    _ = world.login("alice", "wrong wrong wrong")
    let events = try world.store.auditEvents()
    #expect(events.map(\.host) == ["host-1", "host-2", nil])
    let hosts = try world.store.read { reader throws(AccountsError) -> [String?] in
      var hosts: [String?] = []
      try reader.forEachSession(accountID: nil, liveAt: start) { hosts.append($0.session.host) }
      return hosts
    }
    #expect(hosts == ["host-2"])
    var found: [AuditEventKind] = []
    try AuditLogQuery.run(
      env,
      query: AuditLogQuery.query(
        user: nil, event: nil, since: nil, host: "host-2", limit: nil, now: start)
    ) { found.append($0.kind) }
    #expect(found == [.loginSuccess])
  }

  /// The host ends a log line as `on <host>` and is the JSON's key before `offline` (null when
  /// the event has none).
  @Test func hostShown() {
    let event = AuditEvent(
      id: 1, occurredAt: start, kind: .loginSuccess, username: "alice", detail: "pam",
      host: "host-1")
    #expect(
      AuditPresentation.line(event)
        == "2027-01-15T08:00:00.000Z  login_success     alice  (pam)  on host-1")
    #expect(
      AuditPresentation.json(event)
        == #"{"time":"2027-01-15T08:00:00.000Z","event":"login_success","user":"alice","#
        + #""detail":"pam","host":"host-1","offline":false}"#)
  }

  /// `ACCOUNTS_HOST_NAME` wins over the node name when set; empty counts as unset; a name of
  /// more than 253 bytes, with a space or a control character is refused (exit 2); a node name
  /// that breaks the rule records no host.
  @Test func hostNameSetting() throws {
    #expect(try WritingHost.named(setting: "box-7", nodeName: "node") == "box-7")
    #expect(try WritingHost.named(setting: nil, nodeName: "node") == "node")
    #expect(try WritingHost.named(setting: "", nodeName: "node") == "node")
    #expect(try WritingHost.named(setting: "hôte", nodeName: nil) == "hôte")
    #expect(
      try WritingHost.named(setting: String(repeating: "h", count: 253), nodeName: nil) != nil)
    #expect(try WritingHost.named(setting: nil, nodeName: "bad\u{7}node") == nil)
    for bad in [String(repeating: "h", count: 254), "a b", "a\tb", "a\u{1b}b", "a\u{202e}b"] {
      #expect(throws: AccountsError.self) { try WritingHost.named(setting: bad, nodeName: "n") }
      do {
        _ = try WritingHost.named(setting: bad, nodeName: "n")
      } catch {
        #expect(error.exitStatus == .usage)
        #expect(error.description.hasPrefix("ACCOUNTS_HOST_NAME must be a host name of 1 to 253"))
      }
    }
  }
}
