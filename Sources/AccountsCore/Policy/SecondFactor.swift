import AccountsCrypto
import FoundationEssentials

/// The rules of the TOTP second factor (RFC 6238): 160-bit secrets, 6 digits, 30-second steps,
/// one step of clock skew either way, each step accepted once.
///
/// The parts that need no store: checking a code, the `otpauth://` URI an authenticator app
/// scans, recovery codes. Where the secret and the last accepted step are kept is the store's
/// concern.
public enum SecondFactor {
  /// Seconds per time step.
  public static let step: TimeInterval = 30
  /// Digits per code.
  public static let digits = 6
  /// Steps of clock skew accepted either way at login.
  public static let skew: UInt64 = 1
  /// How far enrollment looks for a code typed on a phone whose clock is off: 10 minutes.
  public static let enrollmentSearch: UInt64 = 20
  /// Secret length in bytes (160 bits, RFC 4226's recommendation).
  public static let secretByteCount = 20

  /// What a typed code turned out to be.
  public enum Check: Equatable, Sendable {
    /// Right, for this time step (store it: no later code may use it or an earlier one).
    case accepted(step: UInt64)
    /// Right, but for a step already used (or before it): a replay.
    case replayed
    /// Not a code of any step in the window.
    case wrong
    /// At enrollment only: right for a step `seconds` away from now (positive: the phone is
    /// ahead), outside the window.
    case clockOff(seconds: Int)
  }

  /// A new random secret.
  public static func newSecret() throws(CryptoError) -> [UInt8] {
    try SecureRandom.bytes(secretByteCount)
  }

  /// Checks `typed` (spaces ignored) against `secret` at `now`.
  ///
  /// A code is accepted only in a step later than `lastAcceptedStep`. At `enrolling`, a code
  /// from a step further away is told as a clock that is off.
  ///
  /// Every step of the window is computed and compared in constant time, whatever matched, so
  /// the time taken tells nothing.
  public static func check(
    _ typed: String, secret: [UInt8], at now: Date, lastAcceptedStep: UInt64?,
    enrolling: Bool = false
  ) throws(CryptoError) -> Check {
    let code = typed.filter { $0 != " " }
    guard code.count == digits, code.allSatisfy({ $0.isASCII && $0.isNumber }) else {
      return .wrong
    }
    let current = OneTimePassword.timeStep(at: now, step: step)
    let reach = enrolling ? enrollmentSearch : skew
    var matched: UInt64?
    for candidate in (current > reach ? current - reach : 0)...(current + reach) {
      let expected = try OneTimePassword.hotp(secret: secret, counter: candidate, digits: digits)
      let equal = try ConstantTime.equals(Array(expected.utf8), Array(code.utf8))
      // The closest matching step wins (codes of two steps can collide, one in a million).
      if equal, matched.map({ distance($0, current) > distance(candidate, current) }) ?? true {
        matched = candidate
      }
    }
    guard let matched else { return .wrong }
    if distance(matched, current) > skew {
      let seconds = (Int64(bitPattern: matched) - Int64(bitPattern: current)) * Int64(step)
      return .clockOff(seconds: Int(seconds))
    }
    if let lastAcceptedStep, matched <= lastAcceptedStep { return .replayed }
    return .accepted(step: matched)
  }

  private static func distance(_ a: UInt64, _ b: UInt64) -> UInt64 { a > b ? a - b : b - a }

  /// The `otpauth://totp/` URI authenticator apps scan (Google Authenticator's Key Uri Format):
  /// `issuer:account` as the label, the secret in unpadded Base32, the parameters spelled out.
  public static func uri(secret: [UInt8], account: String, issuer: String = "accounts")
    -> String
  {
    let label = percentEncoded(issuer) + ":" + percentEncoded(account)
    return "otpauth://totp/\(label)?secret=\(Base32.encode(secret, padded: false))"
      + "&issuer=\(percentEncoded(issuer))&algorithm=SHA1&digits=\(digits)&period=\(Int(step))"
  }

  /// `text` with every byte outside RFC 3986's unreserved characters percent-encoded.
  static func percentEncoded(_ text: String) -> String {
    var result = ""
    for byte in text.utf8 {
      let scalar = Unicode.Scalar(byte)
      if (byte < 0x80 && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)))
        || "-._~".unicodeScalars.contains(scalar)
      {
        result.unicodeScalars.append(scalar)
      } else {
        result += (byte < 0x10 ? "%0" : "%") + String(byte, radix: 16, uppercase: true)
      }
    }
    return result
  }

  /// How many recovery codes a set holds.
  public static let recoveryCodeCount = 10

  /// A new set of recovery codes: 80 random bits each, as 16 Base32 characters in groups of 4
  /// (`ABCD-EFGH-IJKL-MNOP`), easy to read out and type.
  public static func newRecoveryCodes() throws(CryptoError) -> [String] {
    var codes: [String] = []
    for _ in 0..<recoveryCodeCount {
      let characters = Array(Base32.encode(try SecureRandom.bytes(10), padded: false))
      codes.append(
        stride(from: 0, to: 16, by: 4).map { String(characters[$0..<$0 + 4]) }
          .joined(separator: "-"))
    }
    return codes
  }

  /// What is stored of a recovery code: the SHA-256 of its 10 bytes.
  ///
  /// Nil when `typed` is not one (case, spaces and hyphens ignored). The codes carry 80 random
  /// bits, so a fast hash is enough: there is nothing to guess from a dictionary.
  public static func recoveryCodeHash(_ typed: String) throws(CryptoError) -> [UInt8]? {
    guard let bytes = Base32.decode(typed), bytes.count == 10 else { return nil }
    return try SHA256.hash(bytes)
  }
}
