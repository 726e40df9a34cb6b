import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts activate`: the Activation Form.
  struct Activate: ContextualCommand {
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

/// The Activation Form's flags, shared by `activate` and `user add`: a flag skips its prompt.
struct AccountFormOptions: ParsableArguments {
  @Option(name: .customLong("username"), help: "The user name (skips its prompt).")
  var username: String?

  @Option(name: .customLong("full-name"), help: "The full name (skips its prompt).")
  var fullName: String?

  @Option(name: .customLong("email"), help: "The e-mail address (skips its prompt).")
  var email: String?

  @Flag(
    name: .customLong("password-stdin"),
    help: "Read the password as one line of standard input, used for both password fields.")
  var passwordStdin = false

  /// What the core's form reads.
  var options: ActivationOptions {
    ActivationOptions(
      username: username, fullName: fullName, email: email,
      passwordFromStandardInput: passwordStdin)
  }
}
