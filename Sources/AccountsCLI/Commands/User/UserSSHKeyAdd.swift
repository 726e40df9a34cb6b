import AccountsCore
import ArgumentParser

extension AccountsCommand {
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
}
