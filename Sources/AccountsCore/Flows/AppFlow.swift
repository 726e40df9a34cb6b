/// The bare `accounts`: Activation → Activation Form → Login → Home, as an app's screens.
public enum AppFlow {
  /// Login attempts offered at a terminal before giving up.
  public static let interactiveLoginAttempts = 3

  /// Walks the screens from wherever the device is; returns Home.
  public static func run(_ env: AccountsEnvironment) throws(AccountsError) -> HomeScreen {
    var stage = InputStage.login
    if try env.isActivated() {
      // Holding a live session, the app opens on its inside.
      if let home = try SessionFlow.resume(env) { return home }
    } else {
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
      } catch let error where attempt < attempts && Self.goesBackToLogin(error) {
        // A wrong password, or at the second step a wrong code or none: back to the start.
        for line in error.lines { env.console.message(line) }
        attempt += 1
      }
    }
  }

  /// True for the refusals after which a terminal offers Login again.
  private static func goesBackToLogin(_ error: AccountsError) -> Bool {
    switch error {
    case .invalidCredentials, .invalidVerificationCode, .replayedVerificationCode: return true
    case .incompleteForm(let empty): return empty == [Messages.verificationCodePrompt]
    default: return false
    }
  }

  private static func askToActivate(_ env: AccountsEnvironment) throws(AccountsError) {
    while true {
      switch env.console.readLine(prompt: Messages.activateNowPrompt) {
      case .endOfInput:
        throw .inputEnded(.activationQuestion)
      case .tooLong:
        throw .declined(.activation)
      case .bytes(let bytes):
        let answer = TextRules.trimmed(String(decoding: bytes, as: UTF8.self)).lowercased()
        if ["", "y", "yes"].contains(answer) { return }
        if ["n", "no"].contains(answer) || !env.console.isInteractive {
          throw .declined(.activation)
        }
      }
    }
  }
}
