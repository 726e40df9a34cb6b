import AccountsCrypto
import AccountsTestSupport
import Foundation
import Testing

/// crypt(3) hashes made by the real tools (`mkpasswd` from Debian's whois package, `htpasswd -B`
/// from apache2-utils) verify through libxcrypt; weak schemes are named, not verified.
@Suite("crypt(3) hashes")
struct CryptHashTests {
  let password = "correct horse battery staple"

  func run(_ tool: String, _ arguments: [String]) throws -> String {
    let (status, output) = try runTool(tool, arguments)
    #expect(status == 0)
    return output
  }

  /// `mkpasswd -m yescrypt|sha-512|sha-256|bcrypt`: the right password verifies, a wrong one
  /// (or one character more) does not.
  @Test(arguments: [
    ("yescrypt", CryptHash.Scheme.yescrypt), ("sha-512", .sha512crypt),
    ("sha-256", .sha256crypt), ("bcrypt", .bcrypt),
  ])
  func mkpasswdHashes(_ method: String, _ scheme: CryptHash.Scheme) throws {
    let hash = try run("/usr/bin/mkpasswd", ["-m", method, password])
    #expect(CryptHash.kind(of: hash) == .supported(scheme))
    #expect(try CryptHash.verify(password: Array(password.utf8), hash: hash))
    #expect(try !CryptHash.verify(password: Array("incorrect horse battery".utf8), hash: hash))
    #expect(try !CryptHash.verify(password: Array((password + "!").utf8), hash: hash))
  }

  /// `htpasswd -nbB` writes `$2y$` bcrypt: it verifies.
  @Test func htpasswdBcrypt() throws {
    let line = try run("/usr/bin/htpasswd", ["-nbB", "bob", password])
    let hash = String(try #require(line.split(separator: ":", maxSplits: 1).last))
    #expect(hash.hasPrefix("$2y$"))
    #expect(try CryptHash.verify(password: Array(password.utf8), hash: hash))
    #expect(try !CryptHash.verify(password: Array("wrong".utf8), hash: hash))
  }

  /// Weak schemes, made by the same tools, are named and never verified.
  @Test func weakSchemesAreNamed() throws {
    let md5 = try run("/usr/bin/mkpasswd", ["-m", "md5crypt", password])
    #expect(CryptHash.kind(of: md5) == .weak(.md5crypt))
    #expect(try !CryptHash.verify(password: Array(password.utf8), hash: md5))
    let apr1 = String(
      try #require(
        try run("/usr/bin/htpasswd", ["-nbm", "bob", password]).split(separator: ":").last))
    #expect(CryptHash.kind(of: apr1) == .weak(.apr1))
    let sha = String(
      try #require(
        try run("/usr/bin/htpasswd", ["-nbs", "bob", password]).split(separator: ":").last))
    #expect(CryptHash.kind(of: sha) == .weak(.sha1))
    let des = try run("/usr/bin/mkpasswd", ["-m", "descrypt", "password"])
    #expect(CryptHash.kind(of: des) == .weak(.des))
    #expect(CryptHash.kind(of: "plain text password") == .unknown)
    #expect(CryptHash.kind(of: "pbkdf2_sha256$1000$salt$key") == .unknown)
  }

  /// A damaged hash or a NUL in the password is false, not an error.
  @Test func damagedInput() throws {
    #expect(try !CryptHash.verify(password: Array(password.utf8), hash: "$6$"))
    #expect(try !CryptHash.verify(password: Array(password.utf8), hash: "$y$broken"))
    let hash = try run("/usr/bin/mkpasswd", ["-m", "sha-512", password])
    #expect(try !CryptHash.verify(password: Array(password.utf8) + [0], hash: hash))
  }
}
