/// What the activation form's flags give (also `user add`'s); a missing one is asked for.
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
  /// False for `--no-session`: the login is checked and recorded, no session is started.
  public var startsSession: Bool

  /// Creates options.
  public init(
    username: String? = nil, passwordFromStandardInput: Bool = false, startsSession: Bool = true
  ) {
    self.username = username
    self.passwordFromStandardInput = passwordFromStandardInput
    self.startsSession = startsSession
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

  /// A new password typed twice (echo off), checked for `account`: asked again at a terminal
  /// while it breaks a rule; one line is used for both when `once` (`--password-stdin`).
  func newPassword(
    for account: Account, current: String?, blocklist: PasswordBlocklist?, once: Bool = false
  ) throws(AccountsError) -> String {
    while true {
      let password = try read(Messages.newPasswordPrompt, flag: nil, secret: true)
      let again =
        once ? password : try read(Messages.newPasswordAgainPrompt, flag: nil, secret: true)
      do {
        return try NewPasswordForm(password: password, passwordAgain: again)
          .validate(for: account, current: current, blocklist: blocklist)
      } catch {
        guard console.isInteractive, !once, error.isFormProblem else { throw error }
        for line in error.lines { console.message(line) }
      }
    }
  }

  /// Asks `prompt` and returns true when the answer is `word`.
  func confirm(_ prompt: String, word: String) throws(AccountsError) -> Bool {
    switch console.readLine(prompt: prompt) {
    case .bytes(let bytes):
      return TextRules.trimmed(String(decoding: bytes, as: UTF8.self)) == word
    case .endOfInput:
      throw .inputEnded(stage)
    case .tooLong:
      return false
    }
  }
}
