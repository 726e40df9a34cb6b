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

  /// `accounts user ssh-key add NAME FILE|-`.
  struct UserSSHKeyAdd: UserRecordChangingCommand {
    static let configuration = CommandConfiguration(
      commandName: "add",
      abstract: "Add SSH public keys to an account (authorized_keys lines, one per line).",
      discussion: """
        Reads FILE, or standard input for -: one key per line as ssh-keygen writes it (TYPE \
        BASE64 [COMMENT]); blank lines and # comments are skipped. All or nothing: one refused \
        line (malformed, a refused type, options) refuses the whole input (exit 1). A key the \
        account has already is told and skipped.
        """)

    @Argument(help: "The user name.")
    var username: String

    @Argument(help: ArgumentHelp("The file of keys, or - for standard input.", valueName: "file"))
    var file: String

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      let text = try Self.read(file)
      try SSHKeyFlow.add(context.environment, username: username, text: text)
    }

    /// The whole input as text (at most 1 MiB is read: no key file is larger).
    static func read(_ path: String) throws(AccountsError) -> String {
      do {
        let input = try FileImportInput(path: path)
        var lines: [String] = []
        var size = 0
        while size < 1 << 20, let line = try input.nextLine() {
          size += line.count + 1
          lines.append(String(decoding: line, as: UTF8.self))
        }
        return lines.joined(separator: "\n")
      } catch {
        if case .importFileUnreadable(let path, let reason) = error {
          throw .keyFileUnreadable(path: path, reason: reason)
        }
        throw error
      }
    }
  }

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
