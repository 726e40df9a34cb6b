import AccountsCore
import AccountsStore
import ArgumentParser

extension AccountsCommand {
  /// `accounts userdb status [--json]`.
  struct UserdbStatus: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "status",
      abstract: "Tell whether this host keeps user records, where, and whether they are behind.",
      discussion: """
        Changes nothing. Also says whether sshd would run this program as its \
        AuthorizedKeysCommand (sshd refuses a program in a folder that is not root's or that \
        others may write, such as /tmp). With --json, one object with every key always \
        present: host, enabled, folder, uids, users, groups, behind (files to write or remove), \
        foreign (names held by files accounts did not write), skipped (sentences), sshdRefusal \
        (a sentence, or null).
        """)

    @Flag(name: .customLong("json"), help: "Print one JSON object.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      let env = context.environment
      let outcome = try UserdbFlow.status(env)
      let range = try outcome?.range ?? UserdbFlow.range(env)
      // Only where records are kept: their SSH keys reach sshd through this program.
      let sshd = outcome == nil ? nil : SSHDPathRule.refusalOfThisProgram()
      // The host the store keeps the entry under (a host's own role names its host).
      let host = outcome?.host.host ?? env.hostName
      if json {
        context.console.output(
          UserdbPresentation.json(outcome, host: host, range: range, sshd: sshd))
      } else {
        UserdbPresentation.lines(outcome, host: host, range: range, sshd: sshd)
          .forEach(context.console.output)
      }
    }
  }
}
