import AccountsCrypto
import AccountsStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What the activation form's flags give; a missing one is asked for.
public struct ActivationOptions: Equatable, Sendable {
  /// `--username`.
  public var username: String?
  /// `--full-name`.
  public var fullName: String?
  /// `--email`.
  public var email: String?
  /// `--password-stdin`: one line of standard input is the password, for both fields.
  public var passwordFromStandardInput: Bool

  /// Creates options.
  public init(
    username: String? = nil, fullName: String? = nil, email: String? = nil,
    passwordFromStandardInput: Bool = false
  ) {
    self.username = username
    self.fullName = fullName
    self.email = email
    self.passwordFromStandardInput = passwordFromStandardInput
  }
}

/// What the login flags give.
public struct LoginOptions: Equatable, Sendable {
  /// `--username`.
  public var username: String?
  /// `--password-stdin`.
  public var passwordFromStandardInput: Bool

  /// Creates options.
  public init(username: String? = nil, passwordFromStandardInput: Bool = false) {
    self.username = username
    self.passwordFromStandardInput = passwordFromStandardInput
  }
}

/// Home, after a successful login.
public struct HomeScreen: Equatable, Sendable {
  /// The user's full name.
  public var fullName: String
  /// The login before this one, if any.
  public var previousLogin: Date?
  /// Failed attempts since that login (or since activation).
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
    if failuresSince > 0 { lines.append(Messages.failedAttemptsSince(failuresSince)) }
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
    let whole = max(1, Int(seconds.rounded(.up)))
    if whole < 60 { return whole == 1 ? "1 second" : "\(whole) seconds" }
    let minutes = (whole + 59) / 60
    return minutes == 1 ? "1 minute" : "\(minutes) minutes"
  }
}

/// Reading form fields: from a flag, else from the console.
struct FieldReader {
  let console: any Console

  /// A field's value: the flag's if given, else a line (with `fallback` offered as default).
  func read(_ label: String, flag: String?, fallback: String? = nil, secret: Bool = false)
    throws(AccountsError) -> FieldValue
  {
    if let flag { return .text(flag) }
    let shownDefault = fallback.flatMap { value -> String? in
      guard !value.isEmpty, !TextRules.hasForbiddenCharacters(value, allowFormat: false),
        value.unicodeScalars.count <= 80
      else { return nil }
      return value
    }
    let prompt = shownDefault.map { "\(label) [\($0)]: " } ?? "\(label): "
    let line = secret ? console.readSecret(prompt: prompt) : console.readLine(prompt: prompt)
    switch line {
    case .endOfInput: throw .inputEnded
    case .tooLong: return .tooLong
    case .bytes(let bytes):
      if bytes.isEmpty, let shownDefault { return .text(shownDefault) }
      return FieldValue(bytes)
    }
  }
}

