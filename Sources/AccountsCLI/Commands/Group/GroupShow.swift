import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts group show NAME`.
  struct GroupShow: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "show",
      abstract: "Show one group and its members.",
      discussion: "With --json, one object: name, createdAt, members (user names).")

    @Argument(help: "The group's name.")
    var name: String

    @Flag(name: .customLong("json"), help: "Print one JSON object.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      let (group, members) = try GroupFlow.show(context.environment, name: name)
      if json {
        context.console.output(GroupPresentation.json(group, members: members))
      } else {
        GroupPresentation.details(group, members: members).forEach(context.console.output)
      }
    }
  }
}
