import AccountsCore
import AccountsStore
import ArgumentParser

extension AccountsCommand.StoreCommand {
  /// `accounts store second-factors import-key FILE`.
  struct SecondFactorsImportKey: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "import-key",
      abstract: "Hand every secret sealed under FILE to the server, which encrypts it itself.",
      discussion: """
        For an administrator of a PostgreSQL store whose second factors were sealed under a \
        key file (before the server kept them). One transaction: every secret sealed under \
        FILE moves, or none (a secret sealed under another key stops it, exit 3). Afterwards \
        no host needs the key file.
        """)

    @Argument(help: ArgumentHelp("The key file the secrets were sealed under.", valueName: "file"))
    var file: String

    @OptionGroup var global: GlobalOptions

    func validate() throws {
      _ = try AccountsCommand.StoreCommand.postgresURI(
        global, refusal: Messages.secondFactorsNeedPostgres)
    }

    func run(_ context: CommandContext) throws {
      let count = try SecondFactorKeyImport.run(context.environment, keys: KeyFile(path: file))
      context.console.output(Messages.secondFactorsMoved(count, keyFile: file))
    }
  }
}
