import FoundationEssentials

/// What a form field holds after reading: text, or a reason it cannot be text.
public enum FieldValue: Equatable, Sendable {
  /// Decoded text.
  case text(String)
  /// The bytes were not UTF-8.
  case invalidUTF8
  /// The line was longer than any field allows.
  case tooLong

  /// Decodes a line read from the console.
  public init(_ bytes: [UInt8]) {
    if let text = String(validating: bytes, as: UTF8.self) {
      self = .text(text)
    } else {
      self = .invalidUTF8
    }
  }

  /// The text, or "" when there is none.
  var textOrEmpty: String {
    if case .text(let text) = self { return text }
    return ""
  }

  /// True when the field holds nothing but white space.
  var isBlank: Bool {
    guard case .text(let text) = self else { return false }
    return text.unicodeScalars.allSatisfy { $0.properties.isWhitespace }
  }
}

/// Rules on text: characters that never belong in any field.
enum TextRules {
  /// A NUL or other control character, or (outside passwords) an invisible format character
  /// such as a bidirectional override or a zero-width space, or a U+FFFD from undecodable input.
  static func hasForbiddenCharacters(_ text: String, allowFormat: Bool) -> Bool {
    // Printable ASCII holds none (the common case, a million times in an import).
    if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return false }
    return text.unicodeScalars.contains { scalar in
      switch scalar.properties.generalCategory {
      case .control: return true
      case .format: return !allowFormat
      default:
        return scalar == "\u{FFFD}" || scalar.properties.generalCategory == .lineSeparator
          || scalar.properties.generalCategory == .paragraphSeparator
      }
    }
  }

  /// Drops white space at both ends.
  static func trimmed(_ text: String) -> String {
    // Nothing to trim when both ends are visible ASCII.
    if let first = text.utf8.first, let last = text.utf8.last, (0x21...0x7E).contains(first),
      (0x21...0x7E).contains(last)
    {
      return text
    }
    return text.trimmingWhitespace()
  }

  /// Checks a field's characters, returning the refusal if any.
  static func problem(_ value: FieldValue, field: String, allowFormat: Bool = false)
    -> FormProblem?
  {
    switch value {
    case .invalidUTF8: return .invalidUTF8(field: field)
    case .tooLong: return .tooLong(field: field)
    case .text(let text):
      // Command-line arguments that were not UTF-8 arrive with U+FFFD in their place.
      if text.unicodeScalars.contains("\u{FFFD}") { return .invalidUTF8(field: field) }
      return hasForbiddenCharacters(text, allowFormat: allowFormat)
        ? .controlCharacters(field: field) : nil
    }
  }
}

/// User names after RFC 8265's UsernameCaseMapped profile.
public enum UsernameRules {
  /// The most characters a user name may have.
  public static let maximumLength = 64

  /// The comparison key: width mapping, lowercasing, NFC.
  ///
  /// Nil when the name breaks the rules (1 to 64 letters, digits, `.`, `_`, `-`). Throws only
  /// when a name beyond ASCII cannot be normalized (`.unicodeUnavailable`).
  public static func key(for username: String) throws(AccountsError) -> String? {
    if let key = asciiKey(username) { return key }
    let key = try mapped(username)
    let scalars = key.unicodeScalars
    guard !scalars.isEmpty, scalars.count <= maximumLength else { return nil }
    let valid = scalars.allSatisfy { scalar in
      if scalar == "." || scalar == "_" || scalar == "-" { return true }
      switch scalar.properties.generalCategory {
      case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
        .decimalNumber, .nonspacingMark, .spacingMark:
        return true
      default:
        return false
      }
    }
    // A name must not begin with a combining mark.
    if let first = scalars.first,
      [.nonspacingMark, .spacingMark].contains(first.properties.generalCategory)
    {
      return nil
    }
    return valid ? key : nil
  }

  /// A key for any typed name, valid or not, so that unknown and malformed names are tallied
  /// like real ones.
  public static func lookupKey(for username: String) throws(AccountsError) -> String {
    if let key = try key(for: username) { return key }
    return try mapped(username)
  }

