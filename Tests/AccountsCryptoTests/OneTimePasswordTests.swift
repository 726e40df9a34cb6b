import AccountsCrypto
import AccountsTestSupport
import Foundation
import Testing

private func hex(_ text: String) -> [UInt8] {
  let digits = Array(text.filter { !$0.isWhitespace })
  return stride(from: 0, to: digits.count, by: 2).map {
    UInt8(String(digits[$0...$0 + 1]), radix: 16) ?? 0
  }
}

@Suite("Base32 (RFC 4648)")
struct Base32Tests {
  /// RFC 4648 §10's vectors, both ways.
  @Test(arguments: [
    ("", ""), ("f", "MY======"), ("fo", "MZXQ===="), ("foo", "MZXW6==="), ("foob", "MZXW6YQ="),
    ("fooba", "MZXW6YTB"), ("foobar", "MZXW6YTBOI======"),
  ])
  func rfcVectors(_ plain: String, _ encoded: String) {
    #expect(Base32.encode(Array(plain.utf8)) == encoded)
    #expect(Base32.decode(encoded) == Array(plain.utf8))
  }

  /// Lower case, spaces, hyphens and missing padding decode as people type secrets.
  @Test func forgivingInput() {
    #expect(Base32.decode("mzxw 6ytb-oi") == Array("foobar".utf8))
    #expect(Base32.encode(Array("foobar".utf8), padded: false) == "MZXW6YTBOI")
  }

  /// Not Base32: letters outside the alphabet, text after padding, stray bits.
  @Test(arguments: ["MZXW1", "MZXW6===YQ", "MZXW8YQ=", "MZ!W6", "MZXW6YR="])
  func refusals(_ text: String) {
    #expect(Base32.decode(text) == nil)
  }

  /// Random bytes survive a round trip.
  @Test func roundTrip() throws {
    for length in 0..<40 {
      let bytes = try SecureRandom.bytes(length)
      #expect(Base32.decode(Base32.encode(bytes)) == bytes)
    }
  }
}

@Suite("HMAC")
struct HMACTests {
  /// RFC 2202 test cases 1 and 2 (HMAC-SHA1) and RFC 4231 test case 2 (HMAC-SHA256).
  @Test func rfcVectors() throws {
    #expect(
      try HMAC.sha1(key: [UInt8](repeating: 0x0b, count: 20), message: Array("Hi There".utf8))
        == hex("b617318655057264e28bc0b6fb378c8ef146be00"))
    #expect(
      try HMAC.sha1(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        == hex("effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"))
    #expect(
      try HMAC.sha256(
        key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        == hex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"))
  }
}

@Suite("One-time passwords")
struct OneTimePasswordTests {
  let rfcSecret = Array("12345678901234567890".utf8)

  /// RFC 4226 Appendix D: HOTP of counters 0 to 9.
  @Test func hotpVectors() throws {
    let expected = [
      "755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871",
      "520489",
    ]
    for (counter, code) in expected.enumerated() {
      #expect(try OneTimePassword.hotp(secret: rfcSecret, counter: UInt64(counter)) == code)
    }
  }

  /// RFC 6238 Appendix B: TOTP with SHA-1, 8 digits, at the listed times.
  @Test(arguments: [
    (59.0, "94287082"), (1_111_111_109, "07081804"), (1_111_111_111, "14050471"),
    (1_234_567_890, "89005924"), (2_000_000_000, "69279037"), (20_000_000_000, "65353130"),
  ])
  func totpVectors(_ time: Double, _ code: String) throws {
    let date = Date(timeIntervalSince1970: time)
    #expect(try OneTimePassword.totp(secret: rfcSecret, at: date, digits: 8) == code)
  }

  /// Time steps are whole 30-second periods since the epoch.
  @Test func timeSteps() {
    #expect(OneTimePassword.timeStep(at: Date(timeIntervalSince1970: 59)) == 1)
    #expect(OneTimePassword.timeStep(at: Date(timeIntervalSince1970: 60)) == 2)
    #expect(OneTimePassword.timeStep(at: Date(timeIntervalSince1970: 0)) == 0)
  }