/// The Activation Form: `accounts activate`.
public enum ActivationFlow {
  /// Asks for the form, stores the user and activates; returns the user name.
  ///
  /// Re-asks at a terminal when the form fails; the store writes in one transaction.
  @discardableResult
  public static func run(_ env: AccountsEnvironment, options: ActivationOptions)
    throws(AccountsError) -> String
  {
    let store = try env.writableStore()
    if try storing({ () throws(StoreError) in try store.status() }).state == .activated {
      throw .alreadyActivated
    }
    let reader = FieldReader(console: env.console)
    let mayAskAgain = env.console.isInteractive && !options.passwordFromStandardInput
    var previous: (username: String, fullName: String, email: String)?
    while true {
      let username = try reader.read(
        Messages.usernamePrompt, flag: previous == nil ? options.username : nil,
        fallback: previous?.username ?? options.username)
      let fullName = try reader.read(
        Messages.fullNamePrompt, flag: previous == nil ? options.fullName : nil,
        fallback: previous?.fullName ?? options.fullName)
      let email = try reader.read(
        Messages.emailPrompt, flag: previous == nil ? options.email : nil,
        fallback: previous?.email ?? options.email)
      let password = try reader.read(Messages.passwordPrompt, flag: nil, secret: true)
      let passwordAgain =
        options.passwordFromStandardInput
        ? password : try reader.read(Messages.passwordAgainPrompt, flag: nil, secret: true)
      let form = ActivationForm(
        username: username, fullName: fullName, email: email, password: password,
        passwordAgain: passwordAgain)
      let valid: ActivationForm.Valid
      do {
        valid = try form.validate(blocklist: env.blocklist)
      } catch {
        guard mayAskAgain, case .invalidForm(let message) = error else { throw error }
        env.console.message(message)
        previous = (username.textOrEmpty, fullName.textOrEmpty, email.textOrEmpty)
        continue
      }
      let hash = try hashing { () throws(CryptoError) in
        try env.hasher.hash(password: valid.password)
      }
      let user = NewUser(
        username: valid.username, usernameKey: valid.usernameKey, fullName: valid.fullName,
        email: valid.email, passwordHash: hash.description)
      try storing { () throws(StoreError) in try store.activate(user, at: env.now()) }
      env.console.output(Messages.activated(valid.username))
      return valid.username
    }
  }
}

/// Login: `accounts login`.
public enum LoginFlow {
  /// Asks for the user name and password and checks them; returns Home.
  ///
  /// Unknown names cost the same work and get the same answers as known ones. A name with too
  /// many failures is refused without checking the password.
  public static func run(_ env: AccountsEnvironment, options: LoginOptions)
    throws(AccountsError) -> HomeScreen
  {
    guard try env.isActivated() else { throw .notActivated }
    let store = try env.writableStore()
    let reader = FieldReader(console: env.console)
    let usernameField = try reader.read(Messages.usernamePrompt, flag: options.username)
    let passwordField = try reader.read(Messages.passwordPrompt, flag: nil, secret: true)
    if usernameField.isBlank || passwordField.isBlank {
      throw .invalidForm(Messages.fillAllFields)
    }
    if let problem = TextRules.problem(usernameField, field: Messages.usernamePrompt) {
      throw .invalidForm(problem)
    }
    if let problem = TextRules.problem(
      passwordField, field: Messages.passwordPrompt, allowFormat: true)
    {
      throw .invalidForm(problem)
    }
    let username = TextRules.trimmed(usernameField.textOrEmpty)
    let key = UsernameRules.lookupKey(for: username)
    let password = PasswordRules.normalized(passwordField.textOrEmpty)

    let (user, tally) = try storing { () throws(StoreError) in
      try store.loginRecord(usernameKey: key)
    }
    if tally.lock(at: env.now()) != nil {
      return try fail(env, store: store, username: username, key: key)
    }
    let verification = try hashing { () throws(CryptoError) -> PasswordVerification in
      if let user, let stored = EncodedPasswordHash(parsing: user.passwordHash),
        password.unicodeScalars.count <= PasswordRules.maximumLength
      {
        return try env.hasher.verify(password: password, against: stored)
      }
      return try env.hasher.verifyAgainstDummy(password: password)
    }
    guard verification.isValid, let user else {
      return try fail(env, store: store, username: username, key: key)
    }
    let outcome = try storing { () throws(StoreError) in
      try store.recordLoginSuccess(username: username, usernameKey: key, at: env.now())
    }
    switch outcome {
    case .locked(let until):
      throw lockedError(env, until: until)
    case .loggedIn(let previousLogin, let failuresSince):
      if verification.needsRehash {
        // A stronger hash is a bonus: failing to write it never fails the login.
        if let fresh = try? env.hasher.hash(password: password) {
          try? store.updatePasswordHash(usernameKey: key, to: fresh.description, at: env.now())
        }
      }
      return HomeScreen(
        fullName: user.fullName, previousLogin: previousLogin, failuresSince: failuresSince)
    }
  }

