import CZxcvbn
import DynamicLibrary

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// zxcvbn's estimate of a password: how many guesses it takes, and the patterns it is made of.
///
/// Made by the system's zxcvbn (the C port, Debian's libzxcvbn0; no estimator is written here),
/// opened the first time a password is estimated: only the commands that set a password need it.
public struct PasswordEstimate: Equatable, Sendable {
  /// One part of the password as zxcvbn matched it.
  public struct Match: Equatable, Sendable {
    /// The kind of pattern a part is.
    public enum Pattern: Equatable, Sendable {
      /// A common password or dictionary word, also with look-alike substitutions (`p@ss`).
      case dictionaryWord
      /// A word of the user dictionary, also with look-alike substitutions.
      case userWord
      /// A shorter pattern repeated.
      case repetition
      /// A run such as `12345` or `zyxwv`.
      case sequence
      /// A row or pattern of neighbouring keys on the keyboard.
      case keyboardRow
      /// A date or a year.
      case date
      /// Anything else (characters guessed one by one, the rest of a long password).
      case other
    }

    /// What matched.
    public var pattern: Pattern
    /// True when zxcvbn marks the part as repeated elsewhere in the password.
    public var isRepeated: Bool
    /// How many bytes of the password it covers.
    public var length: Int

    /// A part of `length` bytes matching `pattern`.
    public init(pattern: Pattern, isRepeated: Bool = false, length: Int) {
      self.pattern = pattern
      self.isRepeated = isRepeated
      self.length = length
    }
  }

  /// The library opened, as Debian's and Ubuntu's libzxcvbn0 package installs it.
  public static let soname = "libzxcvbn.so.0"

  /// The estimate in bits: log2 of the guesses.
  public let bits: Double
  /// The parts zxcvbn matched, in order.
  public let matches: [Match]

  /// zxcvbn's estimate for `password` (no NUL inside) with `userWords` as its user dictionary.
  ///
  /// Opens libzxcvbn on first use; throws why when it cannot be opened or lacks a function.
  public init(_ password: String, userWords: [String]) throws(DynamicLibrary.Failure) {
    let library = try LibZxcvbn.library.functions()
    (bits, matches) = library.estimate(password, userWords: userWords)
  }
}

/// The two functions of libzxcvbn that accounts calls; their types come from its header
/// (CZxcvbn's shim.h).
struct LibZxcvbn: Sendable {
  static let library = LazyLibrary(sonames: [PasswordEstimate.soname]) {
    library throws(DynamicLibrary.Failure) in try LibZxcvbn(library)
  }

  private let match: accounts_ZxcvbnMatch_fn
  private let freeInfo: accounts_ZxcvbnFreeInfo_fn

  private init(_ library: DynamicLibrary) throws(DynamicLibrary.Failure) {
    match = try library.function("ZxcvbnMatch", as: accounts_ZxcvbnMatch_fn.self)
    freeInfo = try library.function("ZxcvbnFreeInfo", as: accounts_ZxcvbnFreeInfo_fn.self)
  }

  func estimate(_ password: String, userWords: [String]) -> (Double, [PasswordEstimate.Match]) {
    // The dictionary as a NULL-ended array of C strings, like argv.
    var words: [UnsafePointer<CChar>?] = userWords.map { UnsafePointer(strdup($0)) }
    words.append(nil)
    defer { for word in words { free(UnsafeMutableRawPointer(mutating: word)) } }
    var info: UnsafeMutablePointer<ZxcMatch_t>? = nil
    let bits = words.withUnsafeMutableBufferPointer { dictionary in
      password.withCString { match($0, dictionary.baseAddress, &info) }
    }
    defer { freeInfo(info) }
    var matches: [PasswordEstimate.Match] = []
    var next = info
    while let part = next {
      matches.append(
        Self.match(type: part.pointee.`Type`.rawValue, length: Int(part.pointee.Length)))
      next = part.pointee.Next
    }
    return (bits, matches)
  }

  private static func match(type: UInt32, length: Int) -> PasswordEstimate.Match {
    let multiple = MULTIPLE_MATCH.rawValue
    let pattern: PasswordEstimate.Match.Pattern
    switch type & ~multiple {
    case DICTIONARY_MATCH.rawValue, DICT_LEET_MATCH.rawValue: pattern = .dictionaryWord
    case USER_MATCH.rawValue, USER_LEET_MATCH.rawValue: pattern = .userWord
    case REPEATS_MATCH.rawValue: pattern = .repetition
    case SEQUENCE_MATCH.rawValue: pattern = .sequence
    case SPATIAL_MATCH.rawValue: pattern = .keyboardRow
    case DATE_MATCH.rawValue, YEAR_MATCH.rawValue: pattern = .date
    default: pattern = .other
    }
    return PasswordEstimate.Match(
      pattern: pattern, isRepeated: type & multiple != 0, length: length)
  }
}
