import AccountsCore
import AccountsPostgres
import ArgumentParser

extension AccountsCommand.StoreCommand {
  /// `accounts store hosts add NAME [--role ROLE]`.
  struct HostsAdd: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "add",
      abstract: "Make a PostgreSQL login role for one fleet host, a member of the host role.",
      discussion: """
        The role (accounts_host_NAME unless --role names another) is made with LOGIN and no \
        password: say how it authenticates in the server's pg_hba.conf (peer, a password set \
        with ALTER ROLE … PASSWORD, a client certificate). The host then connects as it. \
        Needs a role with CREATEROLE, and `store roles --apply` run first.
        """)

    @Argument(
      help: ArgumentHelp(
        "The host's name: lower-case letters, digits and -.",
        valueName: "name"))
    var name: String

    @Option(help: ArgumentHelp("The role to make (default accounts_host_NAME).", valueName: "role"))
    var role: String?

    @OptionGroup var global: GlobalOptions

    func validate() throws {
      try Hosts.validate(name: name)
      if let role, !PostgresRoles.isUsable(role) {
        throw ValidationError(Messages.unusableRoleName("--role", Escaping.visible(role)))
      }
    }

    func run(_ context: CommandContext) throws {
      let role = role ?? FleetHost.defaultRole(for: name)
      let hostRole = try Hosts.store(global, context: context).addFleetHost(
        named: name, role: role, at: context.environment.now())
      context.console.output(Messages.fleetHostAdded(name, role: role, hostRole: hostRole))
    }
  }
}
