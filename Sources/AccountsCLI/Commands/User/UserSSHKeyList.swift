import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts user ssh-key list NAME`.
  struct UserSSHKeyList: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "list",
      abstract: "List an account's SSH keys: type, bits, fingerprint, when added, comment.",
      discussion: """
        Fingerprints as ssh-keygen -l -E sha256 prints them (SHA256: and unpadded base64). With \
        --json, one object per line with every key always present: type, bits, fingerprint, \
        comment, addedAt.
        """)

    @Argument(help: "The user name.")
    var username: String

    @Flag(name: .customLong("json"), help: "Print one JSON object per line.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      let keys = try SSHKeyFlow.list(context.environment, username: username)
      if json {
        for key in keys { context.bulk.line(SSHKeyPresentation.json(key)) }
      } else if keys.isEmpty {
        context.console.output(Messages.noSSHKeysOf(username))
      } else {
        context.bulk.line(SSHKeyPresentation.header)
        for key in keys { context.bulk.line(SSHKeyPresentation.line(key)) }
      }
    }
  }
}
