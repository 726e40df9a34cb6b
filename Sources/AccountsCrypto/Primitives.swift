/// SHA-256 through OpenSSL's EVP interface.
public enum SHA256 {
  /// The digest length in bytes.
  public static let byteCount = 32

  /// Returns the 32-byte SHA-256 digest of `bytes`.
  public static func hash(_ bytes: [UInt8]) throws(CryptoError) -> [UInt8] {
    let crypto = try LibCrypto.shared()
    var digest = [UInt8](repeating: 0, count: byteCount)
    var length: UInt32 = 0
    let ok = bytes.withUnsafeBufferPointer { input in
      digest.withUnsafeMutableBufferPointer { output in
        crypto.digest(
          input.baseAddress, input.count, output.baseAddress, &length, crypto.sha256(), nil)
      }
    }
    guard ok == 1, length == UInt32(byteCount) else { throw .openSSLFailure("EVP_Digest") }
    return digest
  }
}

/// PBKDF2 with HMAC-SHA256 (RFC 8018) through OpenSSL's `PKCS5_PBKDF2_HMAC`.
public enum PBKDF2 {
  /// Derives `keyLength` bytes from `password` and `salt` with `iterations` rounds.
  public static func sha256(
    password: [UInt8], salt: [UInt8], iterations: Int, keyLength: Int = SHA256.byteCount
  ) throws(CryptoError) -> [UInt8] {
    guard iterations >= 1, iterations <= Int(Int32.max) else {
      throw .invalidParameter("iteration count \(iterations)")
    }
    guard keyLength >= 1, keyLength <= 1024 else {
      throw .invalidParameter("key length \(keyLength)")
    }
    guard password.count <= Int(Int32.max), salt.count <= Int(Int32.max) else {
      throw .invalidParameter("input length")
    }
    let crypto = try LibCrypto.shared()
    var key = [UInt8](repeating: 0, count: keyLength)
    // The password's own bytes, viewed as C chars: no copy of it is made, so none is left behind.
    let ok = password.withUnsafeBufferPointer { passwordBytes in
      passwordBytes.withMemoryRebound(to: CChar.self) { pass in
        salt.withUnsafeBufferPointer { saltBytes in
          key.withUnsafeMutableBufferPointer { output in
            crypto.pbkdf2HMAC(
              pass.baseAddress, Int32(pass.count), saltBytes.baseAddress, Int32(saltBytes.count),
              Int32(iterations), crypto.sha256(), Int32(keyLength), output.baseAddress)
          }
        }
      }
    }
    guard ok == 1 else { throw .openSSLFailure("PKCS5_PBKDF2_HMAC") }
    return key
  }
}

/// Cryptographically secure random bytes from OpenSSL's `RAND_bytes`.
public enum SecureRandom {
  /// Returns `count` random bytes.
  public static func bytes(_ count: Int) throws(CryptoError) -> [UInt8] {
    guard count >= 0, count <= Int(Int32.max) else {
      throw .invalidParameter("random byte count \(count)")
    }
    var output = [UInt8](repeating: 0, count: count)
    if count == 0 { return output }
    let crypto = try LibCrypto.shared()
    let ok = output.withUnsafeMutableBufferPointer {
      crypto.randomBytes($0.baseAddress, Int32(count))
    }
    guard ok == 1 else { throw .openSSLFailure("RAND_bytes") }
    return output
  }

  /// Returns a string of `length` characters drawn uniformly from `alphabet`.
  ///
  /// Uses rejection sampling so that every character is equally likely.
  public static func string(length: Int, alphabet: [Character]) throws(CryptoError) -> String {
    guard !alphabet.isEmpty, alphabet.count <= 256 else {
      throw .invalidParameter("alphabet of \(alphabet.count) characters")
    }
    let limit = 256 - (256 % alphabet.count)
    var result = ""
    while result.count < length {
      for byte in try bytes(length * 2) where Int(byte) < limit && result.count < length {
        result.append(alphabet[Int(byte) % alphabet.count])
      }
    }
    return result
  }
}

/// Comparison whose time does not depend on where two byte strings differ.
public enum ConstantTime {
  /// True when `a` and `b` are equal; the time taken depends only on their lengths.
  ///
  /// Throws only when OpenSSL's `CRYPTO_memcmp` cannot be loaded.
  public static func equals(_ a: [UInt8], _ b: [UInt8]) throws(CryptoError) -> Bool {
    guard a.count == b.count else { return false }
    if a.isEmpty { return true }
    let crypto = try LibCrypto.shared()
    return a.withUnsafeBytes { left in
      b.withUnsafeBytes { right in
        crypto.constantTimeCompare(left.baseAddress, right.baseAddress, left.count) == 0
      }
    }
  }
}
