import AccountsCore
import ArgumentParser

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
  @Option(
    name: .customLong("database"),
    help: ArgumentHelp(
      "The SQLite file, or a postgresql:// URI, to use (default: $ACCOUNTS_DATABASE, else for "
        + "root /var/lib/accounts/accounts.sqlite3, else "
        + "$XDG_DATA_HOME/accounts/accounts.sqlite3, else ~/.local/share/accounts/accounts.sqlite3)."
        + " Keep a PostgreSQL password in ~/.pgpass, not in the URI. A path must be valid"
        + " UTF-8.",
      valueName: "path-or-uri"))
  var database: String?

  /// The live context: the terminal, the database path, the policies from the environment.
  func makeContext() throws(AccountsError) -> CommandContext {
    try CommandContext.live(database: database)
  }
}
