import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts logout`.
  struct Logout: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "logout",
      abstract: "End this session; the next accounts asks to log in (exit 1: not logged in).")

    @Flag(name: .customLong("all"), help: "End every session of the logged-in account.")
    var all = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      let ended = try SessionFlow.logout(context.environment, all: all)
      context.console.output(all ? Messages.loggedOutAll(ended) : Messages.loggedOut)
    }
  }
}
