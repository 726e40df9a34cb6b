import AccountsCore
import ArgumentParser

extension AccountsCommand.StoreCommand {
  /// `accounts store upgrade [--contract]`.
  struct Upgrade: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "upgrade",
      abstract: "Upgrade a shared PostgreSQL store for this version of accounts (its owner).",
      discussion: """
        No other command upgrades a PostgreSQL store. Upgrade the store first, then the hosts: \
        its expansions keep the hosts of the release before logging people in. Once every host \
        runs this version, run it again with --contract for the steps that remove what the \
        release before used. Running it again changes nothing. An SQLite file upgrades itself \
        when accounts next writes it.
        """)

    @Flag(help: "Also apply the steps that only this version's hosts work with.")
    var contract = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      let store = try AccountsCommand.StoreCommand.postgresStore(
        global, refusal: Messages.upgradeNeedsPostgres, context: context)
      let upgrade = try store.upgrade(contract: contract)
      for line in Messages.storeUpgraded(upgrade, location: context.environment.storeLocation) {
        context.console.output(line)
      }
    }
  }
}
