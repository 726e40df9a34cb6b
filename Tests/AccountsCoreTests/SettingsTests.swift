import AccountsCore
import AccountsCrypto
import Foundation
import Testing

/// The settings read from the environment, parsed by the core: exact ranges, exact refusals.
@Suite("Settings")
struct SettingsTests {
  /// What a refused session time says it expects, for a variable whose longest is `hours`.
  func durationExpected(hours: Int) -> String {
    "a duration from 5m to \(hours)h (seconds, or a number with s, m or h)"
  }

  /// No iterations setting (or an empty one) keeps Django's count.
  @Test(arguments: [nil, ""] as [String?])
  func iterationsDefault(_ text: String?) throws {
    let hasher = try PasswordHasher(iterationsSetting: text)
    #expect(hasher.iterations == PasswordHasher.defaultIterations)
  }

  /// Every whole number from 1,000 to 100,000,000 is taken as it is, the ends included.
  @Test(arguments: [
    ("1000", 1000), ("1001", 1001), ("600000", 600_000), ("100000000", 100_000_000),
  ])
  func iterationsAccepted(_ text: String, _ count: Int) throws {
    #expect(try PasswordHasher(iterationsSetting: text).iterations == count)
  }

  /// A count outside the range, or anything that is not a whole number, is refused by name.
  @Test(arguments: ["999", "0", "-1000", "100000001", "lots", "1e6", "1000.0", " 1000", "1_000"])
  func iterationsRefused(_ text: String) {
    #expect(
      throws: AccountsError.invalidSetting(
        name: "ACCOUNTS_PBKDF2_ITERATIONS", value: text,
        expected: "a whole number from 1000 to 100000000")
    ) {
      try PasswordHasher(iterationsSetting: text)
    }
  }

  /// No session settings (or empty ones) keep the longest times: 24 hours, 1 hour idle.
  @Test func sessionDefaults() throws {
    #expect(try SessionPolicy(lifetimeSetting: nil, idleSetting: nil) == .standard)
    #expect(try SessionPolicy(lifetimeSetting: "", idleSetting: "") == .standard)
  }

  /// Seconds, or a number with s, m or h, from 5 minutes to the longest, the ends included.
  @Test(arguments: [
    ("300", 300.0), ("300s", 300), ("5m", 300), ("0005m", 300), ("90m", 5400), ("2h", 7200),
    ("24h", 86400), ("1440m", 86400), ("86400", 86400),
  ])
  func lifetimeAccepted(_ text: String, _ seconds: TimeInterval) throws {
    let policy = try SessionPolicy(lifetimeSetting: text, idleSetting: nil)
    #expect(policy.lifetime == seconds)
    #expect(policy.idle == SessionPolicy.longestIdle)
  }

  /// The idle timeout goes from 5 minutes to 1 hour.
  @Test(arguments: [("5m", 300.0), ("15m", 900), ("3600", 3600), ("1h", 3600), ("60m", 3600)])
  func idleAccepted(_ text: String, _ seconds: TimeInterval) throws {
    let policy = try SessionPolicy(lifetimeSetting: nil, idleSetting: text)
    #expect(policy.idle == seconds)
    #expect(policy.lifetime == SessionPolicy.longestLifetime)
  }

  /// Too short, too long, another unit, a sign, a space or no number at all: refused by name.
  @Test(arguments: [
    "299", "4m", "1s", "0", "86401", "25h", "1441m", "forever", "m", "h", "-5m", "+5m", "5 m",
    "5M", "1d", "5m ", "1.5h", "1000001", "99999999999999999999",
  ])
  func lifetimeRefused(_ text: String) {
    #expect(
      throws: AccountsError.invalidSetting(
        name: "ACCOUNTS_SESSION_LIFETIME", value: text, expected: durationExpected(hours: 24))
    ) {
      try SessionPolicy(lifetimeSetting: text, idleSetting: nil)
    }
  }

  /// An idle timeout over an hour is refused, with the idle timeout's own limit.
  @Test(arguments: ["3601", "61m", "2h", "24h", "4m"])
  func idleRefused(_ text: String) {
    #expect(
      throws: AccountsError.invalidSetting(
        name: "ACCOUNTS_SESSION_IDLE", value: text, expected: durationExpected(hours: 1))
    ) {
      try SessionPolicy(lifetimeSetting: nil, idleSetting: text)
    }
  }

  /// Both wrong: the lifetime is named first (it is read first).
  @Test func lifetimeIsReadFirst() {
    #expect(
      throws: AccountsError.invalidSetting(
        name: "ACCOUNTS_SESSION_LIFETIME", value: "1s", expected: durationExpected(hours: 24))
    ) {
      try SessionPolicy(lifetimeSetting: "1s", idleSetting: "forever")
    }
  }
}
