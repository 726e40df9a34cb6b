import AccountsCore
import ArgumentParser

extension AccountsCommand.StoreCommand.Cache {
  /// `accounts store cache status [--json]`.
  struct Status: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "status",
      abstract: "Tell what this host's login cache holds.",
      discussion: """
        Its path, its days, how many people it holds, when the oldest entry was refreshed, how \
        many offline events wait for the server, and when this host last reached the server. \
        With --json, one object with every key always present: path, days, entries, oldest, \
        queuedEvents, lastContact (times or null). Does not reach the server.
        """)

    @Flag(name: .customLong("json"), help: "Print one JSON object.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      let status = try LoginCacheFlow.status(context.environment)
      if json {
        context.console.output(LoginCachePresentation.json(status))
      } else {
        LoginCachePresentation.lines(status, timeZone: context.environment.timeZone)
          .forEach(context.console.output)
      }
    }
  }
}
