import AccountsCore
import ArgumentParser
import CPam
import CTerminal
import FoundationEssentials
import Glibc

/// The root command, `accounts`.
///
/// With no subcommand it walks Activation → Login → Home.
@main
struct AccountsCommand: ParsableCommand {
  static let version = AccountsRelease.version

  static let configuration = CommandConfiguration(
    commandName: "accounts",
    abstract: "Activate this device once, then log in: a persistent account manager.",
    // The subcommand is optional: the bare command is the app's whole flow.
    usage: "accounts [--database <path-or-uri>] [<subcommand>]",
    discussion: """
      With no subcommand, walks the screens an app would: Activation (on a Public device), the \
      Activation Form, Login, Home. Prompts and errors go to standard error, results to standard \
      output. Passwords are read with echo off at a terminal, or one line each from standard \
      input; never from the command line.

      Exit codes: 0 success; 1 refused (invalid form, wrong user name or password, wrong state, \
      cancelled, a user name taken); 2 usage error (or an unusable setting); 3 storage or \
      environment error (standard output that cannot take the result, such as a full disk, \
      included); 4 locked after too many failed logins; 5 no such account, session or group \
      (administrator commands); 128+N killed by signal N (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP; \
      141 also when the reader of standard output went away, as in accounts log | head -1).
      """,
    version: version,
    subcommands: [
      Activate.self, Login.self, Logout.self, Whoami.self, Passwd.self, TwoFactor.self,
      Verify.self, PamAuth.self, PamHelper.self, Status.self,
    ],
    groupedSubcommands: [
      CommandGroup(
        name: "Administrator",
        subcommands: [
          User.self, GroupCommand.self, SessionCommand.self, Reset.self, Unlock.self, Log.self,
          StoreCommand.self, UserdbCommand.self,
        ])
    ]
  )

  @OptionGroup var global: GlobalOptions

  mutating func run() throws {
    try run(global.makeContext())
  }

  func run(_ context: CommandContext) throws {
    let home = try AppFlow.run(context.environment)
    context.showHome(home)
  }

  /// The commands a person, a script or a PAM stack runs most, parsed by their own parser:
  /// building the whole tree (every subcommand reflected on for the completion-script check)
  /// costs more than a login's work beyond its key derivation (about 3 ms of a PAM stage's 10).
  static let quicklyParsed: [String: any ParsableCommand.Type] = [
    "login": Login.self, "activate": Activate.self, "verify": Verify.self,
    "pam-auth": PamAuth.self, "pam-helper": PamHelper.self,
  ]

  /// `arguments` parsed by the named subcommand alone; nil (and the root parser takes over,
  /// with its own usage text and messages) for anything else: other commands, help, version,
  /// completion requests, or arguments the subcommand does not accept.
  static func parseQuickly(_ arguments: [String]) -> (any ParsableCommand)? {
    guard let name = arguments.first, let command = quicklyParsed[name] else { return nil }
    let rest = Array(arguments.dropFirst())
    if rest.contains(where: { $0.hasPrefix("-h") || $0 == "--help" || $0.hasPrefix("--gen") }) {
      return nil
    }
    return try? command.parse(rest) as? any ParsableCommand
  }

  /// Parses, runs, and turns every failure into one sentence and a documented exit code.
  static func main() {
    accounts_process_harden()
    // pam-auth and pam-helper run as root with an environment that is partly its caller's: it keeps only the
    // PAM items, before anything (a library opened at first use) can read the rest.
    if CommandLine.argc > 1, let first = CommandLine.unsafeArgv[1],
      strcmp(first, PamAuth.commandName) == 0 || strcmp(first, PamHelper.commandName) == 0
    {
      accounts_pam_environment_reset()
    }
    accounts_terminal_install_signal_handlers()
    umask(0o077)
    let status: ExitStatus
    do {
      let arguments = Array(CommandLine.arguments.dropFirst())
      if arguments == ["--version"] {
        // What the parser would print, without building the command tree (most of its cost).
        StandardStreams.write(version + "\n", to: STDOUT_FILENO)
      } else if let fast = Status.fastPath(arguments) {
        try Status.show(json: fast.json, database: fast.database)
      } else if let helper = PamHelper.quickInvocation(arguments) {
        try helper.run()
      } else {
        var command = try parseQuickly(arguments) ?? parseAsRoot(arguments)
        try command.run()
      }
      status = .success
    } catch let error as AccountsError {
      for line in error.lines { StandardStreams.error(line) }
      status = error.exitStatus
    } catch let exit as SilentExit {
      status = exit.status
    } catch {
      let message = fullMessage(for: error)
      if exitCode(for: error) == .success {
        // Help, version and completion scripts: our own text, printed as it is (a completion
        // script may hold tabs that escaping would break).
        if !message.isEmpty { StandardStreams.write(message + "\n", to: STDOUT_FILENO) }
        status = .success
      } else {
        // The parser's own text, which may quote the arguments: each of its lines escaped.
        for line in message.split(separator: "\n", omittingEmptySubsequences: false) {
          StandardStreams.error(String(line))
        }
        status = .usage
      }
    }
    accounts_terminal_restore()
    Glibc.exit(status.rawValue)
  }
}
