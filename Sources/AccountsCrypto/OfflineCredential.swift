/// HKDF with HMAC-SHA256 (RFC 5869): keys for separate uses drawn from one secret.
///
/// Written over libcrypto's HMAC rather than through OpenSSL's own HKDF, which is reached only
/// through `EVP_PKEY_CTX` controls: nine more functions to open by name (libcrypto is opened at
/// first use) against these few lines, checked with RFC 5869's vectors.
public enum HKDF {
  /// The pseudorandom key of `inputKey` under `salt` (HKDF-Extract).
  public static func extract(salt: [UInt8], inputKey: [UInt8]) throws(CryptoError) -> [UInt8] {
    try HMAC.sha256(key: salt.isEmpty ? [UInt8](repeating: 0, count: 32) : salt, message: inputKey)
  }

  /// `length` bytes of `pseudorandomKey` for the use `info` names (HKDF-Expand).
  public static func expand(pseudorandomKey: [UInt8], info: [UInt8], length: Int)
    throws(CryptoError) -> [UInt8]
  {
    guard length >= 1, length <= 255 * SHA256.byteCount else {
      throw .invalidParameter("HKDF length \(length)")
    }
    var output: [UInt8] = []
    var block: [UInt8] = []
    var counter: UInt8 = 1
    while output.count < length {
      block = try HMAC.sha256(key: pseudorandomKey, message: block + info + [counter])
      output += block
      counter &+= 1
    }
    return Array(output.prefix(length))
  }
}

/// What a host keeps to check a person's password while the server is away, and the key it
/// seals that person's TOTP secret under: both drawn (HKDF) from one PBKDF2-SHA256 of the
/// password under a salt of the host's own, so the cache alone gives neither without a
/// full-cost guess, and the verifier is nothing the server takes as proof.
public struct OfflineCredential: Sendable {
  /// The salt's length in bytes.
  public static let saltByteCount = 16

  /// Compared with the cache's to check a password.
  public let verifier: [UInt8]
  /// Seals the TOTP secret (AES-256-GCM).
  public let sealingKey: [UInt8]

  /// The verifier and key of `password` (its UTF-8, NFKC as the store hashes it) under `salt`,
  /// at `iterations` PBKDF2 rounds, counted on `meter` if given.
  public init(password: String, salt: [UInt8], iterations: Int, meter: WorkMeter? = nil)
    throws(CryptoError)
  {
    meter?.add(iterations)
    let master = try PBKDF2.sha256(
      password: Array(password.utf8), salt: salt, iterations: iterations)
    verifier = try HKDF.expand(
      pseudorandomKey: master, info: Array("accounts offline verifier".utf8), length: 32)
    sealingKey = try HKDF.expand(
      pseudorandomKey: master, info: Array("accounts offline sealing key".utf8), length: 32)
  }

  /// A new random salt.
  public static func makeSalt() throws(CryptoError) -> [UInt8] {
    try SecureRandom.bytes(saltByteCount)
  }
}
