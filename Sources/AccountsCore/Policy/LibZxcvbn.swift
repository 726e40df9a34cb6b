import CZxcvbn
import DynamicLibrary

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The two functions of the system's zxcvbn (the C port, Debian's libzxcvbn0) that accounts calls,
/// opened the first time a new password is checked.
///
/// Opened through `DynamicLibrary` (why: there): only the commands that set a password need it.
/// The function types come from its header (CZxcvbn's shim.h).
struct LibZxcvbn: Sendable {
  /// The library opened, as Debian's and Ubuntu's libzxcvbn0 package installs it.
  static let soname = "libzxcvbn.so.0"

  /// One part of the password as zxcvbn matched it.
  struct Part: Equatable, Sendable {
    /// What matched (ZxcTypeMatch_t, with `MULTIPLE_MATCH` added when the part is repeated).
    var type: Int
    /// How many bytes of the password it covers.
    var length: Int
  }

  private let match: accounts_ZxcvbnMatch_fn
  private let freeInfo: accounts_ZxcvbnFreeInfo_fn

  private static let library = LazyLibrary(sonames: [soname]) {
    library throws(DynamicLibrary.Failure) in try LibZxcvbn(library)
  }

  /// The loaded library; throws `AccountsError.passwordCheckerUnavailable` when it cannot be
  /// opened or lacks a function.
  static func shared() throws(AccountsError) -> LibZxcvbn {
    do throws(DynamicLibrary.Failure) {
      return try library.functions()
    } catch {
      throw .passwordCheckerUnavailable(library: error.library, reason: error.reason)
    }
  }

  private init(_ library: DynamicLibrary) throws(DynamicLibrary.Failure) {
    match = try library.function("ZxcvbnMatch", as: accounts_ZxcvbnMatch_fn.self)
    freeInfo = try library.function("ZxcvbnFreeInfo", as: accounts_ZxcvbnFreeInfo_fn.self)
  }

  /// zxcvbn's estimate for `password` (no NUL inside) with `userWords` as its user dictionary:
  /// the entropy in bits (log2 of the guesses) and the parts it matched.
  func estimate(_ password: String, userWords: [String]) -> (bits: Double, parts: [Part]) {
    // The dictionary as a NULL-ended array of C strings, like argv.
    var words: [UnsafePointer<CChar>?] = userWords.map { UnsafePointer(strdup($0)) }
    words.append(nil)
    defer { for word in words { free(UnsafeMutableRawPointer(mutating: word)) } }
    var info: UnsafeMutablePointer<ZxcMatch_t>? = nil
    let bits = words.withUnsafeMutableBufferPointer { dictionary in
      password.withCString { match($0, dictionary.baseAddress, &info) }
    }
    defer { freeInfo(info) }
    var parts: [Part] = []
    var next = info
    while let part = next {
      parts.append(Part(type: Int(part.pointee.`Type`.rawValue), length: Int(part.pointee.Length)))
      next = part.pointee.Next
    }
    return (bits, parts)
  }
}
