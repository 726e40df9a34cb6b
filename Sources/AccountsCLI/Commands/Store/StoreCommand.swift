import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts store`: whole stores, moved between SQLite and PostgreSQL.
  struct StoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "store",
      abstract:
        "Move a whole store between SQLite and PostgreSQL; give a PostgreSQL store's roles their "
        + "rights and each host its own; keep logins for when its server is away; move second "
        + "factors to the server.",
      subcommands: [Copy.self, Roles.self, Hosts.self, Cache.self, SecondFactors.self])
  }
}
