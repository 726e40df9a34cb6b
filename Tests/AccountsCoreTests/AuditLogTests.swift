import AccountsCore
import AccountsCrypto
import AccountsStore
import AccountsTestSupport
import Foundation
import GRDB
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
    #expect(AuditPresentation.json(event).hasSuffix("\"detail\":null}"))
  }
}
