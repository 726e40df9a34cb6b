import AccountsCrypto
import FoundationEssentials

/// The Activation Form: `accounts activate`.
public enum ActivationFlow {
  /// Asks for the form, stores the owner and activates; returns the user name.
  ///
  /// Re-asks at a terminal when the form fails. Nothing is created or written until the form
  /// passes; the store then writes in one transaction.
  @discardableResult
  public static func run(_ env: AccountsEnvironment, options: ActivationOptions)
    throws(AccountsError) -> String
  {
    if try env.isActivated() { throw .alreadyActivated }
    let account = try AccountForm.ask(env, options: options)
    let store = try env.writableStore()
    let said = try store.write { writer throws(AccountsError) -> [String] in
      let owner = try writer.activate(owner: account, at: env.now())
      try writer.setTally(nil, key: owner.usernameKey, at: env.now())
      try writer.append(
        AuditRecord(
          .activation, at: env.now(), username: owner.username, usernameKey: owner.usernameKey))
      // A store that gives numbers already (a host kept its records before a reset).
      var numbers = try PosixIDGiver(env, writer: writer, at: env.now())
      try numbers.number(owner, writer: writer)
      return numbers.said
    }
    env.console.output(Messages.activated(account.username))
    said.forEach(env.console.message)
    return account.username
  }
}

/// The Activation Form's fields, rules and messages, shared by `activate` and `user add`.
enum AccountForm {
  /// Reads and checks the form (asked again at a terminal while it fails); returns the new
  /// account with its password hashed.
  static func ask(_ env: AccountsEnvironment, options: ActivationOptions) throws(AccountsError)
    -> NewAccount
  {
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
      return NewAccount(
        username: valid.username, usernameKey: valid.usernameKey, fullName: valid.fullName,
        email: valid.email, passwordHash: hash.description)
    }
  }
}