  /// The key of an all-ASCII name of allowed characters: lowercased (width mapping and NFC
  /// change nothing there); nil for anything else, which takes the full path.
  private static func asciiKey(_ username: String) -> String? {
    let bytes = username.utf8
    guard !bytes.isEmpty, bytes.count <= maximumLength else { return nil }
    var lowered: [UInt8] = []
    lowered.reserveCapacity(bytes.count)
    for byte in bytes {
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"): lowered.append(byte + 32)
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
        UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
        lowered.append(byte)
      default: return nil
      }
    }
    return String(decoding: lowered, as: UTF8.self)
  }

  private static func mapped(_ username: String) throws(AccountsError) -> String {
    // Width mapping: the Halfwidth and Fullwidth Forms block maps to its compatibility form.
    var widthMapped = ""
    for scalar in username.unicodeScalars {
      if (0xFF00...0xFFEF).contains(scalar.value) {
        widthMapped += try UnicodeForms.nfkc(String(scalar))
      } else {
        widthMapped.unicodeScalars.append(scalar)
      }
    }
    return try UnicodeForms.nfc(widthMapped.lowercased())
  }
}

/// E-mail addresses: one `@`, a local part, a domain with a dot, no spaces or controls.
public enum EmailRules {
  /// The longest address (RFC 5321's path limit less the brackets).
  public static let maximumLength = 254

  /// True when `email` is acceptable.
  public static func isValid(_ email: String) -> Bool {
    if email.utf8.allSatisfy({ $0 < 0x80 }) { return isValidASCII(email.utf8) }
    guard email.unicodeScalars.count <= maximumLength else { return false }
    if email.unicodeScalars.contains(where: { $0.properties.isWhitespace }) { return false }
    let parts = email.split(separator: "@", omittingEmptySubsequences: false)
    guard parts.count == 2, !parts[0].isEmpty else { return false }
    let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
    return labels.count >= 2 && labels.allSatisfy { !$0.isEmpty }
  }

  /// The same rules for an all-ASCII address, byte by byte (an import checks a million).
  private static func isValidASCII(_ bytes: String.UTF8View) -> Bool {
    guard bytes.count <= maximumLength else { return false }
    var ats = 0
    var localLength = 0
    var labelLength = 0
    var labels = 0
    for byte in bytes {
      if byte == 0x20 || (0x09...0x0D).contains(byte) { return false }
      if byte == UInt8(ascii: "@") {
        ats += 1
        if ats > 1 { return false }
      } else if ats == 0 {
        localLength += 1
      } else if byte == UInt8(ascii: ".") {
        if labelLength == 0 { return false }
        labels += 1
        labelLength = 0
      } else {
        labelLength += 1
      }
    }
    return ats == 1 && localLength > 0 && labelLength > 0 && labels >= 1
  }
}

/// Password rules after NIST SP 800-63B-4: length, no personal details, the blocklist, at least
/// 10^8 guesses as zxcvbn estimates them (with the details as its user dictionary); no
/// composition rules.
public enum PasswordRules {
  /// The fewest characters for a single-factor password.
  public static let minimumLength = 15
  /// The most characters; longer ones are refused, never truncated.
  public static let maximumLength = 1024

  /// The form a password is hashed in: NFKC, but for the half-width (semi-)voiced sound marks.
  ///
  /// U+FF9E and U+FF9F become U+3099 and U+309A without composing with the kana before them
  /// (`ｶﾞ` is U+30AB U+3099, where UAX #15's NFKC gives U+30AC): the form every password was
  /// hashed in when Foundation made it (its NFKC on Linux does that), kept so that every stored
  /// hash still matches the password it was made from.
  ///
  /// Throws only when a password beyond ASCII cannot be normalized (`.unicodeUnavailable`).
  public static func normalized(_ password: String) throws(AccountsError) -> String {
    UnicodeForms.isASCII(password) ? password : normalized(password, forms: try .loaded())
  }

  /// `normalized(_:)` with the library already loaded.
  static func normalized(_ password: String, forms: UnicodeForms) -> String {
    guard password.unicodeScalars.contains(where: { $0 == "\u{FF9E}" || $0 == "\u{FF9F}" })
    else { return forms.nfkc(password) }
    var result = ""
    var run = ""
    for scalar in password.unicodeScalars {
      guard scalar == "\u{FF9E}" || scalar == "\u{FF9F}" else {
        run.unicodeScalars.append(scalar)
        continue
      }
      result += forms.nfkc(run)
      result.unicodeScalars.append(scalar == "\u{FF9E}" ? "\u{3099}" : "\u{309A}")
      run = ""
    }
    return result + forms.nfkc(run)
  }

