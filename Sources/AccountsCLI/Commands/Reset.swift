import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts reset`: back to Public (administrator).
  struct Reset: UserRecordChangingCommand {
    static let configuration = CommandConfiguration(
      commandName: "reset",
      abstract: "Make this device Public again and delete every account.",
      discussion: """
        Asks you to type "reset" to confirm. Without a terminal it refuses unless --yes is given. \
        Failed-login counts are cleared; the audit log is kept.
        """)

    @Flag(name: [.customLong("yes"), .customShort("y")], help: "Do not ask for confirmation.")
    var yes = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      try ResetFlow.run(context.environment, confirmed: yes)
    }
  }
}
