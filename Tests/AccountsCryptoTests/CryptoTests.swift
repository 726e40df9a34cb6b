import AccountsCrypto
import Foundation
import Testing

private func hex(_ text: String) -> [UInt8] {
  let digits = Array(text.filter { !$0.isWhitespace })
  return stride(from: 0, to: digits.count, by: 2).map {
    UInt8(String(digits[$0...$0 + 1]), radix: 16) ?? 0
  }
}

@Suite("SHA-256")
struct SHA256Tests {
  /// SHA-256 of the empty string and of "abc" (FIPS 180-2 examples).
  @Test func knownDigests() throws {
    #expect(
      try SHA256.hash([])
        == hex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"))
    #expect(
      try SHA256.hash(Array("abc".utf8))
        == hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
  }

  /// The two-block FIPS 180-2 message.
  @Test func twoBlockMessage() throws {
    let message = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
    #expect(
      try SHA256.hash(Array(message.utf8))
        == hex("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"))
  }
}

@Suite("PBKDF2-HMAC-SHA256")
struct PBKDF2Tests {
  /// RFC 7914 §11, first PBKDF2-HMAC-SHA256 vector (c = 1, dkLen = 64).
  @Test func rfc7914VectorOne() throws {
    let key = try PBKDF2.sha256(
      password: Array("passwd".utf8), salt: Array("salt".utf8), iterations: 1, keyLength: 64)
    #expect(
      key
        == hex(
          """
          55 ac 04 6e 56 e3 08 9f ec 16 91 c2 25 44 b6 05 f9 41 85 21 6d de 04 65 e6 8b 9d 57 c2 0d
          ac bc 49 ca 9c cc f1 79 b6 45 99 16 64 b3 9d 77 ef 31 7c 71 b8 45 b1 e3 0b d5 09 11 20 41
          d3 a1 97 83
          """))
  }

  /// RFC 7914 §11, second vector (c = 80,000, dkLen = 64).
  @Test func rfc7914VectorTwo() throws {
    let key = try PBKDF2.sha256(
      password: Array("Password".utf8), salt: Array("NaCl".utf8), iterations: 80000,
      keyLength: 64)
    #expect(
      key
        == hex(
          """
          4d dc d8 f6 0b 98 be 21 83 0c ee 5e f2 27 01 f9 64 1a 44 18 d0 4c 04 14 ae ff 08 87 6b 34
          ab 56 a1 d4 25 a1 22 58 33 54 9a db 84 1b 51 c9 b3 17 6a 27 2b de bb a1 d0 78 47 8f 62 b3
          97 f3 3c 8d
          """))
  }

  /// Iteration counts below 1 are refused rather than passed to OpenSSL.
  @Test func refusesZeroIterations() {
    #expect(throws: CryptoError.self) {
      try PBKDF2.sha256(password: [1], salt: [2], iterations: 0)
    }
  }
}

@Suite("Randomness and comparison")
struct RandomnessTests {
  /// RAND_bytes gives the length asked for, and two draws differ.
  @Test func randomBytes() throws {
    let first = try SecureRandom.bytes(32)
    let second = try SecureRandom.bytes(32)
    #expect(first.count == 32)
    #expect(first != second)
  }

  /// Salts are 22 characters of Django's alphabet (≥ 128 bits), never with `$`, all different.
  @Test func salts() throws {
    var seen = Set<String>()
    for _ in 0..<200 {
      let salt = try PasswordHasher.makeSalt()
      #expect(salt.count == 22)
      #expect(salt.allSatisfy { PasswordHasher.saltAlphabet.contains($0) })
      seen.insert(salt)
    }
    #expect(seen.count == 200)
  }

  /// CRYPTO_memcmp-based comparison: equal, different, different lengths, empty.
  @Test func constantTimeEquals() throws {
    #expect(try ConstantTime.equals([1, 2, 3], [1, 2, 3]))
    #expect(try !ConstantTime.equals([1, 2, 3], [1, 2, 4]))
    #expect(try !ConstantTime.equals([1, 2, 3], [1, 2]))
    #expect(try ConstantTime.equals([], []))
  }
}

@Suite("Django password hashes")
struct PasswordHasherTests {
  // Made by Django 5.2's PBKDF2PasswordHasher.encode(password, salt, iterations).
  static let djangoAtCurrentCount =
    "pbkdf2_sha256$1200000$DjangoSaltValue1234567$bdb5d5AETLlGoYfGT4sfxD/9b2W6YA3m9ns8uqr35mQ="
  static let djangoAt100k =
    "pbkdf2_sha256$100000$seasalt2024abcdefghij$n9OKb5gYvAGCxZx0dpKuHdDtudX7WwrUjnDpbmU9OhQ="
  static let djangoUnicode =
    "pbkdf2_sha256$1000$UnicodeSaltXyz9876543$g4MD6bb2teH3Xo/srajDalClWyx/3E2EdVR8qdZ64U0="

  /// A hash made by Django verifies here, and the wrong password does not.
  @Test func verifiesDjangoHash() throws {
    let stored = try #require(EncodedPasswordHash(parsing: Self.djangoAtCurrentCount))
    let hasher = PasswordHasher()
    let right = try hasher.verify(
      password: "correct horse battery staple", against: stored, workTarget: stored.iterations)
    #expect(right == PasswordVerification(isValid: true, needsRehash: false))
    let wrong = try hasher.verify(
      password: "correct horse battery stapler", against: stored, workTarget: stored.iterations)
    #expect(!wrong.isValid)
  }

