import AccountsStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Home, after a successful login.
public struct HomeScreen: Equatable, Sendable {
  /// The user's full name.
  public var fullName: String
  /// The login before this one, if any.
  public var previousLogin: Date?
  /// Failed attempts since that login (or since activation, when there was none).
  public var failuresSince: Int

  /// Creates a Home screen.
  public init(fullName: String, previousLogin: Date?, failuresSince: Int) {
    self.fullName = fullName
    self.previousLogin = previousLogin
    self.failuresSince = failuresSince
  }

  /// The lines Home prints: welcome, last login, failures.
  public func lines(timeZone: TimeZone) -> [String] {
    var lines = [Messages.welcomeBack(fullName)]
    if let previousLogin {
      lines.append(Messages.lastLogin(TimeText.long(previousLogin, timeZone: timeZone)))
    }
    if failuresSince > 0 {
      lines.append(
        Messages.failedAttemptsSince(failuresSince, sinceActivation: previousLogin == nil))
    }
    return lines
  }
}

/// Dates and durations as a person reads them.
enum TimeText {
  /// Like `date`: `Sat Nov 21 23:25:24 UTC 2026`.
  static func long(_ date: Date, timeZone: TimeZone) -> String {
    format(date, "EEE MMM d HH:mm:ss '\(zone(date, timeZone))' yyyy", timeZone)
  }

  /// `23:41:07 UTC`.
  static func clock(_ date: Date, timeZone: TimeZone) -> String {
    format(date, "HH:mm:ss '\(zone(date, timeZone))'", timeZone)
  }

  /// The zone's abbreviation as `date` prints it (`UTC`, `CET`, `EST`).
  ///
  /// For the process's own zone the C library's name is used: Foundation on Linux says `GMT`
  /// for UTC and `GMT+1` for Paris.
  private static func zone(_ date: Date, _ timeZone: TimeZone) -> String {
    if timeZone == TimeZone.current {
      tzset()
      var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
      var parts = tm()
      if localtime_r(&seconds, &parts) != nil, let name = parts.tm_zone {
        return String(cString: name)
      }
    }
    return timeZone.abbreviation(for: date) ?? timeZone.identifier
  }

  private static func format(_ date: Date, _ pattern: String, _ timeZone: TimeZone) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = timeZone
    formatter.dateFormat = pattern
    return formatter.string(from: date)
  }

  /// `1 minute`, `45 seconds`, `2 minutes` (rounded up).
  static func duration(_ seconds: TimeInterval) -> String {
    let whole = max(1, Int(min(seconds, 1e9).rounded(.up)))
    if whole < 60 { return whole == 1 ? "1 second" : "\(whole) seconds" }
    let minutes = (whole + 59) / 60
    return minutes == 1 ? "1 minute" : "\(minutes) minutes"
  }
}

/// Text made safe to print at a terminal: the one path every printed line goes through.
public enum Escaping {
  /// `text` with every character that could act on a terminal, or hide itself, made visible.
  ///
  /// Each is written as `\u{…}`: controls (escape sequences, carriage returns, newlines), invisible format
  /// characters (bidirectional overrides, zero-width spaces), line and paragraph separators,
  /// unassigned, surrogate and private-use code points. Printable text is left as it is, so
  /// applying it twice changes nothing.
  public static func visible(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: needsEscape) else { return text }
    var result = ""
    for scalar in text.unicodeScalars {
      if needsEscape(scalar) {
        result += "\\u{\(String(scalar.value, radix: 16))}"
      } else {
        result.unicodeScalars.append(scalar)
      }
    }
    return result
  }

  /// `visible`, with backslashes doubled too, so that the audit log cannot be made to show a
  /// forged escape: `\u{1b}` typed as six characters reads `\\u{1b}`.
  public static func unambiguous(_ text: String) -> String {
    visible(text.replacingOccurrences(of: "\\", with: "\\\\"))
  }

  /// True for a character `visible` writes as an escape.
  static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.properties.generalCategory {
    case .control, .format, .lineSeparator, .paragraphSeparator, .unassigned, .surrogate,
      .privateUse:
      return true
    default:
      return false
    }
  }
}

/// Minimal JSON writing with every key in a fixed order.
///
/// Every character `Escaping.visible` would escape is written as a `\u` escape, so a JSON line
/// passes the terminal's escaping unchanged and still parses to the stored text.
enum JSON {
  /// A JSON string literal.
  static func string(_ text: String) -> String {
    var result = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": result += "\\\""
      case "\\": result += "\\\\"
      case "\n": result += "\\n"
      case "\r": result += "\\r"
      case "\t": result += "\\t"
      default:
        if Escaping.needsEscape(scalar) || scalar.value == 0x7F {
          for unit in String(scalar).utf16 { result += String(format: "\\u%04x", unit) }
        } else {
          result.unicodeScalars.append(scalar)
        }
      }
    }
    return result + "\""
  }

  /// A string literal, or `null`.
  static func string(_ text: String?) -> String {
    text.map { string($0) } ?? "null"
  }

  /// A JSON object from already-encoded values, keys in the order given.
  static func object(_ fields: [(String, String)]) -> String {
    "{" + fields.map { "\(string($0.0)):\($0.1)" }.joined(separator: ",") + "}"
  }
}
