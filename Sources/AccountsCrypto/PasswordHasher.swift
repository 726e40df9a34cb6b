import FoundationEssentials
import Glibc
import Synchronization

/// A password hash in Django's `pbkdf2_sha256$<iterations>$<salt>$<base64 key>` format.
public struct EncodedPasswordHash: Equatable, Sendable, CustomStringConvertible {
  /// The algorithm tag Django writes before the first `$`.
  public static let algorithm = "pbkdf2_sha256"

  /// The PBKDF2 iteration count written in the hash.
  public let iterations: Int
  /// The salt, as text (Django salts never contain `$`).
  public let salt: String
  /// The 32-byte derived key.
  public let key: [UInt8]

  /// Creates a hash from its parts.
  public init(iterations: Int, salt: String, key: [UInt8]) {
    self.iterations = iterations
    self.salt = salt
    self.key = key
  }

  /// Parses Django's encoded form; nil when `encoded` is not a well-formed pbkdf2_sha256 hash,
  /// including one whose iteration count is above `PasswordHasher.maximumIterations` (a damaged
  /// or planted hash that would stall every login).
  public init?(parsing encoded: String) {
    let parts = encoded.split(separator: "$", omittingEmptySubsequences: false)
    guard parts.count == 4, parts[0] == Self.algorithm,
      let iterations = Int(parts[1]), iterations >= 1,
      iterations <= PasswordHasher.maximumIterations,
      String(iterations) == parts[1],
      !parts[2].isEmpty,
      let key = Data(base64Encoded: String(parts[3])), key.count == SHA256.byteCount
    else { return nil }
    self.init(iterations: iterations, salt: String(parts[2]), key: [UInt8](key))
  }

  /// True when `encoded` would parse, checked without decoding anything (an import checks a
  /// million of them): four `$`-separated parts, the algorithm, a canonical iteration count in
  /// range, a salt, and 44 Base64 characters (32 bytes) ending in one `=`.
  public static func isWellFormed(_ encoded: String) -> Bool {
    let parts = encoded.utf8.split(separator: UInt8(ascii: "$"), omittingEmptySubsequences: false)
    guard parts.count == 4, parts[0].elementsEqual(algorithm.utf8), !parts[2].isEmpty,
      let digits = String(parts[1]), let iterations = Int(digits), iterations >= 1,
      iterations <= PasswordHasher.maximumIterations, String(iterations) == digits
    else { return false }
    let key = parts[3]
    guard key.count == 44, key.last == UInt8(ascii: "=") else { return false }
    return key.dropLast().allSatisfy { byte in
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"):
        return true
      default: return false
      }
    }
  }

  /// The encoded form, as stored.
  public var description: String {
    "\(Self.algorithm)$\(iterations)$\(salt)$\(Data(key).base64EncodedString())"
  }

  /// Bits of randomness in the salt, reckoned as Django does (length × log2 of 62).
  public var saltEntropyBits: Double {
    Double(salt.count) * log2(Double(PasswordHasher.saltAlphabet.count))
  }
}

/// The outcome of checking a password against a stored hash.
public struct PasswordVerification: Equatable, Sendable {
  /// The password matches the hash.
  public let isValid: Bool
  /// The hash is weaker than the current policy and should be replaced after a valid login.
  public let needsRehash: Bool
  /// The stored hash, whole, recomputed from the password: set when it was checked against a
  /// sealed hash (`SealedPasswordHash`) and was right.
  public let whole: String?

  /// Creates an outcome.
  public init(isValid: Bool, needsRehash: Bool, whole: String? = nil) {
    self.isValid = isValid
    self.needsRehash = needsRehash
    self.whole = whole
  }
}

/// Counts the PBKDF2 iterations a hasher performs, so tests can compare the work of two paths
/// (unknown user name vs wrong password) without measuring time.
public final class WorkMeter: Sendable {
  private let total = Mutex(0)
  private let onWork: (@Sendable (Int) -> Void)?

  /// A meter at zero; `onWork`, if given, is called with each count before the work is done
  /// (a test's point to change the world while a password is being hashed).
  public init(onWork: (@Sendable (Int) -> Void)? = nil) {
    self.onWork = onWork
  }

  /// Iterations performed so far.
  public var iterations: Int { total.withLock { $0 } }

  func add(_ count: Int) {
    total.withLock { $0 += count }
    onWork?(count)
  }
}

