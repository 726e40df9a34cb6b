import AccountsCore
import ArgumentParser
import Foundation

extension AccountsCommand {
  /// `accounts user …`: manage the accounts of an Activated device (administrator).
  struct User: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "user",
      abstract:
        "Manage accounts: add, list, show, edit, disable, enable, remove, set a password, reset 2FA, import, export.",
      discussion: """
        For administrators: whoever may write the database. An unknown account exits 5.
        """,
      subcommands: [
        UserAdd.self, UserList.self, UserShow.self, UserEdit.self, UserDisable.self,
        UserEnable.self, UserRemove.self, UserPasswd.self, UserResetSecondFactor.self,
        UserImport.self, UserExport.self,
      ])
  }

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

  /// `accounts user list`.
  struct UserList: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "list",
      abstract: "List every account: user name, full name, e-mail, status, last login.",
      discussion: """
        STATUS holds owner, disabled, locked and must-change as they apply. With --json, one \
        object per line with every key always present: username, fullName, email, owner, \
        disabled, locked, lockedUntil, mustChangePassword, failures, createdAt, lastLogin.
        """)

    @Flag(name: .customLong("json"), help: "Print one JSON object per line.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      let now = context.environment.now()
      var first = true
      try AccountQuery.list(context.environment) { listing in
        if json {
          context.bulk.escapedLine { AccountPresentation.json(listing, now: now, into: &$0) }
        } else {
          if first { context.bulk.line(AccountPresentation.header) }
          context.bulk.line(AccountPresentation.line(listing, now: now))
        }
        first = false
      }
    }
  }

  /// `accounts user show NAME`.
  struct UserShow: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "show", abstract: "Show one account.")

    @Argument(help: "The user name.")
    var username: String

    @Flag(name: .customLong("json"), help: "Print one JSON object (as user list --json).")
    var json = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      let now = context.environment.now()
      let listing = try AccountQuery.show(context.environment, username: username)
      if json {
        context.console.output(AccountPresentation.json(listing, now: now))
      } else {
        AccountPresentation.details(listing, now: now).forEach(context.console.output)
        let factor = try SecondFactorFlow.status(context.environment, username: username)
        var sessions = 0
        try SessionAdminFlow.list(context.environment, username: username) { _ in sessions += 1 }
        SessionPresentation.accountDetails(factor, sessions: sessions)
          .forEach(context.console.output)
      }
    }
  }

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

  /// `accounts user disable NAME`.
  struct UserDisable: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "disable",
      abstract: "Stop an account from logging in (it is told only Invalid user name or password!).")

    @Argument(help: "The user name.")
    var username: String

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      try UserStateFlow.run(context.environment, username: username, disabled: true)
    }
  }

  /// `accounts user enable NAME`.
  struct UserEnable: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "enable", abstract: "Let a disabled account log in again.")

    @Argument(help: "The user name.")
    var username: String

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      try UserStateFlow.run(context.environment, username: username, disabled: false)
    }
  }

  /// `accounts user remove NAME`.
  struct UserRemove: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "remove",
      abstract: "Delete an account.",
      discussion: """
        Asks you to type "remove" to confirm; without a terminal it refuses unless --yes is \
        given. The owner cannot be removed while other accounts exist (move ownership first \
        with user edit --owner), nor the last account (use reset).
        """)

    @Argument(help: "The user name.")
    var username: String

    @Flag(name: [.customLong("yes"), .customShort("y")], help: "Do not ask for confirmation.")
    var yes = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      try UserRemoveFlow.run(context.environment, username: username, confirmed: yes)
    }
  }

  /// `accounts user passwd NAME`.
  struct UserPasswd: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "passwd",
      abstract: "Set an account's password without the current one.",
      discussion: """
        Asks for New password and New password again (echo off at a terminal; from a pipe, one \
        line each). The Activation Form's password rules apply. Clears the name's failed logins.
        """)

    @Argument(help: "The user name.")
    var username: String

    @Flag(
      name: .customLong("password-stdin"),
      help: "Read the password as one line of standard input, used for both fields.")
    var passwordStdin = false

    @Flag(
      name: .customLong("must-change"),
      help: "Make the next login choose a new password before Home.")
    var mustChange = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      try UserPasswordFlow.run(
        context.environment, username: username, passwordFromStandardInput: passwordStdin,
        mustChange: mustChange)
    }
  }

  /// `accounts user reset-2fa NAME`.
  struct UserResetSecondFactor: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "reset-2fa",
      abstract: "Turn off an account's second factor (a lost phone); its sessions end.",
      discussion: """
        The person logs in with the password alone until they run accounts 2fa enable again. \
        Not on: exit 1.
        """)

    @Argument(help: "The user name.")
    var username: String

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      try SecondFactorFlow.reset(context.environment, username: username)
    }
  }
}
