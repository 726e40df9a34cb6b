import AccountsCore
import AccountsCrypto
import AccountsStore
import AccountsTestSupport
import Foundation
import Testing

extension World {
  /// `2fa enable --begin` for alice from a pipe; returns the secret shown and what was said.
  func beginAlice(qr: QRStyle = .terminal) throws -> ([UInt8], EnrollingConsole) {
    let console = EnrollingConsole(clock: clock, password: password)
    try SecondFactorFlow.begin(
      environment(ScriptedConsole([])).with(console), username: nil, qr: qr)
    return (try #require(console.secret), console)
  }

  /// `2fa enable --confirm` for alice from a pipe with `code`; returns what was said.
  @discardableResult
  func confirmAlice(_ code: String) throws -> EnrollingConsole {
    let console = EnrollingConsole(clock: clock, password: password, codes: [code])
    try SecondFactorFlow.confirm(environment(ScriptedConsole([])).with(console), username: nil)
    return console
  }

  /// Alice's pending secret, if any.
  func pendingOfAlice() throws -> PendingSecondFactor? {
    try store.read { reader throws(AccountsError) in try reader.pendingSecondFactor(accountID: 1) }
  }

  /// Alice's second factor, if any.
  func factorOfAlice() throws -> StoredSecondFactor? {
    try store.read { reader throws(AccountsError) in try reader.secondFactor(accountID: 1) }
  }
}

@Suite("Second factor in two steps")
struct SecondFactorStepsTests {
  /// `--begin` keeps the secret sealed (never in clear) for 10 minutes, shows no QR code on a
  /// pipe, and turns nothing on.
  @Test func beginKeepsASealedPendingSecret() throws {
    // Given an activated device
    let world = try World()
    try world.activateAlice()
    // When alice begins
    let (secret, console) = try world.beginAlice()
    // Then the secret waits, sealed under the key file's key, and no second factor is on
    let pending = try #require(try world.pendingOfAlice())
    #expect(pending.expiresAt == world.clock.now.addingTimeInterval(600))
    #expect(pending.keyID == world.keys.existingKey()?.id)
    let sealed = pending.sealedSecret
    #expect(!sealed.indices.contains { Array(sealed[$0...].prefix(secret.count)) == secret })
    #expect(try world.factorOfAlice() == nil)
    #expect(!console.outputs.contains(Messages.scanThis))
    #expect(
      console.outputs.last
        == Messages.pendingSecondFactorKept(
          "Alice", until: Timestamp.string(from: pending.expiresAt)))
  }

  /// A right code turns it on as `2fa enable` does: its step recorded, ten recovery codes,
  /// the pending secret gone, the event logged.
  @Test func confirmTurnsItOn() throws {
    // Given a pending secret
    let world = try World()
    try world.activateAlice()
    let (secret, _) = try world.beginAlice()
    // When a code of it is confirmed five minutes later
    world.clock.advance(300)
    let console = try world.confirmAlice(try world.code(secret))
    // Then the second factor is on with that step, and nothing waits any more
    let factor = try #require(try world.factorOfAlice())
    #expect(factor.lastStep == OneTimePassword.timeStep(at: world.clock.now))
    #expect(console.outputs.contains(Messages.secondFactorOn("Alice")))
    #expect(console.recoveryCodes.count == 10)
    #expect(try world.pendingOfAlice() == nil)
    #expect(try world.store.auditEvents().last?.kind == .secondFactorEnabled)
  }

  /// A wrong code is refused and keeps the pending secret; an expired one is refused and
  /// deleted; then none is left.
  @Test func wrongCodeKeepsItAndExpiryDeletesIt() throws {
    // Given a pending secret
    let world = try World()
    try world.activateAlice()
    let (secret, _) = try world.beginAlice()
    // When a wrong code is given, then the right one after 10 minutes
    #expect(throws: AccountsError.invalidVerificationCode) {
      try world.confirmAlice("000000")
    }
    #expect(try world.pendingOfAlice() != nil)
    world.clock.advance(600)
    #expect(throws: AccountsError.pendingSecondFactorExpired("Alice")) {
      try world.confirmAlice(try world.code(secret))
    }
    // Then it is gone and nothing was turned on
    #expect(try world.pendingOfAlice() == nil)
    #expect(try world.factorOfAlice() == nil)
    #expect(throws: AccountsError.noPendingSecondFactor("Alice")) {
      try world.confirmAlice(try world.code(secret))
    }
  }

  /// A second `--begin` replaces the first secret; a code of the first is wrong.
  @Test func beginAgainReplaces() throws {
    let world = try World()
    try world.activateAlice()
    let (first, _) = try world.beginAlice()
    let (second, _) = try world.beginAlice()
    #expect(first != second)
    #expect(throws: AccountsError.invalidVerificationCode) {
      try world.confirmAlice(try world.code(first))
    }
    try world.confirmAlice(try world.code(second))
    #expect(try world.factorOfAlice() != nil)
  }

  /// With the second factor on, `--begin` is refused and keeps nothing; the administrator's
  /// reset deletes a pending secret even when no second factor is on.
  @Test func alreadyOnAndReset() throws {
    let world = try World()
    try world.activateAlice()
    _ = try world.beginAlice()
    try SecondFactorFlow.reset(world.environment(ScriptedConsole([])), username: "Alice")
    #expect(try world.pendingOfAlice() == nil)
    try world.enableAlice()
    #expect(throws: AccountsError.secondFactorAlreadyOn("Alice")) {
      _ = try world.beginAlice()
    }
    #expect(try world.pendingOfAlice() == nil)
  }
}
