import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts user …`: manage the accounts of an Activated device (administrator).
  struct User: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "user",
      abstract:
        "Manage accounts: add, list, show, edit, disable, enable, remove, set a password, reset 2FA, import, export, SSH keys.",
      discussion: """
        For administrators: whoever may write the database. An unknown account exits 5.
        """,
      subcommands: [
        UserAdd.self, UserList.self, UserShow.self, UserEdit.self, UserDisable.self,
        UserEnable.self, UserRemove.self, UserPasswd.self, UserResetSecondFactor.self,
        UserImport.self, UserExport.self, UserSSHKey.self,
      ])
  }
}