  /// Debian's `oathtool` is the oracle: random 160-bit secrets at random times give the codes it
  /// gives (`oathtool --totp -b --now @TIME SECRET`).
  @Test func agreesWithOathtool() throws {
    for _ in 0..<12 {
      let secret = try SecureRandom.bytes(20)
      let time = Int(try SecureRandom.bytes(4).reduce(0) { $0 << 8 | Int($1) }) % 4_000_000_000
      let (status, theirs) = try runTool(
        "/usr/bin/oathtool", ["--totp", "-b", "--now", "@\(time)", Base32.encode(secret)])
      #expect(status == 0)
      let ours = try OneTimePassword.totp(
        secret: secret, at: Date(timeIntervalSince1970: Double(time)))
      #expect(ours == theirs, "time \(time)")
    }
  }
}

@Suite("AES-256-GCM")
struct AESGCMTests {
  /// The GCM specification's test cases 13, 14 and 16 (256-bit keys), and opening them again.
  @Test func specificationVectors() throws {
    let zeroKey = [UInt8](repeating: 0, count: 32)
    let zeroNonce = [UInt8](repeating: 0, count: 12)
    let empty = try AESGCM.seal([], key: zeroKey, nonce: zeroNonce)
    #expect(empty.ciphertext.isEmpty && empty.tag == hex("530f8afbc74536b9a963b4f1c4cb738b"))
    let block = try AESGCM.seal([UInt8](repeating: 0, count: 16), key: zeroKey, nonce: zeroNonce)
    #expect(block.ciphertext == hex("cea7403d4d606b6e074ec5d3baf39d18"))
    #expect(block.tag == hex("d0d1c8a799996bf0265b98b5d48ab919"))
    let key = hex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")
    let plaintext = hex(
      """
      d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72
      1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39
      """)
    let aad = hex("feedfacedeadbeeffeedfacedeadbeefabaddad2")
    let nonce = hex("cafebabefacedbaddecaf888")
    let sealed = try AESGCM.seal(plaintext, key: key, nonce: nonce, associatedData: aad)
    #expect(
      sealed.ciphertext
        == hex(
          """
          522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa
          8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662
          """))
    #expect(sealed.tag == hex("76fc6ece0f4e1768cddf8853bb2d551b"))
    #expect(
      try AESGCM.open(
        sealed.ciphertext, tag: sealed.tag, key: key, nonce: nonce, associatedData: aad)
        == plaintext)
  }

  /// A changed byte anywhere, another key or other associated data: it does not open.
  @Test func tamperingIsRefused() throws {
    let key = try SecureRandom.bytes(32)
    let box = try AESGCM.seal(Array("a 160-bit TOTP secret".utf8), key: key, associatedData: [7])
    #expect(
      try AESGCM.open(box, key: key, associatedData: [7]) == Array("a 160-bit TOTP secret".utf8))
    for index in [0, 12, box.count - 1] {
      var changed = box
      changed[index] ^= 1
      #expect(throws: CryptoError.authenticationFailed) {
        try AESGCM.open(changed, key: key, associatedData: [7])
      }
    }
    #expect(throws: CryptoError.authenticationFailed) {
      try AESGCM.open(box, key: try SecureRandom.bytes(32), associatedData: [7])
    }
    #expect(throws: CryptoError.authenticationFailed) {
      try AESGCM.open(box, key: key, associatedData: [8])
    }
    #expect(throws: CryptoError.authenticationFailed) {
      try AESGCM.open(Array(box.prefix(20)), key: key)
    }
  }
}

@Suite("Base16 (RFC 4648)")
struct HexTests {
  /// RFC 4648 §10's Base16 vectors, in lowercase, both ways.
  @Test(arguments: [
    ("", ""), ("f", "66"), ("fo", "666f"), ("foo", "666f6f"), ("foob", "666f6f62"),
    ("fooba", "666f6f6261"), ("foobar", "666f6f626172"),
  ])
  func rfcVectors(_ plain: String, _ encoded: String) {
    #expect(Hex.encode(Array(plain.utf8)) == encoded)
    #expect(Hex.decode(encoded) == Array(plain.utf8))
  }

  /// Not lowercase hex: an odd length, upper case, other letters.
  @Test(arguments: ["6", "666F", "66g6", "66 6f"])
  func refusals(_ text: String) {
    #expect(Hex.decode(text) == nil)
  }
}