  private static func fail(
    _ env: AccountsEnvironment, store: AccountStore, username: String, key: String
  ) throws(AccountsError) -> HomeScreen {
    let outcome = try storing { () throws(StoreError) in
      try store.recordLoginFailure(
        username: username, usernameKey: key, at: env.now(), policy: env.lockout)
    }
    switch outcome {
    case .counted:
      throw .invalidCredentials
    case .lockedNow(let until):
      env.console.message(Messages.invalidCredentials)
      throw lockedError(env, until: until)
    case .alreadyLocked(let until):
      throw lockedError(env, until: until)
    }
  }

  static func lockedError(_ env: AccountsEnvironment, until: Date) -> AccountsError {
    let message = Messages.tooManyAttempts(
      until: TimeText.clock(until, timeZone: env.timeZone),
      remaining: TimeText.duration(until.timeIntervalSince(env.now())))
    return .locked(until: until, message: message)
  }
}

/// The bare `accounts`: Activation → Activation Form → Login → Home, as an app's screens.
public enum AppFlow {
  /// Login attempts offered at a terminal before giving up.
  public static let interactiveLoginAttempts = 3

  /// Walks the screens from wherever the device is; returns Home.
  public static func run(_ env: AccountsEnvironment) throws(AccountsError) -> HomeScreen {
    if try !env.isActivated() {
      env.console.message(Messages.notActivatedYet)
      try askToActivate(env)
      try ActivationFlow.run(env, options: ActivationOptions())
      env.console.message(Messages.logInToContinue)
    }
    let attempts = env.console.isInteractive ? interactiveLoginAttempts : 1
    var attempt = 1
    while true {
      do {
        return try LoginFlow.run(env, options: LoginOptions())
      } catch .invalidCredentials where attempt < attempts {
        env.console.message(Messages.invalidCredentials)
        attempt += 1
      }
    }
  }

  private static func askToActivate(_ env: AccountsEnvironment) throws(AccountsError) {
    while true {
      switch env.console.readLine(prompt: Messages.activateNowPrompt) {
      case .endOfInput:
        throw .inputEnded
      case .tooLong:
        throw .declined(Messages.activationDeclined)
      case .bytes(let bytes):
        let answer = TextRules.trimmed(String(decoding: bytes, as: UTF8.self)).lowercased()
        if ["", "y", "yes"].contains(answer) { return }
        if ["n", "no"].contains(answer) || !env.console.isInteractive {
          throw .declined(Messages.activationDeclined)
        }
      }
    }
  }
}

/// The administrator's reset: `accounts reset`.
public enum ResetFlow {
  /// Returns the device to Public and deletes its user, after confirmation unless `confirmed`.
  public static func run(_ env: AccountsEnvironment, confirmed: Bool) throws(AccountsError) {
    guard try env.isActivated() else {
      env.console.output(Messages.alreadyPublic)
      return
    }
    let store = try env.writableStore()
    if !confirmed {
      guard env.console.isInteractive else { throw .confirmationRequired }
      let user = try storing { () throws(StoreError) in try store.user() }
      env.console.message(Messages.resetWarning(user?.username))
      switch env.console.readLine(prompt: Messages.resetPrompt) {
      case .bytes(let bytes)
      where TextRules.trimmed(String(decoding: bytes, as: UTF8.self)) == Messages.resetWord:
        break
      default:
        throw .declined(Messages.resetCancelled)
      }
    }
    let changed = try storing { () throws(StoreError) in try store.reset(at: env.now()) }
    env.console.output(changed ? Messages.resetDone : Messages.alreadyPublic)
  }
}

