import AccountsCore
import ArgumentParser

/// The Activation Form's flags, shared by `activate` and `user add`: a flag skips its prompt.
struct AccountFormOptions: ParsableArguments {
  @Option(name: .customLong("username"), help: "The user name (skips its prompt).")
  var username: String?

  @Option(name: .customLong("full-name"), help: "The full name (skips its prompt).")
  var fullName: String?

  @Option(name: .customLong("email"), help: "The e-mail address (skips its prompt).")
  var email: String?

  @Flag(
    name: .customLong("password-stdin"),
    help: "Read the password as one line of standard input, used for both password fields.")
  var passwordStdin = false

  /// What the core's form reads.
  var options: ActivationOptions {
    ActivationOptions(
      username: username, fullName: fullName, email: email,
      passwordFromStandardInput: passwordStdin)
  }
}
