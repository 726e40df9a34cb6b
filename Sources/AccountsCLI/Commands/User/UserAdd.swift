import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts user add`.
  struct UserAdd: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "add",
      abstract: "Add an account (the Activation Form's fields and rules).",
      discussion: """
        Asks for User name, Full name, E-mail address, Password and Password again; a flag \
        skips its prompt. Refused on a Public device (activate it first).
        """)

    @OptionGroup var form: AccountFormOptions

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      try UserAddFlow.run(context.environment, options: form.options)
    }
  }
}
