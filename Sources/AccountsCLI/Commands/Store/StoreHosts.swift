import AccountsCore
import AccountsPostgres
import ArgumentParser

extension AccountsCommand.StoreCommand {
  /// `accounts store hosts …`: fleet hosts that each log in with a role of their own.
  struct Hosts: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "hosts",
      abstract: "Give fleet hosts a PostgreSQL role of their own: add, list, remove.",
      discussion: """
        For administrators of a PostgreSQL store whose roles `store roles --apply` set. Every \
        event and session a host's own role writes names that host, whatever the host sends or \
        ACCOUNTS_HOST_NAME says; removing a host withdraws its role alone. Adding and removing \
        need a role with CREATEROLE. An unknown host exits 5.
        """,
      subcommands: [HostsAdd.self, HostsList.self, HostsRemove.self])

    /// The PostgreSQL store `global` names; a usage error for an SQLite one.
    static func store(_ global: GlobalOptions, context: CommandContext) throws -> PostgresStore {
      try AccountsCommand.StoreCommand.postgresStore(
        global, refusal: Messages.hostsNeedPostgres, context: context)
    }

    /// Refuses a host name `store hosts` does not take.
    static func validate(name: String) throws {
      guard FleetHost.isUsableName(name) else {
        throw ValidationError(Messages.unusableHostName(Escaping.visible(name)))
      }
    }
  }
}
