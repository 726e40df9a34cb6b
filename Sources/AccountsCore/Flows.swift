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

/// Reading form fields: from a flag, else from the console.
struct FieldReader {
  let console: any Console
  /// What end of input at this reader's prompts means.
  let stage: InputStage

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
    case .endOfInput: throw .inputEnded(stage)
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
  /// Re-asks at a terminal when the form fails. Nothing is created or written until the form
  /// passes; the store then writes in one transaction.
  @discardableResult
  public static func run(_ env: AccountsEnvironment, options: ActivationOptions)
    throws(AccountsError) -> String
  {
    if try env.isActivated() { throw .alreadyActivated }
    // An unusable blocklist is found before anyone types a form it would refuse.
    try env.blocklist?.checkReadable()
    let reader = FieldReader(console: env.console, stage: .form)
    let interactive = env.console.isInteractive
    let mayAskAgain = interactive && !options.passwordFromStandardInput
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
      if interactive && !options.passwordFromStandardInput && previous == nil {
        env.console.message(Messages.passwordRules)
      }
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
        guard mayAskAgain, error.isFormProblem else { throw error }
        for line in error.lines { env.console.message(line) }
        previous = (username.textOrEmpty, fullName.textOrEmpty, email.textOrEmpty)
        continue
      }
      let hash = try hashing { () throws(CryptoError) in
        try env.hasher.hash(password: valid.password)
      }
      let user = NewUser(
        username: valid.username, usernameKey: valid.usernameKey, fullName: valid.fullName,
        email: valid.email, passwordHash: hash.description)
      let store = try env.writableStore()
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
  /// many failures is refused as soon as it is typed, without asking for or checking the
  /// password.
  public static func run(_ env: AccountsEnvironment, options: LoginOptions)
    throws(AccountsError) -> HomeScreen
  {
    try run(env, options: options, stage: .login)
  }

  static func run(_ env: AccountsEnvironment, options: LoginOptions, stage: InputStage)
    throws(AccountsError) -> HomeScreen
  {
    guard try env.isActivated() else { throw .notActivated }
    let store = try env.writableStore()
    let authenticator = Authenticator(env: env, store: store)
    let reader = FieldReader(console: env.console, stage: stage)
    let usernameField = try reader.read(Messages.usernamePrompt, flag: options.username)
    if !usernameField.isBlank,
      TextRules.problem(usernameField, field: Messages.usernamePrompt) == nil
    {
      let name = TextRules.trimmed(usernameField.textOrEmpty)
      if let key = UsernameRules.key(for: name) {
        try authenticator.refuseIfLocked(username: name, key: key)
      }
    }
    let passwordField = try reader.read(Messages.passwordPrompt, flag: nil, secret: true)
    let empty = [
      (Messages.usernamePrompt, usernameField), (Messages.passwordPrompt, passwordField),
    ]
    .filter { $0.1.isBlank }.map(\.0)
    if !empty.isEmpty { throw .incompleteForm(empty: empty) }
    if let problem = TextRules.problem(usernameField, field: Messages.usernamePrompt) {
      throw .invalidForm(problem)
    }
    if let problem = TextRules.problem(
      passwordField, field: Messages.passwordPrompt, allowFormat: true)
    {
      throw .invalidForm(problem)
    }
    return try authenticator.logIn(
      username: TextRules.trimmed(usernameField.textOrEmpty),
      password: PasswordRules.normalized(passwordField.textOrEmpty))
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
    var stage = InputStage.login
    if try !env.isActivated() {
      env.console.message(Messages.notActivatedYet)
      try askToActivate(env)
      let username = try ActivationFlow.run(env, options: ActivationOptions())
      env.console.message(Messages.logInToContinue)
      stage = .loginAfterActivation(username: username)
    }
    let attempts = env.console.isInteractive ? interactiveLoginAttempts : 1
    var attempt = 1
    while true {
      do {
        return try LoginFlow.run(env, options: LoginOptions(), stage: stage)
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
        throw .inputEnded(.activationQuestion)
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
      case .endOfInput:
        throw .inputEnded(.resetConfirmation)
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
  ///
  /// Refuses a name that breaks the naming rules, and a database that does not exist (a
  /// mistyped `--database` creates nothing).
  @discardableResult
  public static func run(_ env: AccountsEnvironment, username: String) throws(AccountsError)
    -> String
  {
    if let problem = TextRules.problem(.text(username), field: Messages.usernamePrompt) {
      throw .invalidForm(problem)
    }
    let name = TextRules.trimmed(username)
    if name.isEmpty { throw .incompleteForm(empty: [Messages.usernamePrompt]) }
    guard let key = UsernameRules.key(for: name) else {
      throw .invalidForm(Messages.usernameRule)
    }
    guard try env.readableStore() != nil else { throw .noDatabase(path: env.databasePath) }
    let store = try env.writableStore()
    let tally = try storing { () throws(StoreError) in
      try store.unlock(username: name, usernameKey: key, at: env.now())
    }
    let sentence = Messages.unlocked(
      name, failures: tally.failures, wasLocked: tally.lock(at: env.now()) != nil)
    env.console.output(sentence)
    return sentence
  }
}

/// What `accounts status` reports.
public struct StatusReport: Equatable, Sendable {
  /// Public or Activated.
  public var state: ActivationState
  /// When the state last changed; nil when nothing was ever stored.
  public var changedAt: Date?
  /// False when no database exists at the path (nothing was ever stored there).
  public var databaseExists: Bool
}

/// `accounts status`.
public enum StatusQuery {
  /// The device's state, and whether a database exists at all.
  public static func run(_ env: AccountsEnvironment) throws(AccountsError) -> StatusReport {
    guard let status = try storing({ () throws(StoreError) in try env.readStatus() }) else {
      return StatusReport(state: .publicState, changedAt: nil, databaseExists: false)
    }
    return StatusReport(state: status.state, changedAt: status.changedAt, databaseExists: true)
  }

  /// `State: …` and `Database: …` lines.
  public static func lines(_ report: StatusReport, path: String) -> [String] {
    [
      "State: \(report.state.rawValue)",
      report.databaseExists ? "Database: \(path)" : Messages.databaseMissing(path),
    ]
  }

  /// One JSON object; every key always present.
  public static func json(_ report: StatusReport, path: String) -> String {
    JSON.object([
      ("state", JSON.string(report.state.rawValue)), ("database", JSON.string(path)),
      ("exists", report.databaseExists ? "true" : "false"),
      ("changedAt", JSON.string(report.changedAt.map(Timestamp.string(from:)))),
    ])
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

  /// One line of text: time, event, user name, detail (escaped unambiguously).
  public static func line(_ event: AuditEvent) -> String {
    var line = "\(Timestamp.string(from: event.occurredAt))  "
    line += event.kind.rawValue.padding(toLength: 13, withPad: " ", startingAt: 0)
    line += "  \(event.username.map(Escaping.unambiguous) ?? "-")"
    if let detail = event.detail { line += "  (\(Escaping.unambiguous(detail)))" }
    return line
  }

  /// One JSON object; every key always present (`null` when absent).
  public static func json(_ event: AuditEvent) -> String {
    JSON.object([
      ("time", JSON.string(Timestamp.string(from: event.occurredAt))),
      ("event", JSON.string(event.kind.rawValue)),
      ("user", JSON.string(event.username)),
      ("detail", JSON.string(event.detail)),
    ])
  }
}
