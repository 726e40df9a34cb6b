import AccountsCore
import AccountsCrypto
import AccountsStore
import AccountsTestSupport
import Foundation
import Synchronization
import Testing

/// A console for `2fa enable` that answers the code prompt with the code of the secret it
/// was shown, at `offset` seconds from the clock.
final class EnrollingConsole: Console {
  let clock: TestClock
  let password: String
  var offset: TimeInterval
  var codes: [String]?
  private(set) var outputs: [String] = []
  private(set) var messages: [String] = []
  private(set) var prompts: [String] = []
  let isInteractive: Bool

  init(
    clock: TestClock, password: String, offset: TimeInterval = 0, codes: [String]? = nil,
    interactive: Bool = false
  ) {
    self.clock = clock
    self.password = password
    self.offset = offset
    self.codes = codes
    self.isInteractive = interactive
  }

  /// The secret shown on the `Key:` line.
  var secret: [UInt8]? {
    outputs.first { $0.hasPrefix("Key: ") }.flatMap { Base32.decode(String($0.dropFirst(5))) }
  }

  /// The recovery codes shown.
  var recoveryCodes: [String] {
    outputs.filter { $0.hasPrefix("  ") }.map { String($0.dropFirst(2)) }
  }

  func output(_ line: String) { outputs.append(line) }
  func message(_ line: String) { messages.append(line) }
  func readSecret(prompt: String) -> ConsoleLine { readLine(prompt: prompt) }
  func readLine(prompt: String) -> ConsoleLine {
    prompts.append(prompt)
    switch prompt {
    case "User name: ": return .bytes(Array("Alice".utf8))
    case "Password: ": return .bytes(Array(password.utf8))
    default:
      if var codes, !codes.isEmpty {
        let next = codes.removeFirst()
        self.codes = codes
        return .bytes(Array(next.utf8))
      }
      guard let secret,
        let code = try? OneTimePassword.totp(secret: secret, at: clock.now + offset)
      else { return .endOfInput }
      return .bytes(Array(code.utf8))
    }
  }
}

extension World {
  /// Turns alice's second factor on; returns the secret and the recovery codes.
  @discardableResult
  func enableAlice() throws -> (secret: [UInt8], codes: [String]) {
    let console = EnrollingConsole(clock: clock, password: password)
    try SecondFactorFlow.enable(
      environment(ScriptedConsole([])).with(console), username: nil, qr: .none)
    return (try #require(console.secret), console.recoveryCodes)
  }

  /// The code of `secret` at the clock plus `offset`.
  func code(_ secret: [UInt8], offset: TimeInterval = 0) throws -> String {
    try OneTimePassword.totp(secret: secret, at: clock.now + offset)
  }
}

extension AccountsEnvironment {
  /// The same environment with another console.
  func with(_ console: any Console) -> AccountsEnvironment {
    var copy = self
    copy.console = console
    return copy
  }
}

@Suite("Second factor flows")
struct SecondFactorFlowTests {
  /// A name locked while its right password is hashed gets the lock's answer, no code question.
  ///
  /// Logins that began together lock the name while this one hashes: the code question would
  /// tell that the password is right. The other logins' failures are recorded from inside the
  /// hash, the point every login passes between reading the lock and knowing the password.
  @Test func lockedWhileHashingGetsNoCodeQuestion() throws {
    var world = try World()
    try world.activateAlice()
    try world.enableAlice()
    let store = world.store
    let clock = world.clock
    let others = Mutex(0)
    world.hasher = PasswordHasher(
      iterations: 1000,
      meter: WorkMeter { _ in
        let first = others.withLock { count in
          count += 1
          return count == 1
        }
        guard first else { return }
        for _ in 1...LockoutPolicy.standard.threshold {
          _ = try? LoginRecorder.recordFailure(
            store, username: "alice", usernameKey: "alice", at: clock.now,
            policy: .standard)
        }
      })
    let (result, console) = world.login("alice", password)
    #expect(result.exitStatus == .locked)
    #expect(result.errorText.contains("Too many failed attempts"))
    #expect(!console.prompts.contains { $0.contains(Messages.verificationCodePrompt) })
    #expect(try world.store.auditEvents().last?.detail == Messages.detailLocked)
  }

