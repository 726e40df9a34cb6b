import FoundationEssentials

/// HMAC (RFC 2104) through OpenSSL's one-shot `HMAC`.
public enum HMAC {
  /// HMAC-SHA1 of `message` under `key`: 20 bytes (what TOTP authenticator apps compute).
  public static func sha1(key: [UInt8], message: [UInt8]) throws(CryptoError) -> [UInt8] {
    let crypto = try LibCrypto.shared()
    return try mac(crypto, crypto.sha1(), length: 20, key: key, message: message)
  }

  /// HMAC-SHA256 of `message` under `key`: 32 bytes.
  public static func sha256(key: [UInt8], message: [UInt8]) throws(CryptoError) -> [UInt8] {
    let crypto = try LibCrypto.shared()
    return try mac(crypto, crypto.sha256(), length: 32, key: key, message: message)
  }

  private static func mac(
    _ crypto: LibCrypto, _ digest: OpaquePointer?, length: Int, key: [UInt8], message: [UInt8]
  ) throws(CryptoError) -> [UInt8] {
    guard key.count <= Int(Int32.max) else { throw .invalidParameter("HMAC key length") }
    var output = [UInt8](repeating: 0, count: length)
    var written: UInt32 = 0
    let result = key.withUnsafeBytes { keyBytes in
      message.withUnsafeBufferPointer { data in
        output.withUnsafeMutableBufferPointer { out in
          crypto.hmac(
            digest, keyBytes.baseAddress, Int32(keyBytes.count), data.baseAddress, data.count,
            out.baseAddress, &written)
        }
      }
    }
    guard result != nil, written == UInt32(length) else { throw .openSSLFailure("HMAC") }
    return output
  }
}

/// Base32 (RFC 4648 §6), the alphabet authenticator apps take secrets in.
///
/// Written here: OpenSSL has Base64 but no Base32, and the whole of it is a dozen lines.
public enum Base32 {
  private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

  /// `bytes` in Base32, padded with `=` to a multiple of 8 characters unless `padded` is false.
  public static func encode(_ bytes: [UInt8], padded: Bool = true) -> String {
    var output: [UInt8] = []
    output.reserveCapacity((bytes.count + 4) / 5 * 8)
    var buffer: UInt64 = 0
    var bits = 0
    for byte in bytes {
      buffer = buffer << 8 | UInt64(byte)
      bits += 8
      while bits >= 5 {
        bits -= 5
        output.append(alphabet[Int(buffer >> UInt64(bits) & 31)])
      }
    }
    if bits > 0 { output.append(alphabet[Int(buffer << UInt64(5 - bits) & 31)]) }
    if padded {
      while output.count % 8 != 0 { output.append(UInt8(ascii: "=")) }
    }
    return String(decoding: output, as: UTF8.self)
  }

  /// The bytes `text` encodes; nil when it is not Base32.
  ///
  /// Case, spaces and hyphens (as people copy secrets in groups) and the padding are ignored;
  /// leftover bits must be zero.
  public static func decode(_ text: String) -> [UInt8]? {
    var output: [UInt8] = []
    var buffer: UInt64 = 0
    var bits = 0
    var paddingSeen = false
    for byte in text.utf8 {
      if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "-") { continue }
      if byte == UInt8(ascii: "=") {
        paddingSeen = true
        continue
      }
      if paddingSeen { return nil }
      let upper = byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") ? byte - 32 : byte
      guard let value = alphabet.firstIndex(of: upper) else { return nil }
      buffer = buffer << 5 | UInt64(value)
      bits += 5
      if bits >= 8 {
        bits -= 8
        output.append(UInt8(buffer >> UInt64(bits) & 0xFF))
      }
    }
    // What is left must be the zero bits that pad the last byte: fewer than 5, all zero.
    guard bits < 5, buffer & ((1 << UInt64(bits)) - 1) == 0 else { return nil }
    return output
  }
}

/// One-time passwords: HOTP (RFC 4226) and TOTP (RFC 6238) with HMAC-SHA1, as authenticator
/// apps compute them.
public enum OneTimePassword {
  /// The HOTP value of `counter` under `secret`: `digits` decimal digits, zero-padded.
  public static func hotp(secret: [UInt8], counter: UInt64, digits: Int = 6) throws(CryptoError)
    -> String
  {
    guard (6...8).contains(digits) else { throw .invalidParameter("\(digits) digits") }
    let message = (0..<8).map { UInt8(truncatingIfNeeded: counter >> (56 - 8 * UInt64($0))) }
    let mac = try HMAC.sha1(key: secret, message: message)
    // Dynamic truncation (RFC 4226 §5.3).
    let offset = Int(mac[19] & 0x0F)
    let value =
      UInt32(mac[offset] & 0x7F) << 24 | UInt32(mac[offset + 1]) << 16
      | UInt32(mac[offset + 2]) << 8 | UInt32(mac[offset + 3])
    var modulus: UInt32 = 1
    for _ in 0..<digits { modulus *= 10 }
    let code = String(value % modulus)
    return String(repeating: "0", count: digits - code.count) + code
  }

  /// The TOTP time step of `date`: whole `step`-second periods since the Unix epoch.
  public static func timeStep(at date: Date, step: TimeInterval = 30) -> UInt64 {
    let seconds = date.timeIntervalSince1970
    return seconds <= 0 ? 0 : UInt64((seconds / step).rounded(.down))
  }

  /// The TOTP value at `date`: the HOTP value of its time step.
  public static func totp(
    secret: [UInt8], at date: Date, step: TimeInterval = 30, digits: Int = 6
  ) throws(CryptoError) -> String {
    try hotp(secret: secret, counter: timeStep(at: date, step: step), digits: digits)
  }
}
