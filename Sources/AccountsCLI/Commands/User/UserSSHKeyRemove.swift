import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts user ssh-key remove NAME FINGERPRINT`.
  struct UserSSHKeyRemove: UserRecordChangingCommand {
    static let configuration = CommandConfiguration(
      commandName: "remove",
      abstract: "Remove one of an account's SSH keys, named by its fingerprint.",
      discussion: "An unknown fingerprint exits 5.")

    @Argument(help: "The user name.")
    var username: String

    @Argument(help: "The key's fingerprint, as user ssh-key list prints it (SHA256:…).")
    var fingerprint: String

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      try SSHKeyFlow.remove(context.environment, username: username, fingerprint: fingerprint)
    }
  }
}
