import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// The user name and password options of the `2fa` commands.
  struct CredentialOptions: ParsableArguments {
    @Option(name: .customLong("username"), help: "The user name (skips its prompt).")
    var username: String?

    @Flag(
      name: .customLong("password-stdin"),
      help: "Read the password, then the code, as lines of standard input.")
    var passwordStdin = false
  }
}
