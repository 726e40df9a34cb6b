import AccountsCore
import AccountsStore
import ArgumentParser
import FoundationEssentials
import Glibc

extension AccountsCommand {
  /// `accounts userdb ssh-authorized-keys [--folder DIR] NAME [UID]`: sshd's
  /// AuthorizedKeysCommand.
  struct UserdbAuthorizedKeys: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "ssh-authorized-keys",
      abstract: "Print an account's SSH keys from its user record (sshd's AuthorizedKeysCommand).",
      discussion: """
        Reads FOLDER/NAME.user only (never the database), so it runs as an unprivileged user: \
        AuthorizedKeysCommand /usr/local/bin/accounts userdb ssh-authorized-keys --folder \
        /etc/userdb %u %U with AuthorizedKeysCommandUser nobody. Prints the keys only when this \
        system's name service gives NAME the record's uid (and UID, when given, is that uid \
        too); otherwise, and for an unknown name or a locked (disabled) or expired record, it \
        prints nothing (exit 0). A folder or record that is not root's, or that group or others \
        may write, is refused (exit 3).
        """)

    @Option(
      name: .customLong("folder"),
      help: ArgumentHelp("The records folder (default /etc/userdb).", valueName: "dir"))
    var folder: String = LinuxUserDefaults.folder

    @Argument(help: "The user name sshd asks about (%u).")
    var username: String

    @Argument(help: "The uid sshd found for that name (%U).")
    var uid: UInt32?

    func run() throws {
      guard LinuxNameRules.isValid(username),
        let record = try SystemUserRecordFolders.readRecord(
          folder: folder, name: username + ".user")
      else { return }
      let keys = UserRecordJSON.authorizedKeys(
        record, userName: username, systemUID: SystemNameService().uid(ofUser: username),
        sshdUID: uid.map(Int64.init), now: Date())
      for key in keys {
        StandardStreams.write(Escaping.visible(key) + "\n", to: STDOUT_FILENO)
      }
    }
  }
}
