import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts group remove NAME`.
  struct GroupRemove: UserRecordChangingCommand {
    static let configuration = CommandConfiguration(
      commandName: "remove",
      abstract: "Remove a group; its memberships go with it, its accounts stay.")

    @Argument(help: "The group's name.")
    var name: String

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      try GroupFlow.remove(context.environment, name: name)
    }
  }
}
