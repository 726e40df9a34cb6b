import AccountsCore
import AccountsPostgres
import ArgumentParser

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension AccountsCommand {
  /// `accounts store`: whole stores, moved between SQLite and PostgreSQL.
  struct StoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "store",
      abstract:
        "Move a whole store between SQLite and PostgreSQL; upgrade a PostgreSQL one; give its "
        + "roles their rights and each host its own; keep logins for when its server is away; "
        + "move second factors to the server; watch its health.",
      subcommands: [
        Copy.self, Upgrade.self, Roles.self, Hosts.self, Cache.self, SecondFactors.self,
        Health.self,
      ])

    /// The PostgreSQL URI `global` names (the flag, else ACCOUNTS_DATABASE, else the default);
    /// for an SQLite store, a usage error saying `refusal` (exit 2).
    static func postgresURI(_ global: GlobalOptions, refusal: String) throws -> String {
      let path = try DatabaseLocation.resolve(
        flag: global.database, variable: { getenv($0).map { String(cString: $0) } })
      guard StoreLocation.isPostgres(path) else { throw ValidationError(refusal) }
      return path
    }

    /// The PostgreSQL store `global` names, writing as this host (the events a store command
    /// logs); for an SQLite store, a usage error saying `refusal` (exit 2).
    static func postgresStore(
      _ global: GlobalOptions, refusal: String, context: CommandContext
    ) throws -> PostgresStore {
      let store = PostgresStore(uri: try postgresURI(global, refusal: refusal), busyTimeout: 5)
      store.writingHost = context.environment.writingHost
      return store
    }
  }
}
