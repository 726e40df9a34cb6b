import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts user edit NAME`.
  struct UserEdit: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "edit",
      abstract: "Change an account's user name, full name or e-mail, or make it the owner.",
      discussion: "Each value follows the Activation Form's rules.")

    @Argument(help: "The user name of the account to change.")
    var username: String

    @Option(name: .customLong("full-name"), help: "The new full name.")
    var fullName: String?

    @Option(name: .customLong("email"), help: "The new e-mail address.")
    var email: String?

    @Option(
      name: .customLong("username"), help: ArgumentHelp("The new user name.", valueName: "new"))
    var newUsername: String?

    @Flag(name: .customLong("owner"), help: "Make this account the device's owner.")
    var owner = false

    @OptionGroup var global: GlobalOptions

    var edit: AccountEdit {
      AccountEdit(username: newUsername, fullName: fullName, email: email, makeOwner: owner)
    }

    func validate() throws {
      if edit.isEmpty {
        throw ValidationError(Messages.editNeedsAChange)
      }
    }

    func run(_ context: CommandContext) throws {
      try UserEditFlow.run(context.environment, username: username, edit: edit)
    }
  }
}
