import AccountsCore
import AccountsCrypto
import AccountsTestSupport
import Foundation
import Testing

/// The second factor's rules that need no store: the window, replays, a phone clock that is
/// off, the URI an app scans, recovery codes.
@Suite("Second factor")
struct SecondFactorTests {
  /// RFC 4226's test secret; its HOTP values are Appendix D's.
  let secret = Array("12345678901234567890".utf8)
  /// 59 s after the epoch: time step 1 (RFC 6238 Appendix B's first time).
  let t59 = Date(timeIntervalSince1970: 59)

  /// The current step's code and the steps either side are accepted, with their step.
  @Test func windowOfOneStep() throws {
    #expect(
      try SecondFactor.check("287082", secret: secret, at: t59, lastAcceptedStep: nil)
        == .accepted(step: 1))
    #expect(
      try SecondFactor.check("755224", secret: secret, at: t59, lastAcceptedStep: nil)
        == .accepted(step: 0))
    #expect(
      try SecondFactor.check("359 152", secret: secret, at: t59, lastAcceptedStep: nil)
        == .accepted(step: 2))
  }

  /// Two steps away is refused at login; at enrollment it says how far off the clock is.
  @Test func outsideTheWindow() throws {
    #expect(
      try SecondFactor.check("969429", secret: secret, at: t59, lastAcceptedStep: nil)
        == .wrong)
    #expect(
      try SecondFactor.check(
        "969429", secret: secret, at: t59, lastAcceptedStep: nil, enrolling: true)
        == .clockOff(seconds: 60))
    let later = Date(timeIntervalSince1970: 59 + 30 * 9)
    #expect(
      try SecondFactor.check(
        "287082", secret: secret, at: later, lastAcceptedStep: nil, enrolling: true)
        == .clockOff(seconds: -270))
  }

  /// A code is accepted only in a step later than the last one accepted.
  @Test func noReplay() throws {
    #expect(
      try SecondFactor.check("287082", secret: secret, at: t59, lastAcceptedStep: 1)
        == .replayed)
    #expect(
      try SecondFactor.check("755224", secret: secret, at: t59, lastAcceptedStep: 1)
        == .replayed)
    #expect(
      try SecondFactor.check("359152", secret: secret, at: t59, lastAcceptedStep: 1)
        == .accepted(step: 2))
  }

  /// Anything but six digits is wrong, without an error.
  @Test(arguments: ["", "28708", "2870822", "abcdef", "28708x", "２８７０８２"])
  func malformed(_ typed: String) throws {
    #expect(
      try SecondFactor.check(typed, secret: secret, at: t59, lastAcceptedStep: nil)
        == .wrong)
  }

  /// The URI apps scan: label `issuer:account`, secret unpadded, parameters spelled out; names
  /// percent-encoded.
  @Test func uri() {
    #expect(
      SecondFactor.uri(secret: secret, account: "alice")
        == "otpauth://totp/accounts:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
        + "&issuer=accounts&algorithm=SHA1&digits=6&period=30")
    #expect(
      SecondFactor.uri(secret: secret, account: "élodie o:b", issuer: "My Host")
        .hasPrefix("otpauth://totp/My%20Host:%C3%A9lodie%20o%3Ab?secret="))
  }

  /// `oathtool`, given the URI's secret, computes a code this check accepts at that time.
  @Test func acceptsOathtoolCodes() throws {
    let secret = try SecondFactor.newSecret()
    #expect(secret.count == 20)
    let uri = SecondFactor.uri(secret: secret, account: "alice")
    let base32 = try #require(
      URLComponents(string: uri)?.queryItems?.first { $0.name == "secret" }?.value)
    let time = 1_800_000_015
    let (status, code) = try runTool(
      "/usr/bin/oathtool", ["--totp", "-b", "--now", "@\(time)", base32])
    #expect(status == 0)
    let now = Date(timeIntervalSince1970: Double(time))
    #expect(
      try SecondFactor.check(code, secret: secret, at: now, lastAcceptedStep: nil)
        == .accepted(step: UInt64(time / 30)))
    #expect(
      try SecondFactor.check(code, secret: secret, at: now + 90, lastAcceptedStep: nil)
        == .wrong)
  }

  /// Ten distinct codes of 80 bits, `XXXX-XXXX-XXXX-XXXX`; typed loosely they hash the same.
  @Test func recoveryCodes() throws {
    let codes = try SecondFactor.newRecoveryCodes()
    #expect(codes.count == 10 && Set(codes).count == 10)
    for code in codes {
      #expect(code.wholeMatch(of: /[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}/) != nil)
    }
    let loose = codes[0].lowercased().replacingOccurrences(of: "-", with: " ")
    let hash = try #require(try SecondFactor.recoveryCodeHash(codes[0]))
    #expect(try SecondFactor.recoveryCodeHash(loose) == hash)
    #expect(try SecondFactor.recoveryCodeHash(codes[1]) != hash)
    #expect(try SecondFactor.recoveryCodeHash("not a code") == nil)
    #expect(try SecondFactor.recoveryCodeHash("ABCD-EFGH") == nil)
  }
}