  /// The first rule `password` (already normalized) breaks, as the form's refusal, or nil.
  ///
  /// Throws when the strength estimator or the blocklist cannot be used.
  public static func problem(
    _ password: String, username: String, fullName: String, email: String,
    blocklist: PasswordBlocklist?
  ) throws(AccountsError) -> AccountsError? {
    let count = password.unicodeScalars.count
    if count < minimumLength { return .invalidForm(.passwordTooShort) }
    if count > maximumLength { return .invalidForm(.passwordTooLong) }
    if try isPersonal(password, details: [username, fullName, email]) {
      return .invalidForm(.passwordIsPersonal)
    }
    // The administrator's list first: its sentence is the more definite one.
    if let blocklist, try blocklist.contains(password) {
      return .invalidForm(.passwordIsBlocked)
    }
    let strength = try PasswordStrength.estimate(
      password, username: username, fullName: fullName, email: email)
    if let weakness = strength.weakness { return .invalidForm(.guessable(weakness)) }
    return nil
  }

  /// Lowercased with all white space removed.
  static func folded(_ text: String) throws(AccountsError) -> String {
    String(
      String.UnicodeScalarView(
        try normalized(text).lowercased().unicodeScalars.filter { !$0.properties.isWhitespace }))
  }

  /// True when the password is one of the details, or only repeats of one.
  static func isPersonal(_ password: String, details: [String]) throws(AccountsError) -> Bool {
    let candidate = try folded(password)
    guard !candidate.isEmpty else { return false }
    for detail in details {
      let detail = try folded(detail)
      if detail.isEmpty { continue }
      guard candidate.count % detail.count == 0 else { continue }
      if String(repeating: detail, count: candidate.count / detail.count) == candidate {
        return true
      }
    }
    return false
  }
}

/// The activation form as read: five fields.
public struct ActivationForm: Equatable, Sendable {
  /// User name.
  public var username: FieldValue
  /// Full name.
  public var fullName: FieldValue
  /// E-mail address.
  public var email: FieldValue
  /// Password.
  public var password: FieldValue
  /// Password again.
  public var passwordAgain: FieldValue

  /// Creates a form.
  public init(
    username: FieldValue, fullName: FieldValue, email: FieldValue, password: FieldValue,
    passwordAgain: FieldValue
  ) {
    self.username = username
    self.fullName = fullName
    self.email = email
    self.password = password
    self.passwordAgain = passwordAgain
  }

  /// Creates a form from text.
  public init(
    username: String, fullName: String, email: String, password: String, passwordAgain: String
  ) {
    self.init(
      username: .text(username), fullName: .text(fullName), email: .text(email),
      password: .text(password), passwordAgain: .text(passwordAgain))
  }

  /// A form that passed every rule: trimmed details, the key, the normalized password.
  public struct Valid: Equatable, Sendable {
    /// The user name as entered, trimmed.
    public var username: String
    /// Its comparison key.
    public var usernameKey: String
    /// The full name, trimmed.
    public var fullName: String
    /// The e-mail address, trimmed.
    public var email: String
    /// The password in NFKC, as hashed.
    public var password: String
  }

  /// Checks the rules in order (fill, match, then each field) and returns the valid form.
  public func validate(blocklist: PasswordBlocklist?) throws(AccountsError) -> Valid {
    let fields = [
      (Messages.usernamePrompt, username), (Messages.fullNamePrompt, fullName),
      (Messages.emailPrompt, email), (Messages.passwordPrompt, password),
      (Messages.passwordAgainPrompt, passwordAgain),
    ]
    let empty = fields.filter { $0.1.isBlank }.map(\.0)
    if !empty.isEmpty { throw .incompleteForm(empty: empty) }
    try NewPasswordForm.checkMatch(password, passwordAgain)
    let (name, key) = try DetailRules.username(username)
    let full = try DetailRules.fullName(fullName)
    let mail = try DetailRules.email(email)
    let secret = try NewPasswordForm.checkRules(
      password, label: Messages.passwordPrompt, username: name, fullName: full, email: mail,
      blocklist: blocklist)
    return Valid(username: name, usernameKey: key, fullName: full, email: mail, password: secret)
  }
}

