import DynamicLibrary
import FoundationEssentials
import Zxcvbn

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What made a password easy to guess: the kind of pattern that covers most of it.
public enum PasswordWeakness: Equatable, Sendable, CaseIterable {
  /// Common passwords or dictionary words (also with look-alike substitutions such as `p@ss`).
  case commonWords
  /// A row or pattern of neighbouring keys on the keyboard.
  case keyboardRow
  /// A shorter pattern repeated.
  case repetition
  /// A run such as `12345` or `zyxwv`.
  case sequence
  /// A date or years.
  case date
  /// Words of the user name, full name or e-mail.
  case personalDetails
  /// Nothing in particular: too few unpredictable characters.
  case tooSimple
}

/// zxcvbn's estimate of how many guesses a password takes, and why it is weak when it is.
public struct PasswordStrength: Equatable, Sendable {
  /// The fewest guesses a password must take: zxcvbn's score 3.
  public static let minimumGuesses = 1e8
  /// `minimumGuesses` in bits, as the C port counts: about 26.58.
  public static let minimumBits = log2(minimumGuesses)

  /// The estimate in bits: log2 of the guesses.
  public let bits: Double
  /// What covers most of the password; nil when it is strong enough.
  public let weakness: PasswordWeakness?

  /// The estimated number of guesses.
  public var guesses: Double { exp2(bits) }

  /// Estimates `password` (NFKC, no NUL), with the person's details as zxcvbn's user dictionary.
  ///
  /// Opens libzxcvbn on first use; throws `AccountsError.passwordCheckerUnavailable` when it
  /// cannot.
  public static func estimate(
    _ password: String, username: String, fullName: String, email: String
  ) throws(AccountsError) -> PasswordStrength {
    let words = userWords(username: username, fullName: fullName, email: email)
    let estimate: PasswordEstimate
    do throws(DynamicLibrary.Failure) {
      estimate = try PasswordEstimate(password, userWords: words)
    } catch {
      throw .passwordCheckerUnavailable(library: error.library, reason: error.reason)
    }
    return PasswordStrength(
      bits: estimate.bits,
      weakness: estimate.bits >= minimumBits ? nil : weakness(of: estimate.matches))
  }

  /// The user dictionary: each detail whole, and the words of the full name and e-mail.
  ///
  /// zxcvbn compares them ignoring case. Words under 3 characters are left out, as they would
  /// match inside almost any password.
  /// The runs of letters, marks and digits of `text` (Foundation's `CharacterSet.alphanumerics`:
  /// the L*, M* and N* categories), split at everything else.
  private static func alphanumericRuns(in text: String) -> [String] {
    text.unicodeScalars.split(omittingEmptySubsequences: false) { scalar in
      switch scalar.properties.generalCategory {
      case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
        .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .letterNumber, .otherNumber:
        return false
      default: return true
      }
    }.map { String(String.UnicodeScalarView($0)) }
  }

  static func userWords(username: String, fullName: String, email: String) -> [String] {
    var words = [username, fullName, email]
    words += alphanumericRuns(in: fullName)
    words += alphanumericRuns(in: email)
    var seen = Set<String>()
    return words.filter { word in
      word.unicodeScalars.count >= 3 && !word.contains("\0") && seen.insert(word).inserted
    }
  }

  /// The kind of match that covers the most of the password.
  ///
  /// Ties go to the first in `order`. A part zxcvbn marks as repeated counts as a repetition.
  static func weakness(of matches: [PasswordEstimate.Match]) -> PasswordWeakness {
    let order: [PasswordWeakness] = [
      .personalDetails, .repetition, .sequence, .keyboardRow, .date, .commonWords,
    ]
    var covered: [PasswordWeakness: Int] = [:]
    for match in matches {
      if let kind = kind(of: match) { covered[kind, default: 0] += match.length }
    }
    let most = covered.values.max() ?? 0
    return most == 0 ? .tooSimple : order.first { covered[$0] == most } ?? .tooSimple
  }

  private static func kind(of match: PasswordEstimate.Match) -> PasswordWeakness? {
    if match.isRepeated { return .repetition }
    switch match.pattern {
    case .dictionaryWord: return .commonWords
    case .userWord: return .personalDetails
    case .repetition: return .repetition
    case .sequence: return .sequence
    case .keyboardRow: return .keyboardRow
    case .date: return .date
    case .other: return nil
    }
  }
}
