import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts login`: Login, then Home.
  struct Login: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "login",
      abstract: "Log in and show Home (Welcome back <Full name>!).",
      discussion: """
        Asks for User name and Password. A wrong user name or password gets the same message \
        either way. After 5 failures in a row a user name is locked for 1 minute, then 2, 4, ... \
        up to 1 hour (exit 4). An account whose password must change asks for a new one \
        (twice) before Home.
        """)

    @Option(name: .customLong("username"), help: "The user name (skips its prompt).")
    var username: String?

    @Flag(
      name: .customLong("password-stdin"),
      help: "Read the password as one line of standard input.")
    var passwordStdin = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      let home = try LoginFlow.run(
        context.environment,
        options: LoginOptions(username: username, passwordFromStandardInput: passwordStdin))
      context.showHome(home)
    }
  }
}
