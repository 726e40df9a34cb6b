import AccountsCrypto
import AccountsTestSupport
import Foundation
import Testing

/// A hash sealed as a fleet host role reads it (PostgreSQL's `accounts.sealed_hash`; the e2e
/// tests check that function against Python's hashlib and libcrypt): a password is checked by
/// recomputing the whole hash from the masked one, and the whole hash comes back only when the
/// password was right.
@Suite("Sealed password hashes")
struct SealedPasswordHashTests {
  let password = "correct horse battery staple"

  /// The sealed form of `whole`, as the store's migration "v7" makes it: the digest after
  /// `settingLength` characters masked with `mask`, `=` kept.
  func seal(_ whole: String, settingLength: Int, mask: Character) throws -> String {
    let digest = Hex.encode(try SHA256.hash(Array(whole.utf8)))
    let masked =
      whole.prefix(settingLength)
      + whole.dropFirst(settingLength).map {
        $0 == "=" ? "=" : mask
      }
    return "sealed$\(digest)$\(String(masked))"
  }

  @Test func pbkdf2HashChecksThroughItsSeal() throws {
    let hasher = PasswordHasher(iterations: 1000)
    let whole = try hasher.hash(
      password: password, salt: "aSaltOfTwentyTwoChars0", iterations: 1000)
    let text = whole.description
    let sealedText = try seal(
      text, settingLength: text.lastIndex(of: "$")!.utf16Offset(in: text) + 1, mask: "A")
    let sealed = try #require(SealedPasswordHash(parsing: sealedText))
    let masked = try #require(EncodedPasswordHash(parsing: SealedPasswordHash.readable(sealedText)))
    #expect(masked.iterations == 1000 && masked.salt == whole.salt)
    #expect(masked.key == [UInt8](repeating: 0, count: 32))
    let right = try hasher.verify(
      password: password, against: masked, workTarget: 1000, sealed: sealed)
    #expect(right.isValid && right.whole == text && !right.needsRehash)
    let wrong = try hasher.verify(
      password: password + "!", against: masked, workTarget: 1000, sealed: sealed)
    #expect(!wrong.isValid && wrong.whole == nil)
    // Without the seal the masked hash is a hash of nothing anyone can type.
    #expect(try !hasher.verify(password: password, against: masked, workTarget: 1000).isValid)
    // A stronger setting asks for a rehash, as for a whole hash.
    let stronger = PasswordHasher(iterations: 2000)
    #expect(
      try stronger.verify(password: password, against: masked, workTarget: 1000, sealed: sealed)
        .needsRehash)
  }

  @Test(arguments: ["yescrypt", "sha-512", "sha-256", "bcrypt"])
  func cryptHashChecksThroughItsSeal(_ method: String) throws {
    let (status, whole) = try runTool("/usr/bin/mkpasswd", ["-m", method, password])
    #expect(status == 0)
    let setting = method == "bcrypt" ? 29 : whole.lastIndex(of: "$")!.utf16Offset(in: whole) + 1
    let sealed = try #require(
      SealedPasswordHash(parsing: try seal(whole, settingLength: setting, mask: ".")))
    #expect(try CryptHash.verify(password: Array(password.utf8), sealed: sealed) == whole)
    #expect(try CryptHash.verify(password: Array((password + "!").utf8), sealed: sealed) == nil)
    #expect(try !CryptHash.verify(password: Array(password.utf8), hash: sealed.masked))
  }

  @Test func onlyTheSealedFormParses() throws {
    let digest = String(repeating: "ab", count: 32)
    #expect(
      SealedPasswordHash(parsing: "sealed$\(digest)$pbkdf2_sha256$1$s$A=")?.masked
        == "pbkdf2_sha256$1$s$A=")
    #expect(SealedPasswordHash(parsing: "pbkdf2_sha256$1000$salt$key") == nil)
    #expect(SealedPasswordHash(parsing: "sealed$\(digest.dropLast(2))$x") == nil)
    #expect(SealedPasswordHash(parsing: "sealed$\(digest.dropLast(1))z$x") == nil)
    #expect(SealedPasswordHash(parsing: "sealed$\(digest)") == nil)
    #expect(SealedPasswordHash.readable("$y$j9T$salt$digest") == "$y$j9T$salt$digest")
  }
}
