import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts verify`: check a password for a script, printing nothing.
  struct Verify: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "verify",
      abstract: "Check a user name and password for a script: exit 0 right, 1 wrong, 4 locked.",
      discussion: """
        Reads the password as one line of standard input (and for an account with a second \
        factor, the verification code as the next line) and prints nothing for a right, wrong \
        or locked answer. Costs, counts and logs exactly as a login does, without Home or a \
        session.
        """)

    @Option(name: .customLong("username"), help: "The user name.")
    var username: String

    @Flag(
      name: .customLong("password-stdin"),
      help: "Read the password as one line of standard input (required).")
    var passwordStdin = false

    @OptionGroup var global: GlobalOptions

    func validate() throws {
      if !passwordStdin {
        throw ValidationError(Messages.verifyNeedsPasswordStdin)
      }
    }

    func run(_ context: CommandContext) throws {
      do {
        try VerifyFlow.run(context.environment, username: username)
      } catch {
        throw SilentExit(answering: error) ?? error
      }
    }
  }
}
