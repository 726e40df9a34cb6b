import CXcrypt
import DynamicLibrary

#if canImport(Glibc)
import Glibc
#endif

/// Password hashes in crypt(3)'s format, as `/etc/shadow` and `htpasswd -B` keep them: which
/// scheme a hash uses, and checking a password against one through the system's libxcrypt (no
/// hash scheme is written here).
public enum CryptHash {
  /// A scheme strong enough to verify and keep until the first successful login replaces it.
  public enum Scheme: String, Equatable, Sendable, CaseIterable {
    /// `$y$`: yescrypt, Debian's default since 11.
    case yescrypt
    /// `$6$`: SHA-512 crypt.
    case sha512crypt = "sha512-crypt"
    /// `$5$`: SHA-256 crypt.
    case sha256crypt = "sha256-crypt"
    /// `$2b$`, `$2y$`, `$2a$`: bcrypt (`htpasswd -B` writes `$2y$`).
    case bcrypt
  }

  /// A scheme too weak to accept: the hash is refused by name.
  public enum WeakScheme: String, Equatable, Sendable, CaseIterable {
    /// `$1$`: MD5 crypt (1,000 rounds of MD5).
    case md5crypt = "MD5-crypt ($1$)"
    /// `$apr1$`: Apache's MD5 crypt.
    case apr1 = "Apache MD5 ($apr1$)"
    /// `{SHA}`: one unsalted SHA-1.
    case sha1 = "unsalted SHA-1 ({SHA})"
    /// Thirteen characters: traditional DES crypt (8 characters of password at most).
    case des = "DES crypt"
  }

  /// What a stored string is.
  public enum Kind: Equatable, Sendable {
    /// A hash of a scheme that is verified.
    case supported(Scheme)
    /// A hash of a scheme that is refused.
    case weak(WeakScheme)
    /// Not a crypt(3) hash this knows (perhaps plain text).
    case unknown
  }

  /// The kind of `hash`, from its prefix (and, for DES, its length and alphabet).
  public static func kind(of hash: String) -> Kind {
    let prefixes: [(String, Kind)] = [
      ("$y$", .supported(.yescrypt)), ("$6$", .supported(.sha512crypt)),
      ("$5$", .supported(.sha256crypt)), ("$2b$", .supported(.bcrypt)),
      ("$2y$", .supported(.bcrypt)), ("$2a$", .supported(.bcrypt)), ("$1$", .weak(.md5crypt)),
      ("$apr1$", .weak(.apr1)), ("{SHA}", .weak(.sha1)),
    ]
    for (prefix, kind) in prefixes where hash.hasPrefix(prefix) { return kind }
    let desAlphabet = Set("./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
    if hash.count == 13, hash.allSatisfy(desAlphabet.contains) { return .weak(.des) }
    return .unknown
  }

  /// True when `password` hashes to `hash` (a supported scheme, well formed and within its
  /// ceiling; anything else is false and libxcrypt is not called), the two compared in
  /// constant time.
  public static func verify(password: [UInt8], hash: String) throws(CryptoError) -> Bool {
    guard let computed = try compute(password: password, setting: hash) else { return false }
    return try ConstantTime.equals(computed, Array(hash.utf8))
  }

  /// The whole hash `sealed` seals when `password` hashes to it (its masked hash read as
  /// `verify` reads a hash), nil otherwise.
  public static func verify(password: [UInt8], sealed: SealedPasswordHash) throws(CryptoError)
    -> String?
  {
    guard let computed = try compute(password: password, setting: sealed.masked) else {
      return nil
    }
    let whole = String(decoding: computed, as: UTF8.self)
    return try sealed.isWhole(whole) ? whole : nil
  }

  /// What libxcrypt computes for `password` with the setting at the start of `setting` (a
  /// supported scheme's hash, well formed and within its ceiling); nil for anything else.
  private static func compute(password: [UInt8], setting hash: String) throws(CryptoError)
    -> [UInt8]?
  {
    guard cost(of: hash)?.isWithinCeiling == true, !password.contains(0) else { return nil }
    let library = try LibXcrypt.shared()
    var data = crypt_data()
    // crypt(3) wants a NUL-ended phrase: this copy and libxcrypt's work area are wiped after.
    var phrase = password.map { CChar(bitPattern: $0) } + [0]
    defer {
      phrase.withUnsafeMutableBytes {
        if let base = $0.baseAddress { explicit_bzero(base, $0.count) }
      }
      withUnsafeMutableBytes(of: &data) {
        if let base = $0.baseAddress { explicit_bzero(base, $0.count) }
      }
    }
    return withUnsafeMutableBytes(of: &data) { buffer -> [UInt8]? in
      let result = hash.withCString { setting in
        library.cryptRN(phrase, setting, buffer.baseAddress, Int32(buffer.count))
      }
      guard let result, result.pointee != 0x2A else { return nil }  // "*": an invalid setting
      return Array(String(cString: result).utf8)
    }
  }
}

/// The one function of the system's libxcrypt that accounts calls, opened the first time a
/// crypt(3) hash is checked (only imported users have one).
struct LibXcrypt: Sendable {
  /// The library opened, as Debian's and Ubuntu's libcrypt1 package installs it.
  static let soname = "libcrypt.so.1"

  let cryptRN: accounts_crypt_rn_fn

  private static let library = LazyLibrary(sonames: [soname]) {
    library throws(DynamicLibrary.Failure) in try LibXcrypt(library)
  }

  /// The loaded library; throws `.libraryUnavailable` when it cannot be opened.
  static func shared() throws(CryptoError) -> LibXcrypt {
    do throws(DynamicLibrary.Failure) {
      return try library.functions()
    } catch {
      throw .libraryUnavailable(library: error.library, reason: error.reason)
    }
  }

  private init(_ library: DynamicLibrary) throws(DynamicLibrary.Failure) {
    cryptRN = try library.function("crypt_rn", as: accounts_crypt_rn_fn.self)
  }
}
