import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts group …`: named sets of accounts (administrator).
  struct GroupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "group",
      abstract: "Manage groups of accounts: add, list, show, remove.",
      discussion: """
        For administrators: whoever may write the database. Group names follow Linux's rules: \
        1 to 32 of a-z, 0-9, _ and -, starting with a letter or _. An unknown group exits 5. \
        Accounts join and leave groups with user add --group and user edit --add-group, \
        --remove-group.
        """,
      subcommands: [GroupAdd.self, GroupList.self, GroupShow.self, GroupRemove.self])
  }
}