/// The administrator's unlock: `accounts unlock NAME`.
public enum UnlockFlow {
  /// Clears the failed-login count and lock of `username`; returns the sentence said.
  @discardableResult
  public static func run(_ env: AccountsEnvironment, username: String) throws(AccountsError)
    -> String
  {
    if let problem = TextRules.problem(.text(username), field: Messages.usernamePrompt) {
      throw .invalidForm(problem)
    }
    let name = TextRules.trimmed(username)
    if name.isEmpty { throw .invalidForm(Messages.fillAllFields) }
    let store = try env.writableStore()
    let tally = try storing { () throws(StoreError) in
      try store.unlock(
        username: name, usernameKey: UsernameRules.lookupKey(for: name), at: env.now())
    }
    let sentence = Messages.unlocked(
      name, failures: tally.failures, wasLocked: tally.lock(at: env.now()) != nil)
    env.console.output(sentence)
    return sentence
  }
}

/// `accounts status`.
public enum StatusQuery {
  /// The device's state and the database path.
  public static func run(_ env: AccountsEnvironment) throws(AccountsError) -> DeviceStatus {
    guard let store = try env.readableStore() else {
      return DeviceStatus(state: .publicState, changedAt: nil)
    }
    return try storing { () throws(StoreError) in try store.status() }
  }

  /// `State: …` and `Database: …` lines.
  public static func lines(_ status: DeviceStatus, path: String) -> [String] {
    ["State: \(status.state.rawValue)", "Database: \(path)"]
  }

  /// One JSON object.
  public static func json(_ status: DeviceStatus, path: String) -> String {
    var fields = [("state", JSON.string(status.state.rawValue)), ("database", JSON.string(path))]
    if let changedAt = status.changedAt {
      fields.append(("changedAt", JSON.string(Timestamp.string(from: changedAt))))
    }
    return JSON.object(fields)
  }
}

/// `accounts log`.
public enum AuditLogQuery {
  /// The newest `limit` events (all when nil), oldest first.
  public static func run(_ env: AccountsEnvironment, limit: Int?) throws(AccountsError)
    -> [AuditEvent]
  {
    guard let store = try env.readableStore() else { return [] }
    return try storing { () throws(StoreError) in try store.auditEvents(limit: limit) }
  }

  /// One line of text: time, event, user name (escaped), detail.
  public static func line(_ event: AuditEvent) -> String {
    var line = "\(Timestamp.string(from: event.occurredAt))  "
    line += event.kind.rawValue.padding(toLength: 13, withPad: " ", startingAt: 0)
    line += "  \(event.username.map(Escaping.visible) ?? "-")"
    if let detail = event.detail { line += "  (\(Escaping.visible(detail)))" }
    return line
  }

  /// One JSON object.
  public static func json(_ event: AuditEvent) -> String {
    var fields = [
      ("time", JSON.string(Timestamp.string(from: event.occurredAt))),
      ("event", JSON.string(event.kind.rawValue)),
      ("user", event.username.map(JSON.string) ?? "null"),
    ]
    if let detail = event.detail { fields.append(("detail", JSON.string(detail))) }
    return JSON.object(fields)
  }
}

/// Text made safe to print: control and format characters become `\u{…}`.
public enum Escaping {
  /// `text` with every control, format or separator character written as an escape.
  public static func visible(_ text: String) -> String {
    var result = ""
    for scalar in text.unicodeScalars {
      switch scalar.properties.generalCategory {
      case .control, .format, .lineSeparator, .paragraphSeparator, .unassigned, .surrogate,
        .privateUse:
        result += "\\u{\(String(scalar.value, radix: 16))}"
      default:
        if scalar == "\\" { result += "\\\\" } else { result.unicodeScalars.append(scalar) }
      }
    }
    return result
  }
}

/// Minimal JSON writing with every key in a fixed order.
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
        if scalar.value < 0x20 || scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value)
          || scalar.value == 0x2028 || scalar.value == 0x2029
        {
          result += String(format: "\\u%04x", scalar.value)
        } else {
          result.unicodeScalars.append(scalar)
        }
      }
    }
    return result + "\""
  }

  /// A JSON object from already-encoded values, keys in the order given.
  static func object(_ fields: [(String, String)]) -> String {
    "{" + fields.map { "\(string($0.0)):\($0.1)" }.joined(separator: ",") + "}"
  }
}
