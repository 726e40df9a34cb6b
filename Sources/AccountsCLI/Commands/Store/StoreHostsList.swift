import AccountsCore
import ArgumentParser

extension AccountsCommand.StoreCommand {
  /// `accounts store hosts list [--json]`.
  struct HostsList: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "list",
      abstract: "List the hosts with a role of their own: name, role, when made, last event.",
      discussion: """
        With --json, one object per line with every key always present: name, role, madeAt, \
        lastEvent (null before the host's first event).
        """)

    @Flag(name: .customLong("json"), help: "Print one JSON object per line.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      let hosts = try Hosts.store(global, context: context).fleetHosts()
      if json {
        for host in hosts { context.bulk.line(FleetHostPresentation.json(host)) }
      } else if hosts.isEmpty {
        context.console.output(Messages.noFleetHosts)
      } else {
        context.bulk.line(FleetHostPresentation.header)
        for host in hosts { context.bulk.line(FleetHostPresentation.line(host)) }
      }
    }
  }
}
