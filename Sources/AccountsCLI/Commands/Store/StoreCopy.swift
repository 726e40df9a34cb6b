import AccountsCore
import ArgumentParser

extension AccountsCommand.StoreCommand {
  /// `accounts store copy --from SOURCE --to TARGET`.
  struct Copy: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "copy",
      abstract: "Copy every account, hash, second factor, lock and audit event into a new, "
        + "empty store.",
      discussion: """
        SOURCE and TARGET are each an SQLite file or a postgresql:// URI. The target is \
        written in one transaction and must be empty (a missing file or schema is created). \
        Ids and sequences are kept. Sessions are not copied: a login on the old store is no \
        login on the new one, so people log in again there. The key file sealing TOTP \
        secrets is not copied: give the target's hosts the same key file (ACCOUNTS_KEY_FILE).
        """)

    @Option(
      name: .customLong("from"),
      help: ArgumentHelp(
        "The store to copy: an SQLite file or a postgresql:// URI.",
        valueName: "store"))
    var from: String

    @Option(
      name: .customLong("to"),
      help: ArgumentHelp(
        "The new store: an SQLite file or a postgresql:// URI.",
        valueName: "store"))
    var to: String

    func validate() throws {
      if from.isEmpty || to.isEmpty {
        throw ValidationError("--from and --to each need a store: a path or a URI.")
      }
    }

    func run() throws {
      let source = try CommandContext.live(database: from)
      let target = try CommandContext.live(database: to)
      let summary = try StoreCopyFlow.run(
        source: source.environment, target: target.environment)
      source.console.output(
        Messages.copied(
          accounts: summary.accounts, events: summary.events,
          secondFactors: summary.secondFactors, from: source.environment.storeLocation,
          to: target.environment.storeLocation))
      // Records where this host keeps the target's (enabled on it before the copy).
      try UserdbFlow.reconcile(target.environment)
    }
  }
}
