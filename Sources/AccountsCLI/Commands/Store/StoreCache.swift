import ArgumentParser

extension AccountsCommand.StoreCommand {
  /// `accounts store cache`: this host's login cache, for when the server is away.
  struct Cache: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "cache",
      abstract: "Keep this host's logins of a PostgreSQL store, for when its server is away.",
      discussion: """
        Root only. The cache is an SQLite file of root's, mode 0600, at \
        /var/lib/accounts/login-cache.sqlite3 (ACCOUNTS_LOGIN_CACHE names another). It holds \
        a verifier of this host's own for each person who logged in here, never the server's \
        hash (docs/offline.md).
        """,
      subcommands: [Enable.self, Status.self, Disable.self])
  }
}
