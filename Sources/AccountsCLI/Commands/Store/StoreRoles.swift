import AccountsCore
import AccountsPostgres
import ArgumentParser
import FoundationEssentials

extension AccountsCommand.StoreCommand {
  /// `accounts store roles --admin ROLE --host ROLE [--apply]`.
  struct Roles: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "roles",
      abstract: "Print (or, with --apply, run) the SQL that gives a PostgreSQL store's "
        + "administrator role and fleet host role their rights.",
      discussion: """
        The administrator role may run every command. The host role may only log people in \
        and keep the host's own user records: status, login, verify, whoami, logout, passwd, \
        the PAM paths and userdb enable (without --uids), sync, status and disable, each \
        through a function of the store's; it may write no table (no uid, no range) and read \
        neither the audit log nor the sessions' tokens. Both roles must exist (CREATE ROLE … LOGIN, with the password or \
        certificate your server's pg_hba.conf asks for) and neither may own the store. \
        Without --apply the SQL is printed for a DBA to review and run (psql -f); with it, \
        the schema's owner runs it on the --database store in one transaction. Run it again \
        after every upgrade of accounts: it sets the same rights, new functions included.
        """)

    @Option(help: ArgumentHelp("The role that administers the store.", valueName: "role"))
    var admin: String

    @Option(help: ArgumentHelp("The role fleet hosts log people in with.", valueName: "role"))
    var host: String

    @Flag(help: "Run the SQL on the store (as its owner) instead of printing it.")
    var apply = false

    @OptionGroup var global: GlobalOptions

    func validate() throws {
      for (option, name) in [("--admin", admin), ("--host", host)]
      where !PostgresRoles.isUsable(name) {
        throw ValidationError(Messages.unusableRoleName(option, Escaping.visible(name)))
      }
      if admin == host { throw ValidationError(Messages.sameRoles) }
    }

    func run(_ context: CommandContext) throws {
      guard apply else {
        for line in PostgresRoles.grants(admin: admin, host: host).split(
          separator: "\n", omittingEmptySubsequences: false
        ).dropLast() {
          context.console.output(String(line))
        }
        return
      }
      try AccountsCommand.StoreCommand.postgresStore(
        global, refusal: Messages.rolesNeedPostgres, context: context
      ).grantRoles(admin: admin, host: host)
      context.console.output(
        Messages.rolesGranted(
          admin: admin, host: host, location: context.environment.storeLocation))
    }
  }
}
