import AccountsCore
import AccountsCrypto
import AccountsStore
import AccountsTestSupport
import Foundation
import Testing

/// `pam-auth`'s check: the exact user name only, where root may be pointed, what the audit
/// detail keeps of the PAM items.
@Suite("pam-auth")
struct PamAuthFlowTests {
  /// Runs the check for `name` with `secret` in `world`.
  func check(_ world: World, _ name: String, _ secret: String = password) -> AccountsError? {
    do {
      try PamAuthFlow.run(
        world.environment(ScriptedConsole([])),
        request: PamRequest(username: name, secret: Array(secret.utf8), service: "sshd"))
      return nil
    } catch {
      return error
    }
  }

  /// pam_exec inputs and what is left of each as the secret.
  static let terminatorCases: [(input: [UInt8], expected: [UInt8])] = [
    (Array("pw\u{0}".utf8), Array("pw".utf8)),
    (Array("pw\r\n\u{0}".utf8), Array("pw".utf8)),
    (Array("pw\n".utf8), Array("pw".utf8)),
    (Array("pw\n\n".utf8), Array("pw\n".utf8)),
    (Array("p\u{0}w".utf8), Array("p\u{0}w".utf8)),
    (Array("pw ".utf8), Array("pw ".utf8)),
    ([0, 0], [0]),
    ([], []),
  ]

  /// What ends pam_exec's input and is no part of the password goes: one final NUL, then one
  /// newline and one carriage return; nothing else, and nothing in the middle.
  @Test(arguments: terminatorCases)
  func dropsTheTerminator(_ input: [UInt8], _ expected: [UInt8]) {
    var secret = input
    PamAuthFlow.dropTerminator(&secret)
    #expect(secret == expected)
  }

  /// Only the stored name (`Alice`) passes; another case, full-width letters, spaces around it
  /// or a decomposed form of a name are refused with the right password, as an unknown name
  /// is, and logged as one.
  @Test(arguments: ["alice", "ALICE", "Ａｌｉｃｅ", " Alice", "Alice ", "Alice\n"])
  func exactNameOnly(_ variant: String) throws {
    // Given alice, activated as `Alice`
    let world = try World()
    try world.activateAlice()
    // When PAM_USER is a variant of her name, then it is refused, and logged like an unknown one
    #expect(check(world, variant) == .invalidCredentials)
    #expect(check(world, "mallory") == .invalidCredentials)
    let events = try world.store.auditEvents(limit: 2)
    if try UsernameRules.key(for: variant) != nil {
      #expect(events.map(\.kind) == [.loginFailure, .loginFailure])
      #expect(events.map(\.detail) == [events[0].detail, events[0].detail])
      #expect(Set(events.compactMap(\.username)) == [variant, "mallory"])
    }
    // And the stored name itself still passes
    #expect(check(world, "Alice") == nil)
  }

  /// A name and its canonically equivalent decomposed form are different bytes: only the
  /// stored one passes.
  @Test func decomposedNameRefused() throws {
    let world = try World()
    try world.activateAlice()
    let composed = "Jos\u{E9}"
    let added = ScriptedConsole([password])
    try UserAddFlow.run(
      world.environment(added),
      options: ActivationOptions(
        username: composed, fullName: "José Arcadio", email: "jose@example.org",
        passwordFromStandardInput: true))
    #expect("Jose\u{301}" == composed)  // equal to Swift's `==`, not byte for byte
    #expect(check(world, "Jose\u{301}") == .invalidCredentials)
    #expect(check(world, composed) == nil)
  }

  /// A variant of a name with the right password is refused at the cost of an unknown name
  /// (counted, not timed).
  @Test func variantCostsAnUnknownName() throws {
    var world = try World()
    let meter = WorkMeter()
    world.hasher = PasswordHasher(iterations: 5000, meter: meter)
    try world.activateAlice()
    let before = meter.iterations
    #expect(check(world, "ALICE") == .invalidCredentials)
    let variant = meter.iterations - before
    #expect(check(world, "nobody-here") == .invalidCredentials)
    let unknown = meter.iterations - before - variant
    #expect(variant == 5000)
    #expect(unknown == variant)
  }

  /// Absolute paths and PostgreSQL URIs are accepted; anything resolved against the working
  /// folder (a relative path, `~`, libpq's keyword form) is not.
  @Test func acceptsOnlyAbsoluteLocations() {
    for accepted in [
      "/var/lib/accounts/accounts.sqlite3", "postgresql://db.example.org/accounts",
      "postgres:///accounts?service=accounts",
    ] {
      #expect(PamAuthFlow.acceptsLocation(accepted), "\(accepted)")
    }
    for refused in [
      "accounts.sqlite3", "./accounts.sqlite3", "../x/accounts.sqlite3", "~/accounts.sqlite3",
      "service=accounts", "dbname=accounts host=db.example.org", "",
    ] {
      #expect(!PamAuthFlow.acceptsLocation(refused), "\(refused)")
    }
  }

  /// Each PAM item keeps at most 255 bytes in the audit detail, cut between characters (a
  /// two-byte é, an eight-byte emoji with its skin tone) and marked with an ellipsis; one of
  /// exactly 255 bytes is whole.
  @Test func capsTheOrigin() {
    let request = PamRequest(
      username: "alice", secret: [], service: String(repeating: "s", count: 255),
      remoteHost: String(repeating: "é", count: 50_000),
      tty: String(repeating: "👍🏽", count: 40))
    let origin = PamAuthFlow.origin(of: request)
    #expect(
      origin == "pam service=" + String(repeating: "s", count: 255) + " rhost="
        + String(repeating: "é", count: 127) + "… tty=" + String(repeating: "👍🏽", count: 31)
        + "…")
    #expect(PamAuthFlow.originItemLimit == 255)
    #expect(
      PamAuthFlow.origin(of: PamRequest(username: "alice", secret: [], remoteHost: "203.0.113.9"))
        == "pam rhost=203.0.113.9")
  }
}
