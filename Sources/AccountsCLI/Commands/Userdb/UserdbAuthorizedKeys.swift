import AccountsCore
import AccountsStore
import ArgumentParser
import FoundationEssentials
import Glibc

extension AccountsCommand {
  /// `accounts userdb ssh-authorized-keys [--folder DIR] NAME`: sshd's AuthorizedKeysCommand.
  struct UserdbAuthorizedKeys: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "ssh-authorized-keys",
      abstract: "Print an account's SSH keys from its user record (sshd's AuthorizedKeysCommand).",
      discussion: """
        Reads FOLDER/NAME.user only (never the database), so it runs as an unprivileged user: \
        AuthorizedKeysCommand /usr/local/bin/accounts userdb ssh-authorized-keys --folder \
        /etc/userdb %u with AuthorizedKeysCommandUser nobody. Prints nothing (exit 0) for an \
        unknown name or a locked (disabled) or expired record. A folder or record that is not \
        root's, or that group or others may write, is refused (exit 3).
        """)

    @Option(
      name: .customLong("folder"),
      help: ArgumentHelp("The records folder (default /etc/userdb).", valueName: "dir"))
    var folder: String = LinuxUserDefaults.folder

    @Argument(help: "The user name sshd asks about (%u).")
    var username: String

    func run() throws {
      guard LinuxNameRules.isValid(username),
        let record = try SystemUserRecordFolders.readRecord(
          folder: folder, name: username + ".user")
      else { return }
      for key in UserRecordJSON.authorizedKeys(record, userName: username, now: Date()) {
        StandardStreams.write(Escaping.visible(key) + "\n", to: STDOUT_FILENO)
      }
    }
  }
}
