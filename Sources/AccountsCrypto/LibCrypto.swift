import COpenSSL

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The few functions of the system's OpenSSL libcrypto that accounts calls, opened the first time
/// a hash, a random number or a comparison is needed.
///
/// Written by hand because nothing else gives this: linked as a shared library, libcrypto is
/// opened and its 3,400 symbols bound before `main` in every run, also for the commands that never
/// hash (`status`, `log`, `--version`); no package or linker flag defers a whole library, and
/// `dlopen` is the mechanism. It stays the system's shared libcrypto (its security updates need
/// no rebuild), found by its soname (`libcrypto.so`, without a version, comes only with
/// libssl-dev). The function types come from OpenSSL's headers (COpenSSL's shim.h).
struct LibCrypto: Sendable {
  /// The library opened, as Debian's and Ubuntu's libssl3 package installs it.
  static let soname = "libcrypto.so.3"

  let digest: accounts_EVP_Digest_fn
  let sha256: accounts_EVP_sha256_fn
  let pbkdf2HMAC: accounts_PKCS5_PBKDF2_HMAC_fn
  let randomBytes: accounts_RAND_bytes_fn
  let constantTimeCompare: accounts_CRYPTO_memcmp_fn

  // A static let is initialised once, on first use, and thread-safely (swift_once); a failure is
  // kept too, so every later use reports it without trying again.
  private static let loaded = Result { () throws(CryptoError) in try LibCrypto() }

  /// The loaded library; throws `CryptoError.openSSLUnavailable` when it cannot be opened or
  /// lacks a function.
  static func shared() throws(CryptoError) -> LibCrypto { try loaded.get() }

  private init() throws(CryptoError) {
    // Never closed: the functions are used until the process ends.
    guard let handle = dlopen(Self.soname, RTLD_NOW | RTLD_LOCAL) else {
      throw .openSSLUnavailable(library: Self.soname, reason: Self.lastError())
    }
    func function<Function>(_ name: String, _: Function.Type) throws(CryptoError) -> Function {
      guard let address = dlsym(handle, name) else {
        throw .openSSLUnavailable(library: Self.soname, reason: "it has no function \(name)")
      }
      return unsafeBitCast(address, to: Function.self)
    }
    digest = try function("EVP_Digest", accounts_EVP_Digest_fn.self)
    sha256 = try function("EVP_sha256", accounts_EVP_sha256_fn.self)
    pbkdf2HMAC = try function("PKCS5_PBKDF2_HMAC", accounts_PKCS5_PBKDF2_HMAC_fn.self)
    randomBytes = try function("RAND_bytes", accounts_RAND_bytes_fn.self)
    constantTimeCompare = try function("CRYPTO_memcmp", accounts_CRYPTO_memcmp_fn.self)
  }

  private static func lastError() -> String {
    guard let message = dlerror() else { return "no reason given" }
    return String(cString: message)
  }
}
