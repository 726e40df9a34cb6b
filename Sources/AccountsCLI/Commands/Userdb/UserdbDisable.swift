import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts userdb disable`.
  struct UserdbDisable: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "disable",
      abstract: "Remove every record this store wrote on this host, and keep no more.",
      discussion: """
        Only files accounts wrote (its manifest lists them, with what each held) are removed; \
        the folder too if enable created it and nothing else is in it. The store forgets the \
        host in a transaction committed once the files are gone: a store that refuses the \
        change (a host role, a read-only file) leaves every file. Run as root.
        """)

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      let (folder, removal) = try UserdbFlow.disable(context.environment)
      context.console.output(Messages.userdbDisabled(folder, removal))
    }
  }
}
