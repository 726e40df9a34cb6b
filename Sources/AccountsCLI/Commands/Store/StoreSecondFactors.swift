import ArgumentParser

extension AccountsCommand.StoreCommand {
  /// `accounts store second-factors …`: the second factors a PostgreSQL store's server keeps.
  struct SecondFactors: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "second-factors",
      abstract: "Move second factors sealed under a key file into a PostgreSQL server's keeping.",
      subcommands: [SecondFactorsImportKey.self])
  }
}
