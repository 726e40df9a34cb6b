import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts user passwd NAME`.
  struct UserPasswd: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "passwd",
      abstract: "Set an account's password without the current one.",
      discussion: """
        Asks for New password and New password again (echo off at a terminal; from a pipe, one \
        line each). The Activation Form's password rules apply. Clears the name's failed logins.
        """)

    @Argument(help: "The user name.")
    var username: String

    @Flag(
      name: .customLong("password-stdin"),
      help: "Read the password as one line of standard input, used for both fields.")
    var passwordStdin = false

    @Flag(
      name: .customLong("must-change"),
      help: "Make the next login choose a new password before Home.")
    var mustChange = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      try UserPasswordFlow.run(
        context.environment, username: username, passwordFromStandardInput: passwordStdin,
        mustChange: mustChange)
    }
  }
}
