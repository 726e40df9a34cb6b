import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts user edit NAME`.
  struct UserEdit: UserRecordChangingCommand {
    static let configuration = CommandConfiguration(
      commandName: "edit",
      abstract:
        "Change an account's user name, full name, e-mail, expiry, groups, home or shell, or make it the owner.",
      discussion: """
        Each value follows the Activation Form's rules. --expires takes a date (2026-12-31: the \
        account expires at 00:00 UTC of that day, as shadow's expire field counts UTC days), an \
        RFC 3339 time with its zone (2026-12-31T18:00:00Z) or never. --add-group and \
        --remove-group repeat; each group must exist (exit 5 otherwise), and a group the \
        account is not in cannot be left (exit 1). --home and --shell: absolute paths without \
        ':' (exit 2 otherwise), what its user record says. All or nothing, in one transaction.
        """)

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

    @Option(
      name: .customLong("expires"),
      help: ArgumentHelp(
        "When the account expires: a date (00:00 UTC), an RFC 3339 time, or never.",
        valueName: "date"))
    var expires: String?

    @Option(
      name: .customLong("add-group"),
      help: ArgumentHelp("A group the account joins (repeatable).", valueName: "group"))
    var addGroups: [String] = []

    @Option(
      name: .customLong("remove-group"),
      help: ArgumentHelp("A group the account leaves (repeatable).", valueName: "group"))
    var removeGroups: [String] = []

    @OptionGroup var linux: LinuxUserOptions

    @OptionGroup var global: GlobalOptions

    var edit: AccountEdit {
      AccountEdit(
        username: newUsername, fullName: fullName, email: email, makeOwner: owner,
        expiry: expires.flatMap(AccountExpiry.init(parsing:)), addGroups: addGroups,
        removeGroups: removeGroups, home: linux.home, shell: linux.shell)
    }

    func validate() throws {
      try linux.validate()
      if let expires, AccountExpiry(parsing: expires) == nil {
        throw ValidationError(Messages.expiresForms)
      }
      if edit.isEmpty {
        throw ValidationError(Messages.editNeedsAChange)
      }
    }

    func run(_ context: CommandContext) throws {
      try UserEditFlow.run(context.environment, username: username, edit: edit)
    }
  }
}
