import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts user remove NAME`.
  struct UserRemove: UserRecordChangingCommand {
    static let configuration = CommandConfiguration(
      commandName: "remove",
      abstract: "Delete an account.",
      discussion: """
        Asks you to type "remove" to confirm; without a terminal it refuses unless --yes is \
        given. The owner cannot be removed while other accounts exist (move ownership first \
        with user edit --owner), nor the last account (use reset).
        """)

    @Argument(help: "The user name.")
    var username: String

    @Flag(name: [.customLong("yes"), .customShort("y")], help: "Do not ask for confirmation.")
    var yes = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      try UserRemoveFlow.run(context.environment, username: username, confirmed: yes)
    }
  }
}
