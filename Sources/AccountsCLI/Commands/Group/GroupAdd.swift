import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts group add NAME`.
  struct GroupAdd: UserRecordChangingCommand {
    static let configuration = CommandConfiguration(
      commandName: "add",
      abstract: "Add a group.",
      discussion: """
        Refused on a Public device, for a name that breaks the rules or that a group already has \
        (exit 1).
        """)

    @Argument(help: "The group's name.")
    var name: String

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      try GroupFlow.add(context.environment, name: name)
    }
  }
}
