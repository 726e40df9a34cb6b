import COpenSSL
import DynamicLibrary

/// The few functions of the system's OpenSSL libcrypto that accounts calls, opened the first time
/// a hash, a random number or a comparison is needed.
///
/// Opened through `DynamicLibrary` (why: there): linked, libcrypto would be opened and its 3,400
/// symbols bound before `main` in every run. The function types come from OpenSSL's headers
/// (COpenSSL's shim.h).
struct LibCrypto: Sendable {
  /// The library opened, as Debian's and Ubuntu's libssl3 package installs it.
  static let soname = "libcrypto.so.3"

  let digest: accounts_EVP_Digest_fn
  let sha256: accounts_EVP_sha256_fn
  let pbkdf2HMAC: accounts_PKCS5_PBKDF2_HMAC_fn
  let randomBytes: accounts_RAND_bytes_fn
  let constantTimeCompare: accounts_CRYPTO_memcmp_fn
  let hmac: accounts_HMAC_fn
  let sha1: accounts_EVP_sha1_fn
  let aes256GCM: accounts_EVP_aes_256_gcm_fn
  let cipherContextNew: accounts_EVP_CIPHER_CTX_new_fn
  let cipherContextFree: accounts_EVP_CIPHER_CTX_free_fn
  let cipherContextControl: accounts_EVP_CIPHER_CTX_ctrl_fn
  let cipherInit: accounts_EVP_CipherInit_ex_fn
  let cipherUpdate: accounts_EVP_CipherUpdate_fn
  let cipherFinal: accounts_EVP_CipherFinal_ex_fn

  private static let library = LazyLibrary(sonames: [soname]) {
    library throws(DynamicLibrary.Failure) in try LibCrypto(library)
  }

  /// The loaded library; throws `CryptoError.openSSLUnavailable` when it cannot be opened or
  /// lacks a function.
  static func shared() throws(CryptoError) -> LibCrypto {
    do throws(DynamicLibrary.Failure) {
      return try library.functions()
    } catch {
      throw .openSSLUnavailable(library: error.library, reason: error.reason)
    }
  }

  private init(_ library: DynamicLibrary) throws(DynamicLibrary.Failure) {
    digest = try library.function("EVP_Digest", as: accounts_EVP_Digest_fn.self)
    sha256 = try library.function("EVP_sha256", as: accounts_EVP_sha256_fn.self)
    pbkdf2HMAC = try library.function("PKCS5_PBKDF2_HMAC", as: accounts_PKCS5_PBKDF2_HMAC_fn.self)
    randomBytes = try library.function("RAND_bytes", as: accounts_RAND_bytes_fn.self)
    constantTimeCompare = try library.function(
      "CRYPTO_memcmp", as: accounts_CRYPTO_memcmp_fn.self)
    hmac = try library.function("HMAC", as: accounts_HMAC_fn.self)
    sha1 = try library.function("EVP_sha1", as: accounts_EVP_sha1_fn.self)
    aes256GCM = try library.function("EVP_aes_256_gcm", as: accounts_EVP_aes_256_gcm_fn.self)
    cipherContextNew = try library.function(
      "EVP_CIPHER_CTX_new", as: accounts_EVP_CIPHER_CTX_new_fn.self)
    cipherContextFree = try library.function(
      "EVP_CIPHER_CTX_free", as: accounts_EVP_CIPHER_CTX_free_fn.self)
    cipherContextControl = try library.function(
      "EVP_CIPHER_CTX_ctrl", as: accounts_EVP_CIPHER_CTX_ctrl_fn.self)
    cipherInit = try library.function("EVP_CipherInit_ex", as: accounts_EVP_CipherInit_ex_fn.self)
    cipherUpdate = try library.function(
      "EVP_CipherUpdate", as: accounts_EVP_CipherUpdate_fn.self)
    cipherFinal = try library.function(
      "EVP_CipherFinal_ex", as: accounts_EVP_CipherFinal_ex_fn.self)
  }
}
