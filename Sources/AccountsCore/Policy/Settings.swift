import AccountsCrypto
import FoundationEssentials

extension PasswordHasher {
  /// The variable that sets the iteration count of new hashes.
  public static let iterationsVariable = "ACCOUNTS_PBKDF2_ITERATIONS"

  /// The hasher `ACCOUNTS_PBKDF2_ITERATIONS` asks for: a whole number in
  /// `configurableIterations`; the default count when the setting is absent or empty.
  public init(iterationsSetting text: String?) throws(AccountsError) {
    guard let text, !text.isEmpty else {
      self.init()
      return
    }
    let range = Self.configurableIterations
    guard let count = Int(text), range.contains(count) else {
      throw .invalidSetting(
        name: Self.iterationsVariable, value: text,
        expected: "a whole number from \(range.lowerBound) to \(range.upperBound)")
    }
    self.init(iterations: count)
  }
}

extension SessionPolicy {
  /// The variable that sets the absolute lifetime.
  public static let lifetimeVariable = "ACCOUNTS_SESSION_LIFETIME"
  /// The variable that sets the idle timeout.
  public static let idleVariable = "ACCOUNTS_SESSION_IDLE"

  /// The policy `ACCOUNTS_SESSION_LIFETIME` and `ACCOUNTS_SESSION_IDLE` ask for (each the
  /// longest when absent or empty).
  public init(lifetimeSetting: String?, idleSetting: String?) throws(AccountsError) {
    let lifetime = try Self.duration(
      lifetimeSetting, setting: Self.lifetimeVariable, longest: Self.longestLifetime)
    let idle = try Self.duration(idleSetting, setting: Self.idleVariable, longest: Self.longestIdle)
    self.init(lifetime: lifetime, idle: idle)
  }

  /// A session time given as `text` for the variable `name`: seconds, or a number with `s`, `m`
  /// or `h`; at least `shortest` and at most `longest` (NIST's limits, the defaults); `longest`
  /// when absent or empty.
  public static func duration(_ text: String?, setting name: String, longest: TimeInterval)
    throws(AccountsError) -> TimeInterval
  {
    guard let text, !text.isEmpty else { return longest }
    let expected =
      "a duration from 5m to \(Int(longest / 3600))h (seconds, or a number with s, m or h)"
    var digits = Substring(text)
    var unit: TimeInterval = 1
    switch digits.last {
    case "s": digits = digits.dropLast()
    case "m": (digits, unit) = (digits.dropLast(), 60)
    case "h": (digits, unit) = (digits.dropLast(), 3600)
    default: break
    }
    guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
      let count = Int(digits), count <= 1_000_000
    else { throw .invalidSetting(name: name, value: text, expected: expected) }
    let seconds = TimeInterval(count) * unit
    guard seconds >= shortest, seconds <= longest else {
      throw .invalidSetting(name: name, value: text, expected: expected)
    }
    return seconds
  }
}

/// The name of the host that writes: what every audit event and session records.
public enum WritingHost {
  /// The variable that names the host (a container's node name is a random one).
  public static let variable = "ACCOUNTS_HOST_NAME"
  /// What a host name may be, as a refusal says it.
  public static let expected =
    "a host name of 1 to 253 bytes of UTF-8 without spaces or control characters"

  /// The host `ACCOUNTS_HOST_NAME` names, else the node name; nil when neither is usable.
  ///
  /// An empty setting counts as absent, as the other settings' do; any other that breaks the
  /// rule is refused. A node name that breaks it records no host.
  public static func named(setting text: String?, nodeName: String?)
    throws(AccountsError) -> String?
  {
    if let text, !text.isEmpty {
      guard isUsable(text) else {
        throw .invalidSetting(name: variable, value: text, expected: expected)
      }
      return text
    }
    return nodeName.flatMap { isUsable($0) ? $0 : nil }
  }

  /// True for 1 to 253 bytes of UTF-8 without a space, a control character, or a character
  /// that stood for bytes that were not UTF-8.
  public static func isUsable(_ name: String) -> Bool {
    (1...253).contains(name.utf8.count)
      && !name.unicodeScalars.contains {
        $0 == "\u{FFFD}" || $0.properties.isWhitespace || $0.properties.generalCategory == .control
          || $0.properties.generalCategory == .format
      }
  }
}
