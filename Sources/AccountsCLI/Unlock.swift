import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts unlock NAME`: clear a user name's failed logins and lock (administrator).
  struct Unlock: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "unlock",
      abstract: "Clear the failed-login count and lock of a user name.")

    @Argument(help: "The user name to unlock.")
    var username: String

    @OptionGroup var global: GlobalOptions

    func run() throws {
      try UnlockFlow.run(global.makeContext().environment, username: username)
    }
  }
}
