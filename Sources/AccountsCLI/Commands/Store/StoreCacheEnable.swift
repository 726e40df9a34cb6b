import AccountsCore
import ArgumentParser

extension AccountsCommand.StoreCommand.Cache {
  /// `accounts store cache enable [--days N]`.
  struct Enable: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "enable",
      abstract: "Turn on this host's login cache (or change its days).",
      discussion: """
        From then on each successful login here refreshes that person's entry; while the \
        server cannot be reached, people whose entry is younger than --days log in from it. \
        Run again to change --days; the entries are kept.
        """)

    @Option(
      help: ArgumentHelp(
        "How many days after a person's last login here the cache may log them in (1 to 365).",
        valueName: "days"))
    var days = LoginCacheDays.standard

    @OptionGroup var global: GlobalOptions

    func validate() throws {
      guard LoginCacheDays.allowed.contains(days) else {
        throw ValidationError(Messages.loginCacheDaysRule)
      }
    }

    func run(_ context: CommandContext) throws {
      let status = try LoginCacheFlow.enable(context.environment, days: days)
      context.console.output(Messages.loginCacheEnabled(status.path, days: status.days))
    }
  }
}
