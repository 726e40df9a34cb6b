/// The administrator's unlock: `accounts unlock NAME`.
public enum UnlockFlow {
  /// Clears the failed-login count and lock of `username`; returns the sentence said.
  ///
  /// Refuses a name that breaks the naming rules, and a database that does not exist (a
  /// mistyped `--database` creates nothing). Any name can be unlocked, known or not: unknown
  /// names are counted and locked like real ones.
  @discardableResult
  public static func run(_ env: AccountsEnvironment, username: String) throws(AccountsError)
    -> String
  {
    let (name, key) = try DetailRules.username(.text(username))
    let store = try env.existingStore()
    let tally = try LoginRecorder.unlock(store, username: name, usernameKey: key, at: env.now())
    let sentence = Messages.unlocked(
      name, failures: tally.failures, wasLocked: tally.lock(at: env.now()) != nil)
    env.console.output(sentence)
    return sentence
  }
}