  /// Hashing with Django's salt and count reproduces Django's exact string (non-ASCII too).
  @Test func reproducesDjangoEncoding() throws {
    let hasher = PasswordHasher()
    #expect(
      try hasher.hash(
        password: "pässwörd with ünïcödé é", salt: "UnicodeSaltXyz9876543",
        iterations: 1000
      ).description == Self.djangoUnicode)
    #expect(
      try hasher.hash(
        password: "correct horse battery staple", salt: "seasalt2024abcdefghij",
        iterations: 100_000
      ).description == Self.djangoAt100k)
  }

  /// A salt under 128 bits (21 characters) asks to be replaced, as Django's `must_update` does.
  @Test func shortSaltNeedsRehash() throws {
    let hasher = PasswordHasher(iterations: 1000)
    let weak = try hasher.hash(password: "p", salt: "DjangoSaltValue123456", iterations: 1000)
    #expect(
      try hasher.verify(password: "p", against: weak, workTarget: weak.iterations).needsRehash)
  }

  /// A Django hash at 100,000 iterations verifies and asks to be replaced.
  @Test func olderCountNeedsRehash() throws {
    let stored = try #require(EncodedPasswordHash(parsing: Self.djangoAt100k))
    let result = try PasswordHasher().verify(
      password: "correct horse battery staple", against: stored, workTarget: stored.iterations)
    #expect(result == PasswordVerification(isValid: true, needsRehash: true))
  }

  /// New hashes use the policy's count and a fresh salt, and verify.
  @Test func newHashesRoundTrip() throws {
    let hasher = PasswordHasher(iterations: 2000)
    let first = try hasher.hash(password: "a long enough passphrase")
    let second = try hasher.hash(password: "a long enough passphrase")
    #expect(first.iterations == 2000)
    #expect(first.salt != second.salt)
    #expect(first.description.hasPrefix("pbkdf2_sha256$2000$"))
    let parsed = try #require(EncodedPasswordHash(parsing: first.description))
    #expect(
      try hasher.verify(
        password: "a long enough passphrase", against: parsed, workTarget: parsed.iterations
      ).isValid)
  }

  /// The default count is Django 6.0's 1,200,000.
  @Test func defaultCount() {
    #expect(PasswordHasher().iterations == 1_200_000)
  }

  /// Malformed hashes are not parsed: wrong algorithm, missing parts, bad count, bad key.
  @Test(arguments: [
    "", "pbkdf2_sha1$1000$salt$3Q6E4Qp/G0I5J9J2R4mJJrIndvJqPudUFstuQzBTD5E=",
    "pbkdf2_sha256$1000$salt", "pbkdf2_sha256$0$salt$3Q6E4Qp/G0I5J9J2R4mJJrIndvJqPudUFstuQzBTD5E=",
    "pbkdf2_sha256$01000$salt$3Q6E4Qp/G0I5J9J2R4mJJrIndvJqPudUFstuQzBTD5E=",
    "pbkdf2_sha256$1000$$3Q6E4Qp/G0I5J9J2R4mJJrIndvJqPudUFstuQzBTD5E=",
    "pbkdf2_sha256$1000$salt$c2hvcnQ=", "pbkdf2_sha256$1000$salt$not base64!",
  ])
  func rejectsMalformed(_ encoded: String) {
    #expect(EncodedPasswordHash(parsing: encoded) == nil)
  }

  /// Unknown users cost the same PBKDF2 work as a wrong password (Django's dummy hash): the
  /// count asked for, not the count configured for new hashes.
  @Test func dummyVerificationFails() throws {
    let meter = WorkMeter()
    let hasher = PasswordHasher(iterations: 1000, meter: meter)
    #expect(try !hasher.verifyAgainstDummy(password: "x", iterations: 7000).isValid)
    #expect(meter.iterations == 7000)
  }

  /// A wrong password against a cheaper stored hash is topped up to the work target.
  @Test func wrongPasswordCostsTheWorkTarget() throws {
    let meter = WorkMeter()
    let hasher = PasswordHasher(iterations: 1000, meter: meter)
    let stored = try hasher.hash(
      password: "right", salt: "abcdefghijklmnopqrstuv", iterations: 2000)
    let before = meter.iterations
    #expect(try !hasher.verify(password: "wrong", against: stored, workTarget: 9000).isValid)
    #expect(meter.iterations - before == 9000)
    let afterWrong = meter.iterations
    #expect(try hasher.verify(password: "right", against: stored, workTarget: 9000).isValid)
    #expect(meter.iterations - afterWrong == 2000)
  }

  /// A stored count above the ceiling (100,000,000) is a damaged hash: it does not parse, so
  /// no login spends minutes on it.
  @Test func countAboveCeilingIsDamaged() {
    let key = "3Q6E4Qp/G0I5J9J2R4mJJrIndvJqPudUFstuQzBTD5E="
    #expect(EncodedPasswordHash(parsing: "pbkdf2_sha256$100000000$salt$\(key)") != nil)
    #expect(EncodedPasswordHash(parsing: "pbkdf2_sha256$100000001$salt$\(key)") == nil)
    #expect(EncodedPasswordHash(parsing: "pbkdf2_sha256$2147483647$salt$\(key)") == nil)
  }
}
