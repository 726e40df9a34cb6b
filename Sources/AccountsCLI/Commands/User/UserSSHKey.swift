import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts user ssh-key …`: an account's SSH public keys.
  struct UserSSHKey: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "ssh-key",
      abstract: "Manage an account's SSH public keys: add, list, remove.",
      discussion: """
        Keys are what its user record gives sshd (accounts userdb ssh-authorized-keys). \
        Accepted: ssh-ed25519, ecdsa-sha2-nistp256/384/521, sk-ssh-ed25519@openssh.com, \
        sk-ecdsa-sha2-nistp256@openssh.com, ssh-rsa of at least 2048 bits; never ssh-dss, \
        certificates, or a line with options (command=, from=, …).
        """,
      subcommands: [UserSSHKeyAdd.self, UserSSHKeyList.self, UserSSHKeyRemove.self])
  }
}