  /// Enrollment shows the URI and key, stores the secret sealed (never in clear) once a code
  /// is right, ten recovery codes as hashes, and logs it.
  @Test func enable() throws {
    let world = try World()
    try world.activateAlice()
    let console = EnrollingConsole(clock: world.clock, password: password)
    try SecondFactorFlow.enable(
      world.environment(ScriptedConsole([])).with(console), username: nil, qr: .none)
    let secret = try #require(console.secret)
    #expect(secret.count == 20)
    #expect(
      console.outputs.contains(
        "URI: " + SecondFactor.uri(secret: secret, account: "Alice@localhost")))
    #expect(console.recoveryCodes.count == 10)
    #expect(console.outputs.contains("Two-factor authentication is on for Alice."))
    let factor = try #require(
      try world.store.read { reader throws(AccountsError) in
        try reader.secondFactor(accountID: 1)
      })
    #expect(factor.keyID == world.keys.existingKey()?.id)
    #expect(!contains(factor.sealedSecret, secret))
    #expect(factor.lastStep == OneTimePassword.timeStep(at: world.clock.now))
    #expect(
      try world.store.read { reader throws(AccountsError) in
        try reader.recoveryCodesLeft(accountID: 1)
      } == 10)
    #expect(try world.store.auditEvents().last?.kind == .secondFactorEnabled)
  }

  private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard haystack.count >= needle.count else { return false }
    return (0...(haystack.count - needle.count)).contains {
      Array(haystack[$0..<$0 + needle.count]) == needle
    }
  }

  /// A wrong code stores nothing; a code from a phone 2 minutes ahead says the clock is off.
  @Test func enrollmentRefusals() throws {
    let world = try World()
    try world.activateAlice()
    let wrong = EnrollingConsole(clock: world.clock, password: password, codes: ["000000"])
    #expect(throws: AccountsError.invalidVerificationCode) {
      try SecondFactorFlow.enable(
        world.environment(ScriptedConsole([])).with(wrong), username: nil, qr: .none)
    }
    let ahead = EnrollingConsole(clock: world.clock, password: password, offset: 120)
    #expect(throws: AccountsError.clockOff(seconds: 120)) {
      try SecondFactorFlow.enable(
        world.environment(ScriptedConsole([])).with(ahead), username: nil, qr: .none)
    }
    #expect(
      try world.store.read { reader throws(AccountsError) in
        try reader.secondFactor(accountID: 1)
      } == nil)
    #expect(
      Messages.clockOff(seconds: -90)
        == "That code is for a time about 90 seconds behind this device's clock: set the clock "
        + "right and try again.")
  }

  /// At a terminal, a wrong code asks again.
  @Test func enrollmentRetriesAtATerminal() throws {
    let world = try World()
    try world.activateAlice()
    let console = EnrollingConsole(
      clock: world.clock, password: password, codes: ["123456"], interactive: true)
    try SecondFactorFlow.enable(
      world.environment(ScriptedConsole([])).with(console), username: nil, qr: .none)
    #expect(console.messages.contains("Invalid verification code!"))
    #expect(console.outputs.contains("Two-factor authentication is on for Alice."))
  }

  /// Login asks the code after the password; the next step's code is accepted (skew), the
  /// same step again is a replay, counted; success is acknowledged and the session marked.
  @Test func loginWithCode() throws {
    let world = try World()
    try world.activateAlice()
    let (secret, _) = try world.enableAlice()
    // The enrollment used this step: its code is a replay now.
    #expect(throws: AccountsError.replayedVerificationCode) {
      try world.loginAlice(code: try world.code(secret))
    }
    let (_, console) = try world.loginAlice(code: try world.code(secret, offset: 30))
    #expect(console.prompts == ["User name: ", "(secret) Password: ", "Verification code: "])
    #expect(console.messages == ["You are successfully authorized."])
    #expect(try world.liveSessions().first?.session.secondFactor == true)
    #expect(throws: AccountsError.replayedVerificationCode) {
      try world.loginAlice(code: try world.code(secret, offset: 30))
    }
    // (The success between the two replays cleared the first.)
    #expect(try world.store.tally(key: "alice").failures == 1)
  }

  /// Codes two steps away are refused at login; five wrong codes lock the name.
  @Test func wrongCodesLock() throws {
    let world = try World()
    try world.activateAlice()
    let (secret, _) = try world.enableAlice()
    #expect(throws: AccountsError.invalidVerificationCode) {
      try world.loginAlice(code: try world.code(secret, offset: 60))
    }
    for _ in 0..<3 {
      #expect(throws: AccountsError.invalidVerificationCode) {
        try world.loginAlice(code: "000000")
      }
    }
    #expect(throws: AccountsError.self) { try world.loginAlice(code: "000000") }
    #expect(try world.store.tally(key: "alice").lockedUntil != nil)
    #expect(try world.store.auditEvents().contains { $0.detail == "wrong verification code" })
  }

  /// An empty code is an incomplete form and is not counted.
  @Test func emptyCode() throws {
    let world = try World()
    try world.activateAlice()
    try world.enableAlice()
    #expect(throws: AccountsError.incompleteForm(empty: ["Verification code"])) {
      try world.loginAlice(code: "  ")
    }
    #expect(try world.store.tally(key: "alice").failures == 0)
  }

  /// A recovery code works once, in any case and spacing; few left are warned about.
  @Test func recoveryCodes() throws {
    let world = try World()
    try world.activateAlice()
    let (_, codes) = try world.enableAlice()
    let typed = codes[0].lowercased().replacingOccurrences(of: "-", with: " ")
    let (_, console) = try world.loginAlice(code: typed)
    #expect(console.messages.contains("Recovery code accepted; 9 left."))
    #expect(throws: AccountsError.invalidVerificationCode) {
      try world.loginAlice(code: codes[0])
    }
    for code in codes[1..<8] { try world.loginAlice(code: code) }
    let (_, last) = try world.loginAlice(code: codes[8])
    #expect(
      last.messages.contains(
        "Only 1 recovery code left: make new ones with accounts 2fa recovery-codes."))
    #expect(try world.store.auditEvents().last { $0.kind == .recoveryCodeUsed }?.detail == "1 left")
  }

  /// New recovery codes replace the old ones.
  @Test func newRecoveryCodes() throws {
    let world = try World()
    try world.activateAlice()
    let (_, old) = try world.enableAlice()
    let console = ScriptedConsole(["alice", password, old[0]])
    try SecondFactorFlow.newRecoveryCodes(world.environment(console), username: nil)
    let fresh = console.outputs.filter { $0.hasPrefix("  ") }.map { String($0.dropFirst(2)) }
    #expect(fresh.count == 10)
    #expect(throws: AccountsError.invalidVerificationCode) { try world.loginAlice(code: old[1]) }
    try world.loginAlice(code: fresh[0])
  }

  /// Without the key the TOTP code cannot be checked (nothing counted), a recovery code
  /// still works; another key is told as the wrong key.
  @Test func keyMissingOrWrong() throws {
    let world = try World()
    try world.activateAlice()
    let (secret, codes) = try world.enableAlice()
    let noKey = AccountsEnvironment(
      console: ScriptedConsole(["alice", password, try world.code(secret, offset: 30)]),
      store: world.store, now: { [clock = world.clock] in clock.now }, hasher: world.hasher,
      keys: MemorySealingKeyStore())
    #expect(throws: AccountsError.clientFile(.keyMissing(path: "(memory)"))) {
      try LoginFlow.run(noKey, options: LoginOptions())
    }
    #expect(try world.store.tally(key: "alice").failures == 0)
    var recovery = noKey
    recovery.console = ScriptedConsole(["alice", password, codes[0]])
    _ = try LoginFlow.run(recovery, options: LoginOptions())
    var other = noKey
    other.keys = MemorySealingKeyStore(
      key: try SealingKey(bytes: [UInt8](repeating: 7, count: 32)))
    other.console = ScriptedConsole(["alice", password, try world.code(secret, offset: 30)])
    #expect(throws: AccountsError.clientFile(.wrongKey(path: "(memory)"))) {
      try LoginFlow.run(other, options: LoginOptions())
    }
  }

  /// A sealed secret copied to another account does not open (bound to its account).
  @Test func sealedSecretIsBoundToItsAccount() throws {
    let key = try SealingKey(bytes: [UInt8](repeating: 1, count: 32))
    let box = try AESGCM.seal(
      [1, 2, 3], key: key.bytes, associatedData: Array("accounts totp secret v1, account 1".utf8))
    #expect(throws: CryptoError.authenticationFailed) {
      try AESGCM.open(
        box, key: key.bytes, associatedData: Array("accounts totp secret v1, account 2".utf8))
    }
  }

  /// disable asks password and code, deletes the factor, ends the other sessions.
  ///
  /// Then the login asks no code; status tells both states.
  @Test func disableAndStatus() throws {
    let world = try World()
    try world.activateAlice()
    let (secret, _) = try world.enableAlice()
    try world.loginAlice(code: try world.code(secret, offset: 30))
    let on = try SecondFactorFlow.status(world.environment(ScriptedConsole([])), username: nil)
    #expect(on.enabledAt == start)
    #expect(on.recoveryCodesLeft == 10)
    world.sessions.saved = nil
    world.clock.advance(60)
    let console = ScriptedConsole(["alice", password, try world.code(secret)])
    try SecondFactorFlow.disable(world.environment(console), username: nil)
    #expect(console.outputs == ["Two-factor authentication is off for Alice."])
    #expect(try world.sessionRows() == 0)
    let (_, login) = try world.loginAlice()
    #expect(login.prompts == ["User name: ", "(secret) Password: "])
    let off = try SecondFactorFlow.status(world.environment(ScriptedConsole([])), username: "alice")
    #expect(off.enabledAt == nil)
    #expect(throws: AccountsError.secondFactorNotOn("Alice")) {
      try SecondFactorFlow.disable(
        world.environment(ScriptedConsole(["alice", password])), username: nil)
    }
  }

  /// The administrator's reset deletes the factor and every session; logged.
  @Test func administratorReset() throws {
    let world = try World()
    try world.activateAlice()
    let (secret, _) = try world.enableAlice()
    try world.loginAlice(code: try world.code(secret, offset: 30))
    let console = ScriptedConsole([])
    try SecondFactorFlow.reset(world.environment(console), username: "Alice")
    #expect(
      console.outputs == ["Two-factor authentication turned off for Alice; their sessions ended."])
    #expect(try world.sessionRows() == 0)
    #expect(try world.store.auditEvents().last?.kind == .secondFactorReset)
    #expect(throws: AccountsError.secondFactorNotOn("Alice")) {
      try SecondFactorFlow.reset(world.environment(console), username: "alice")
    }
  }

  /// verify reads the code as the next line; passwd asks it too.
  @Test func verifyAndPasswdAskTheCode() throws {
    let world = try World()
    try world.activateAlice()
    let (secret, _) = try world.enableAlice()
    let verify = ScriptedConsole([password, try world.code(secret, offset: 30)])
    try VerifyFlow.run(world.environment(verify), username: "alice")
    #expect(throws: AccountsError.invalidVerificationCode) {
      try VerifyFlow.run(
        world.environment(ScriptedConsole([password, "999999"])), username: "alice")
    }
    let newPassword = "yet another long passphrase"
    let passwd = ScriptedConsole([
      "alice", password, try world.code(secret, offset: -30), newPassword, newPassword,
    ])
    #expect(throws: AccountsError.replayedVerificationCode) {
      try PasswordChangeFlow.run(world.environment(passwd), username: nil)
    }
    world.clock.advance(60)
    let again = ScriptedConsole([
      "alice", password, try world.code(secret), newPassword, newPassword,
    ])
    try PasswordChangeFlow.run(world.environment(again), username: nil)
  }

  /// Of two logins with the same code, checked before either recorded, exactly one wins: the
  /// step is accepted by one conditional update.
  @Test func sameCodeTwiceOneWins() throws {
    let world = try World()
    try world.activateAlice()
    try world.enableAlice()
    let step = OneTimePassword.timeStep(at: world.clock.now) + 1
    let first = try world.store.write { writer throws(AccountsError) in
      try writer.acceptStep(step, accountID: 1)
    }
    let second = try world.store.write { writer throws(AccountsError) in
      try writer.acceptStep(step, accountID: 1)
    }
    #expect((first, second) == (true, false))
  }
}
