import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts whoami`.
  struct Whoami: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "whoami",
      abstract: "Show who is logged in here and when the session ends (exit 1: nobody).")

    @Flag(name: .customLong("json"), help: "Print one JSON object.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      let who: LoggedIn
      do {
        who = try SessionFlow.whoami(context.environment)
      } catch {
        // (A pattern with a condition here crashes Swift 6.3's compiler.)
        guard json, error == .notLoggedIn else { throw error }
        context.console.output(SessionPresentation.notLoggedInJSON)
        throw SilentExit(status: .refused)
      }
      if json {
        context.console.output(SessionPresentation.whoamiJSON(who))
      } else {
        SessionPresentation.whoami(who, timeZone: context.environment.timeZone)
          .forEach(context.console.output)
      }
    }
  }
}
