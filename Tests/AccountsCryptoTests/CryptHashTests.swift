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

  // Made once by the tools with the password above, kept here because each takes seconds (or
  // a gigabyte) to make again: the costliest setting each tool offers, and just above it.
  /// `htpasswd -nbB -C 17` (apr-util refuses -C 18).
  static let bcryptAtCeiling = "$2y$17$34UbECdb56WohxmEu7hk.uLWnNrnRHD8hIDutvz0sWy9OpI8MttXG"
  /// `mkpasswd -m bcrypt -R 18`.
  static let bcryptOverCeiling = "$2b$18$2JfQ5CrQD4bcgFBPWtXVheMJGeOyaesm9YWJwSKe/hutoIROUbVae"
  /// `mkpasswd -m sha-512 -R 9999999`.
  static let sha512AtCeiling =
    "$6$rounds=9999999$02sj9f1AvSCZZwMM$cHJBvaaLmV7vi3ZR.serPKKmDr5SM1gxGSDBl4NSf4vNKSFFrQsS6"
    + "/IPfi9alvSQ0mhDqxdev.xIhGCEGZ7Xj0"
  /// `mkpasswd -m sha-512 -R 10000000`.
  static let sha512OverCeiling =
    "$6$rounds=10000000$DSF6O0Z0KOatQf6d$7r0u/Sm/31uyYlTt1Vn9R2m6bYCcG7XRtklJGMhBW.IWeSPM5MCIf"
    + "jmh2E.yNT7LSPxh5bwYMfIDcTtBjjDP/1"
  /// `mkpasswd -m sha-256 -R 9999999`.
  static let sha256AtCeiling =
    "$5$rounds=9999999$3PA6f4KhpQ3VPsxP$y31fThdXp7tgcXaW1WJrSUOsbK3SHOPR4XL7qb382g2"
  /// `mkpasswd -m sha-256 -R 10000000`.
  static let sha256OverCeiling =
    "$5$rounds=10000000$yspvEwjT.30Y.vlz$QxmTVeuAtGetpLNaLZejIOat/K2RX0rCwXcRdH3LlMB"
  /// `mkpasswd -m yescrypt -R 11`: N = 2^18, r = 32, 1 GiB.
  static let yescryptAtCeiling =
    "$y$jFT$gD9VinzuIG2QM95bOgIMF.$P/d0V0fNIUskXyozsjGhzb0CE9MkGEjhLZ5Tir1RH2B"
  /// libxcrypt's crypt(3) with the setting `$y$jGT$…` (N = 2^19, 2 GiB; mkpasswd refuses
  /// -R 12).
  static let yescryptOverCeiling =
    "$y$jGT$gD9VinzuIG2QM95bOgIMF.$PhZf4QCdnbvAQSvfwjCe5hKAIuqKvjx1tQLB2V5KoK7"
  /// libxcrypt's crypt(3) with the setting `$y$j9T..$…`: cost 5's N and r, and p = 2.
  static let yescryptTwoLanes =
    "$y$j9T..$gD9VinzuIG2QM95bOgIMF.$l.LV7XM4rzXNY8LKIIKJ1dFgkO69i0SOWN7L0KY9Kq9"

  /// The costliest hash each tool makes is within its scheme's ceiling; one step more is
  /// over it, and is false even with the right password: libxcrypt, which would take seconds
  /// to say true, is never asked.
  @Test func ceilings() throws {
    let within: [(String, CryptHash.Cost)] = [
      (Self.bcryptAtCeiling, .bcrypt(log2Rounds: 17)),
      (Self.sha512AtCeiling, .shaCrypt(.sha512crypt, rounds: 9_999_999)),
      (Self.sha256AtCeiling, .shaCrypt(.sha256crypt, rounds: 9_999_999)),
      (Self.yescryptAtCeiling, .yescrypt(CryptHash.YescryptParameters(log2N: 18, r: 32))),
    ]
    for (hash, cost) in within {
      #expect(CryptHash.cost(of: hash) == cost, "\(hash)")
      #expect(cost.isWithinCeiling, "\(hash)")
    }
    #expect(CryptHash.YescryptParameters(log2N: 18, r: 32).memory == 1 << 30)
    var twoLanes = CryptHash.YescryptParameters(log2N: 12, r: 32)
    twoLanes.p = 2
    let over: [(String, CryptHash.Cost)] = [
      (Self.bcryptOverCeiling, .bcrypt(log2Rounds: 18)),
      (Self.sha512OverCeiling, .shaCrypt(.sha512crypt, rounds: 10_000_000)),
      (Self.sha256OverCeiling, .shaCrypt(.sha256crypt, rounds: 10_000_000)),
      (Self.yescryptOverCeiling, .yescrypt(CryptHash.YescryptParameters(log2N: 19, r: 32))),
      (Self.yescryptTwoLanes, .yescrypt(twoLanes)),
    ]
    for (hash, cost) in over {
      #expect(CryptHash.cost(of: hash) == cost, "\(hash)")
      #expect(!cost.isWithinCeiling, "\(hash)")
      #expect(try !CryptHash.verify(password: Array(password.utf8), hash: hash), "\(hash)")
    }
  }

  /// yescrypt's parameters are decoded from real `mkpasswd -m yescrypt -R N` hashes as
  /// libxcrypt's crypt_gensalt sets them: r = 8 and N = 2^(N+9) below cost 3, r = 32 and
  /// N = 2^(N+7) from 3; each still verifies.
  @Test(arguments: 1...8)
  func yescryptCostFactors(_ factor: Int) throws {
    let hash = try run("/usr/bin/mkpasswd", ["-m", "yescrypt", "-R", "\(factor)", password])
    let expected =
      factor < 3
      ? CryptHash.YescryptParameters(log2N: factor + 9, r: 8)
      : CryptHash.YescryptParameters(log2N: factor + 7, r: 32)
    #expect(CryptHash.cost(of: hash) == .yescrypt(expected))
    #expect(CryptHash.cost(of: hash)?.isWithinCeiling == true)
    #expect(try CryptHash.verify(password: Array(password.utf8), hash: hash))
  }

  /// The tools' default settings are read too: `mkpasswd -m sha-512` names no rounds (5,000),
  /// `htpasswd -B` writes cost 5.
  @Test func defaultSettings() throws {
    let sha = try run("/usr/bin/mkpasswd", ["-m", "sha-512", password])
    #expect(CryptHash.cost(of: sha) == .shaCrypt(.sha512crypt, rounds: 5000))
    let line = try run("/usr/bin/htpasswd", ["-nbB", "bob", password])
    let bcrypt = String(try #require(line.split(separator: ":", maxSplits: 1).last))
    let trimmed = bcrypt.trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(CryptHash.cost(of: trimmed) == .bcrypt(log2Rounds: 5))
  }

  /// A hash of a kept scheme that breaks its form has no cost (it is damaged): a bad length,
  /// a byte outside the alphabet or a NUL, a cost libxcrypt refuses, rounds out of range or
  /// with a leading zero, yescrypt parameters that do not decode.
  @Test func malformedHashesHaveNoCost() {
    let digest512 = String(Self.sha512AtCeiling.split(separator: "$").last ?? "")
    let bcryptTail = String(Self.bcryptAtCeiling.dropFirst(7))
    let yescryptTail = "$gD9VinzuIG2QM95bOgIMF.$P/d0V0fNIUskXyozsjGhzb0CE9MkGEjhLZ5Tir1RH2B"
    let yescryptDigest = String(yescryptTail.split(separator: "$").last ?? "")
    var damaged: [String] = ["$6$", "$6$abc", "$y$broken", "$2b$"]
    // bcrypt: a length, a cost libxcrypt refuses, a byte outside the alphabet.
    damaged += [Self.bcryptAtCeiling + "A", String(Self.bcryptAtCeiling.dropLast())]
    damaged += ["$2b$03$" + bcryptTail, "$2b$32$" + bcryptTail, "$2b$1x$" + bcryptTail]
    damaged += ["$2b$17$" + bcryptTail.dropLast() + "\u{0}"]
    damaged += ["$2b$17$" + bcryptTail.dropLast() + "\u{e9}"]
    // SHA-crypt: the digest's length, rounds, the salt.
    damaged += ["$6$salt$" + digest512.dropLast(), "$6$salt$" + digest512 + "A"]
    damaged += ["$6$rounds=999$salt$" + digest512, "$6$rounds=01000$salt$" + digest512]
    damaged += ["$6$rounds=1000000000$salt$" + digest512, "$6$rounds=$salt$" + digest512]
    damaged += ["$6$12345678901234567$" + digest512, "$6$sa:lt$" + digest512]
    damaged += ["$6$sa\u{0}lt$" + digest512, "$6$salt$" + digest512 + "\u{0}"]
    // yescrypt: the digest's length, parameters that do not decode, a salt too long.
    damaged += ["$y$jFT" + yescryptTail + "A", "$y$j~T" + yescryptTail, "$y$jF" + yescryptTail]
    damaged += ["$y$jFT/" + yescryptTail, "$y$jFTz" + yescryptTail]
    damaged += ["$y$jFT$" + String(repeating: "A", count: 87) + "$" + yescryptDigest]
    for hash in damaged {
      #expect(CryptHash.cost(of: hash) == nil, "\(String(reflecting: hash))")
    }
    #expect(CryptHash.cost(of: "$6$$" + digest512) == .shaCrypt(.sha512crypt, rounds: 5000))
  }
}
