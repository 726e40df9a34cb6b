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
        up to 1 hour (exit 4). With two-factor authentication on, asks for a Verification \
        code next (a code from the app, or a recovery code). An account whose password must \
        change asks for a new one (twice) before Home. Starts a session that the bare \
        accounts resumes until logout, 1 hour without use or 24 hours; the session file names \
        the database by its canonical path (or its URI without the password), so the session \
        is found however the database is named later (from another folder, through a link to \
        its folder).
        """)

    @Option(name: .customLong("username"), help: "The user name (skips its prompt).")
    var username: String?

    @Flag(
      name: .customLong("password-stdin"),
      help: "Read the password as one line of standard input.")
    var passwordStdin = false

    @Flag(
      name: .customLong("no-session"),
      help: "Check and record the login without starting a session (for scripts).")
    var noSession = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      let home = try LoginFlow.run(
        context.environment,
        options: LoginOptions(
          username: username, passwordFromStandardInput: passwordStdin,
          startsSession: !noSession))
      context.showHome(home)
    }
  }
}