/// Makes and checks Django-compatible PBKDF2-HMAC-SHA256 password hashes.
public struct PasswordHasher: Sendable {
  /// Django 6.0's iteration count; OWASP's floor is 600,000.
  public static let defaultIterations = 1_200_000
  /// The most iterations a stored hash may have (about 80 seconds of work here).
  ///
  /// A count above it marks the hash as damaged (no login spends minutes on one attempt).
  public static let maximumIterations = 100_000_000
  /// The counts `ACCOUNTS_PBKDF2_ITERATIONS` may set for new hashes (low ones are for tests and
  /// benchmarks); a value outside is refused.
  public static let configurableIterations = 1000...maximumIterations
  /// Django's salt alphabet (`RANDOM_STRING_CHARS`).
  public static let saltAlphabet = Array(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
  /// Bits of randomness a salt must carry (Django's `salt_entropy`).
  public static let saltEntropy = 128.0

  /// The iteration count new hashes are made with.
  public let iterations: Int

  /// Where the work is counted, if anywhere.
  public let meter: WorkMeter?

  /// A hasher that makes new hashes with `iterations` rounds.
  public init(iterations: Int = PasswordHasher.defaultIterations, meter: WorkMeter? = nil) {
    self.iterations = iterations
    self.meter = meter
  }

  private func derive(_ password: String, salt: String, iterations: Int) throws(CryptoError)
    -> [UInt8]
  {
    meter?.add(iterations)
    return try PBKDF2.sha256(
      password: Array(password.utf8), salt: Array(salt.utf8), iterations: iterations)
  }

  /// A fresh random salt: 22 characters of the 62-character alphabet, about 131 bits.
  public static func makeSalt() throws(CryptoError) -> String {
    let length = Int((saltEntropy / log2(Double(saltAlphabet.count))).rounded(.up))
    return try SecureRandom.string(length: length, alphabet: saltAlphabet)
  }

  /// Hashes `password` (its UTF-8 bytes) with a fresh salt at the current iteration count.
  public func hash(password: String) throws(CryptoError) -> EncodedPasswordHash {
    try hash(password: password, salt: Self.makeSalt(), iterations: iterations)
  }

  /// Hashes `password` with a given salt and iteration count (for tests and interop).
  public func hash(password: String, salt: String, iterations: Int) throws(CryptoError)
    -> EncodedPasswordHash
  {
    guard !salt.isEmpty, !salt.contains("$") else { throw .invalidParameter("salt") }
    let key = try derive(password, salt: salt, iterations: iterations)
    return EncodedPasswordHash(iterations: iterations, salt: salt, key: key)
  }

  /// Checks `password` against `stored`, with the iteration count written in the hash; with
  /// `sealed` (`stored` is then its masked hash), against the whole hash it seals.
  ///
  /// A wrong password costs at least `workTarget` iterations (the cost an unknown name is
  /// charged), so that a failure takes as long whatever was wrong.
  public func verify(
    password: String, against stored: EncodedPasswordHash, workTarget: Int,
    sealed: SealedPasswordHash? = nil
  ) throws(CryptoError) -> PasswordVerification {
    let candidate = try hash(password: password, salt: stored.salt, iterations: stored.iterations)
    let isValid: Bool
    if let sealed {
      isValid = try sealed.isWhole(candidate.description)
    } else {
      isValid = try ConstantTime.equals(candidate.key, stored.key)
    }
    let weaker = stored.iterations < iterations || stored.saltEntropyBits < Self.saltEntropy
    if !isValid && stored.iterations < workTarget {
      _ = try derive(password, salt: stored.salt, iterations: workTarget - stored.iterations)
    }
    return PasswordVerification(
      isValid: isValid, needsRehash: isValid && weaker,
      whole: isValid && sealed != nil ? candidate.description : nil)
  }

  /// Spends `iterations` of work, as checking a password against a stored hash of that cost
  /// would, and always fails.
  ///
  /// Used for unknown user names so that they cannot be told apart by timing (Django does the
  /// same in `ModelBackend.authenticate`). The cost comes from the stored hashes, never from
  /// the count configured for new ones.
  public func verifyAgainstDummy(password: String, iterations: Int) throws(CryptoError)
    -> PasswordVerification
  {
    let count = min(max(iterations, 1), Self.maximumIterations)
    _ = try hash(password: password, salt: Self.makeSalt(), iterations: count)
    return PasswordVerification(isValid: false, needsRehash: false)
  }
}
