import AccountsCore
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
        "Move a whole store between SQLite and PostgreSQL; upgrade a PostgreSQL one; give a PostgreSQL store's roles their "
        + "rights and each host its own; keep logins for when its server is away; move second "
        + "factors to the server; watch its health.",
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
  }
}
