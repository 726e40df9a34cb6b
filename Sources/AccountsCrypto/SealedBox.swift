import COpenSSL

/// AES-256-GCM (NIST SP 800-38D) through OpenSSL's EVP cipher interface: secrets stored
/// encrypted and authenticated under a key kept elsewhere.
public enum AESGCM {
  /// The key length in bytes.
  public static let keyByteCount = 32
  /// The nonce length in bytes (96 bits, GCM's own size).
  public static let nonceByteCount = 12
  /// The tag length in bytes.
  public static let tagByteCount = 16

  /// Encrypts `plaintext` under `key` with `nonce`, authenticating `associatedData` too;
  /// returns the ciphertext and the tag.
  public static func seal(
    _ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8] = []
  ) throws(CryptoError) -> (ciphertext: [UInt8], tag: [UInt8]) {
    var tag = [UInt8](repeating: 0, count: tagByteCount)
    let ciphertext = try run(
      encrypt: true, plaintext, key: key, nonce: nonce, associatedData: associatedData,
      tag: &tag)
    return (ciphertext, tag)
  }

  /// Decrypts what `seal` made; throws `.authenticationFailed` when the key, the nonce, the
  /// associated data, the ciphertext or the tag is not what was sealed.
  public static func open(
    _ ciphertext: [UInt8], tag: [UInt8], key: [UInt8], nonce: [UInt8],
    associatedData: [UInt8] = []
  ) throws(CryptoError) -> [UInt8] {
    guard tag.count == tagByteCount else { throw .authenticationFailed }
    var tag = tag
    return try run(
      encrypt: false, ciphertext, key: key, nonce: nonce, associatedData: associatedData,
      tag: &tag)
  }

  /// `nonce || ciphertext || tag` with a fresh random nonce: one value to store.
  public static func seal(_ plaintext: [UInt8], key: [UInt8], associatedData: [UInt8] = [])
    throws(CryptoError) -> [UInt8]
  {
    let nonce = try SecureRandom.bytes(nonceByteCount)
    let (ciphertext, tag) = try seal(
      plaintext, key: key, nonce: nonce, associatedData: associatedData)
    return nonce + ciphertext + tag
  }

  /// Opens a value made by `seal(_:key:associatedData:)`.
  public static func open(_ box: [UInt8], key: [UInt8], associatedData: [UInt8] = [])
    throws(CryptoError) -> [UInt8]
  {
    guard box.count >= nonceByteCount + tagByteCount else { throw .authenticationFailed }
    let nonce = Array(box[..<nonceByteCount])
    let ciphertext = Array(box[nonceByteCount..<(box.count - tagByteCount)])
    let tag = Array(box[(box.count - tagByteCount)...])
    return try open(
      ciphertext, tag: tag, key: key, nonce: nonce, associatedData: associatedData)
  }

  private static func run(
    encrypt: Bool, _ input: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8],
    tag: inout [UInt8]
  ) throws(CryptoError) -> [UInt8] {
    guard key.count == keyByteCount else { throw .invalidParameter("AES-256 key length") }
    guard nonce.count == nonceByteCount else { throw .invalidParameter("GCM nonce length") }
    guard input.count < Int(Int32.max) - 32, associatedData.count < Int(Int32.max) else {
      throw .invalidParameter("GCM input length")
    }
    let crypto = try LibCrypto.shared()
    guard let context = crypto.cipherContextNew() else {
      throw .openSSLFailure("EVP_CIPHER_CTX_new")
    }
    defer { crypto.cipherContextFree(context) }
    let mode: Int32 = encrypt ? 1 : 0
    let setTag = Int32(EVP_CTRL_GCM_SET_TAG)
    let getTag = Int32(EVP_CTRL_GCM_GET_TAG)
    var output = [UInt8](repeating: 0, count: input.count + 16)
    var written: Int32 = 0
    var total = 0
    let ok = key.withUnsafeBufferPointer { keyBytes in
      nonce.withUnsafeBufferPointer { nonceBytes in
        crypto.cipherInit(
          context, crypto.aes256GCM(), nil, keyBytes.baseAddress, nonceBytes.baseAddress, mode)
      }
    }
    guard ok == 1 else { throw .openSSLFailure("EVP_CipherInit_ex") }
    if !associatedData.isEmpty {
      let added = associatedData.withUnsafeBufferPointer { data in
        crypto.cipherUpdate(context, nil, &written, data.baseAddress, Int32(data.count))
      }
      guard added == 1 else { throw .openSSLFailure("EVP_CipherUpdate") }
    }
    if !input.isEmpty {
      let updated = input.withUnsafeBufferPointer { data in
        output.withUnsafeMutableBufferPointer { out in
          crypto.cipherUpdate(
            context, out.baseAddress, &written, data.baseAddress, Int32(data.count))
        }
      }
      guard updated == 1 else { throw .openSSLFailure("EVP_CipherUpdate") }
      total = Int(written)
    }
    if !encrypt {
      let set = tag.withUnsafeMutableBytes {
        crypto.cipherContextControl(context, setTag, Int32(tagByteCount), $0.baseAddress)
      }
      guard set == 1 else { throw .openSSLFailure("EVP_CIPHER_CTX_ctrl") }
    }
    let finished = output.withUnsafeMutableBufferPointer { out in
      crypto.cipherFinal(context, out.baseAddress.map { $0 + total }, &written)
    }
    guard finished == 1 else {
      if !encrypt { throw .authenticationFailed }
      throw .openSSLFailure("EVP_CipherFinal_ex")
    }
    total += Int(written)
    if encrypt {
      let got = tag.withUnsafeMutableBytes {
        crypto.cipherContextControl(context, getTag, Int32(tagByteCount), $0.baseAddress)
      }
      guard got == 1 else { throw .openSSLFailure("EVP_CIPHER_CTX_ctrl") }
    }
    return Array(output[..<total])
  }
}
