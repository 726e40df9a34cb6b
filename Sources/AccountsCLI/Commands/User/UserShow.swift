import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts user show NAME`.
  struct UserShow: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "show", abstract: "Show one account.")

    @Argument(help: "The user name.")
    var username: String

    @Flag(name: .customLong("json"), help: "Print one JSON object (as user list --json).")
    var json = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      let now = context.environment.now()
      let listing = try AccountQuery.show(context.environment, username: username)
      if json {
        context.console.output(AccountPresentation.json(listing, now: now))
      } else {
        AccountPresentation.details(listing, now: now).forEach(context.console.output)
        let factor = try SecondFactorFlow.status(context.environment, username: username)
        var sessions = 0
        try SessionAdminFlow.list(context.environment, username: username) { _ in sessions += 1 }
        SessionPresentation.accountDetails(factor, sessions: sessions)
          .forEach(context.console.output)
      }
    }
  }
}
