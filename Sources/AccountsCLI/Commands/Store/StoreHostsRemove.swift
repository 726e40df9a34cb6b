import AccountsCore
import ArgumentParser

extension AccountsCommand.StoreCommand {
  /// `accounts store hosts remove NAME`.
  struct HostsRemove: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "remove",
      abstract: "Withdraw one fleet host's role: its next connection is refused.",
      discussion: """
        The role leaves the host role and is dropped (kept with NOLOGIN when the server still \
        has something that names it); the host's events stay. Needs a role with CREATEROLE.
        """)

    @Argument(help: ArgumentHelp("The host's name.", valueName: "name"))
    var name: String

    @OptionGroup var global: GlobalOptions

    func validate() throws { try Hosts.validate(name: name) }

    func run(_ context: CommandContext) throws {
      let role = try Hosts.store(global, context: context).removeFleetHost(
        named: name, at: context.environment.now())
      context.console.output(Messages.fleetHostRemoved(name, role: role))
    }
  }
}
