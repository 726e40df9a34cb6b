import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts passwd`: change your own password.
  struct Passwd: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "passwd",
      abstract: "Change your password (with the current one).",
      discussion: """
        Asks for User name, Current password, New password and New password again (echo off at \
        a terminal; from a pipe, one line each in that order). A wrong current password counts \
        as a failed login and gets the same answer as an unknown name. The new password follows \
        the Activation Form's rules and must differ from the current one.
        """)

    @Option(name: .customLong("username"), help: "The user name (skips its prompt).")
    var username: String?

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      try PasswordChangeFlow.run(context.environment, username: username)
    }
  }
}