/// The rules of each account detail, shared by the Activation Form, `user add` and `user edit`.
public enum DetailRules {
  /// A user name that passes the naming rules, trimmed, with its key.
  public static func username(_ value: FieldValue) throws(AccountsError) -> (String, String) {
    if let problem = TextRules.problem(value, field: Messages.usernamePrompt) {
      throw .invalidForm(problem)
    }
    let name = TextRules.trimmed(value.textOrEmpty)
    if name.isEmpty { throw .incompleteForm(empty: [Messages.usernamePrompt]) }
    guard let key = try UsernameRules.key(for: name) else { throw .invalidForm(.usernameRule) }
    if name.unicodeScalars.allSatisfy({ $0.properties.numericType == .decimal }) {
      throw .invalidForm(.usernameAllDigits)
    }
    return (name, key)
  }

  /// A full name that passes the rules, trimmed.
  public static func fullName(_ value: FieldValue) throws(AccountsError) -> String {
    if let problem = TextRules.problem(value, field: Messages.fullNamePrompt) {
      throw .invalidForm(problem)
    }
    let full = TextRules.trimmed(value.textOrEmpty)
    if full.isEmpty { throw .incompleteForm(empty: [Messages.fullNamePrompt]) }
    if full.unicodeScalars.count > 256 { throw .invalidForm(.fullNameTooLong) }
    return full
  }

  /// An e-mail address that passes the rules, trimmed.
  public static func email(_ value: FieldValue) throws(AccountsError) -> String {
    if let problem = TextRules.problem(value, field: Messages.emailPrompt) {
      throw .invalidForm(problem)
    }
    let mail = TextRules.trimmed(value.textOrEmpty)
    if mail.isEmpty { throw .incompleteForm(empty: [Messages.emailPrompt]) }
    guard EmailRules.isValid(mail) else { throw .invalidForm(.emailRule) }
    return mail
  }
}

/// A new password typed twice: for `passwd`, `user passwd` and a change a login requires.
public struct NewPasswordForm: Equatable, Sendable {
  /// The new password.
  public var password: FieldValue
  /// The new password again.
  public var passwordAgain: FieldValue

  /// Creates a form.
  public init(password: FieldValue, passwordAgain: FieldValue) {
    self.password = password
    self.passwordAgain = passwordAgain
  }

  /// Checks the rules in the form's order (fill, match, the password's rules with `account`'s
  /// details as context; not `current` when given) and returns the password in NFKC.
  public func validate(
    for account: Account, current: String? = nil, blocklist: PasswordBlocklist?
  ) throws(AccountsError) -> String {
    let empty = [
      (Messages.newPasswordPrompt, password), (Messages.newPasswordAgainPrompt, passwordAgain),
    ].filter { $0.1.isBlank }.map(\.0)
    if !empty.isEmpty { throw .incompleteForm(empty: empty) }
    try Self.checkMatch(password, passwordAgain)
    let secret = try Self.checkRules(
      password, label: Messages.newPasswordPrompt, username: account.username,
      fullName: account.fullName, email: account.email, blocklist: blocklist)
    if let current, secret == current { throw .invalidForm(.passwordUnchanged) }
    return secret
  }

  /// `Passwords must match!` unless both fields are the same (compared in NFKC).
  static func checkMatch(_ password: FieldValue, _ again: FieldValue) throws(AccountsError) {
    switch (password, again) {
    case (.text(let first), .text(let second)):
      if try PasswordRules.normalized(first) != PasswordRules.normalized(second) {
        throw .invalidForm(.passwordsMustMatch)
      }
    default:
      if password != again { throw .invalidForm(.passwordsMustMatch) }
    }
  }

  /// The password's own rules; returns it in NFKC.
  static func checkRules(
    _ password: FieldValue, label: String, username: String, fullName: String, email: String,
    blocklist: PasswordBlocklist?
  ) throws(AccountsError) -> String {
    if password == .tooLong { throw .invalidForm(.passwordTooLong) }
    if let problem = TextRules.problem(password, field: label, allowFormat: true) {
      throw .invalidForm(problem)
    }
    let secret = try PasswordRules.normalized(password.textOrEmpty)
    if let problem = try PasswordRules.problem(
      secret, username: username, fullName: fullName, email: email, blocklist: blocklist)
    {
      throw problem
    }
    return secret
  }
}
