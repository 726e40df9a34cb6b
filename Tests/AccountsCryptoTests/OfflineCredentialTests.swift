import AccountsCrypto
import Testing

private func hex(_ text: String) -> [UInt8] {
  let digits = Array(text.filter { !$0.isWhitespace })
  return stride(from: 0, to: digits.count, by: 2).map {
    UInt8(String(digits[$0...$0 + 1]), radix: 16) ?? 0
  }
}

@Suite("HKDF-SHA256")
struct HKDFTests {
  /// RFC 5869 appendix A.1: a salt, an info, 42 bytes (two blocks).
  @Test func rfc5869CaseOne() throws {
    let prk = try HKDF.extract(
      salt: hex("000102030405060708090a0b0c"), inputKey: [UInt8](repeating: 0x0b, count: 22))
    #expect(prk == hex("077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5"))
    let okm = try HKDF.expand(pseudorandomKey: prk, info: hex("f0f1f2f3f4f5f6f7f8f9"), length: 42)
    #expect(
      okm
        == hex(
          "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"))
  }

  /// RFC 5869 appendix A.3: no salt, no info.
  @Test func rfc5869CaseThree() throws {
    let prk = try HKDF.extract(salt: [], inputKey: [UInt8](repeating: 0x0b, count: 22))
    #expect(prk == hex("19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04"))
    let okm = try HKDF.expand(pseudorandomKey: prk, info: [], length: 42)
    #expect(
      okm
        == hex(
          "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"))
  }
}

@Suite("Offline credential")
struct OfflineCredentialTests {
  /// The verifier and the sealing key are HKDF-Expand of one PBKDF2-SHA256 under two labels
  /// (the values computed with Python's hashlib and hmac).
  @Test func fixedVector() throws {
    let credential = try OfflineCredential(
      password: "correct horse battery staple", salt: Array(0..<16), iterations: 1000)
    #expect(
      credential.verifier
        == hex("07b45559a99c7b3af14f47292afb01ac16b48ffc8394384d19b32dea9cf090ad"))
    #expect(
      credential.sealingKey
        == hex("fd7d80eabd0106f94b9705b1d7d096cfe0a2e0986a555f445455e089713c874a"))
  }

  /// A secret sealed under one password's key opens with it and with no other's.
  @Test func sealedSecretOpensOnlyWithThePassword() throws {
    let salt = try OfflineCredential.makeSalt()
    let right = try OfflineCredential(password: "the right one", salt: salt, iterations: 1000)
    let wrong = try OfflineCredential(password: "the wrong one", salt: salt, iterations: 1000)
    let secret = Array("12345678901234567890".utf8)
    let box = try AESGCM.seal(secret, key: right.sealingKey, associatedData: Array("alice".utf8))
    #expect(
      try AESGCM.open(box, key: right.sealingKey, associatedData: Array("alice".utf8)) == secret)
    #expect(throws: CryptoError.self) {
      try AESGCM.open(box, key: wrong.sealingKey, associatedData: Array("alice".utf8))
    }
    #expect(right.verifier != wrong.verifier && right.verifier != right.sealingKey)
  }
}
