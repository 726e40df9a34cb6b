import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts session …` (administrator).
  struct SessionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "session",
      abstract: "List and end the sessions of this device's accounts.",
      discussion: "For administrators: whoever may write the database.",
      subcommands: [SessionList.self, SessionRevoke.self])
  }
}
