import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts activate`: the Activation Form.
  struct Activate: UserRecordChangingCommand {
    static let configuration = CommandConfiguration(
      commandName: "activate",
      abstract: "Activate this device: store its owner's account (the Activation Form).",
      discussion: """
        Asks for User name, Full name, E-mail address, Password and Password again, one line \
        each; a flag skips its prompt. At a terminal a form that fails is asked again; from a pipe \
        it exits 1. Nothing is stored until the form passes.
        """)

    @OptionGroup var form: AccountFormOptions

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      try ActivationFlow.run(context.environment, options: form.options)
    }
  }
}
