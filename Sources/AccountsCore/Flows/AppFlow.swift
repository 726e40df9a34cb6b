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
