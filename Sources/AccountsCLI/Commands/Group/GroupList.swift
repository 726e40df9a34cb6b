import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts group list`.
  struct GroupList: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "list",
      abstract: "List every group: name, how many members, when it was added.",
      discussion: """
        With --json, one object per line with every key always present: name, memberCount, \
        createdAt.
        """)

    @Flag(name: .customLong("json"), help: "Print one JSON object per line.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      var first = true
      try GroupFlow.list(context.environment) { listing in
        if json {
          context.bulk.line(GroupPresentation.json(listing))
        } else {
          if first { context.bulk.line(GroupPresentation.header) }
          context.bulk.line(GroupPresentation.line(listing))
        }
        first = false
      }
    }
  }
}
