import AccountsCore
import ArgumentParser
import CPam
import FoundationEssentials
import Glibc

extension AccountsCommand {
  /// `accounts pam-auth`: the password check behind PAM's `pam_exec`.
  struct PamAuth: ParsableCommand {
    /// The subcommand's name.
    static let commandName = "pam-auth"

    static let configuration = CommandConfiguration(
      commandName: commandName,
      abstract: "Check PAM_USER's password from standard input, for PAM's pam_exec.",
      discussion: """
        PAM line: auth required pam_exec.so expose_authtok quiet /usr/local/bin/accounts \
        pam-auth --database PATH (an absolute path, or a postgresql:// URI; a relative path is \
        refused with exit 2). Reads standard input to its end (at most 4096 bytes; a final NUL \
        or newline is dropped); for an account with TOTP, the 6-digit code follows the password \
        directly. PAM_USER must be the stored user name exactly: another case, width or spacing \
        of it is refused like an unknown name. Prints nothing; exit 0 right, 1 wrong, 4 locked. \
        Starts from an empty environment but for PAM_USER, PAM_SERVICE, PAM_RHOST and PAM_TTY \
        (a PAM environment is partly the user's): no ACCOUNTS_*, HOME, XDG_*, PG* or OPENSSL_* \
        setting is read, so libpq reads only the running user's own ~/.pgpass, \
        ~/.pg_service.conf and ~/.postgresql/ (its home from the user database; root's under \
        pam_exec) and the system's pg_service.conf (a PostgreSQL store's server checks the \
        second factor's codes: no key file). Ends itself after 5 seconds, or the --time-limit \
        the PAM line sets, 1 to 300 (by SIGALRM, even when the caller ignored or blocked it). \
        The audit detail keeps the first 255 bytes of each PAM item (service, remote host, \
        terminal), a longer one cut between characters and marked with an ellipsis.
        """)

    @OptionGroup var global: GlobalOptions

    @Option(
      name: .customLong("key-file"),
      help: ArgumentHelp(
        "The key file TOTP secrets of an SQLite store are sealed with (default: "
          + "<database>.key; a PostgreSQL store needs none).",
        valueName: "path"))
    var keyFile: String?

    @Option(
      name: .customLong("login-cache"),
      help: ArgumentHelp(
        "This host's login cache, for a PostgreSQL store (default: "
          + "/var/lib/accounts/login-cache.sqlite3; used only where `store cache enable` made it).",
        valueName: "path"))
    var loginCache: String?

    @Option(
      name: .customLong("time-limit"),
      help: ArgumentHelp(
        "The seconds the whole check may take, 1 to 300 (default: 5).", valueName: "seconds"))
    var timeLimit: UInt32 = PamAuthFlow.defaultTimeLimit

    func validate() throws {
      // Never the environment's database: a PAM environment is partly the user's.
      if (global.database ?? "").isEmpty {
        throw ValidationError(Messages.pamNeedsDatabase(Self.commandName))
      }
      guard PamAuthFlow.timeLimits.contains(timeLimit) else {
        throw ValidationError(Messages.pamTimeLimitRange(PamAuthFlow.timeLimits))
      }
    }

    mutating func run() throws {
      // main() has done this already when pam-auth is the first argument; again here for
      // `accounts --database PATH pam-auth`, before anything reads a variable.
      accounts_pam_environment_reset()
      // pam_exec has no timeout of its own: our own alarm ends the check, by SIGALRM, whatever
      // disposition or mask the caller left it.
      accounts_pam_time_limit(timeLimit)
      let database = global.database ?? ""
      guard PamAuthFlow.acceptsLocation(database) else {
        StandardStreams.error(Messages.pamDatabaseRelative(Self.commandName))
        throw SilentExit(status: .usage)
      }
      guard let user = Self.variable("PAM_USER"), !user.isEmpty else {
        StandardStreams.error(Messages.pamUserMissing(Self.commandName, caller: "pam_exec"))
        throw SilentExit(status: .refused)
      }
      guard var secret = StandardStreams.readAll(limit: PamAuthFlow.inputLimit) else {
        StandardStreams.error(Messages.pamInputTooLong(PamAuthFlow.inputLimit))
        throw SilentExit(status: .refused)
      }
      defer {
        _ = secret.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) }
      }
      PamAuthFlow.dropTerminator(&secret)
      // No setting from the environment either (it holds only PAM_* by now): libpq's connection
      // is the URI and root's own files, the key file root's unless --key-file names one.
      let context = try CommandContext.make(
        database: database, variable: { _ in nil }, console: TerminalConsole(),
        bulk: StandardOutputBuffer(), busyTimeout: 2, keyFile: keyFile, loginCache: loginCache)
      let request = PamRequest(
        username: user, secret: secret, service: Self.variable("PAM_SERVICE"),
        remoteHost: Self.variable("PAM_RHOST"), tty: Self.variable("PAM_TTY"))
      do {
        try PamAuthFlow.run(context.environment, request: request)
      } catch {
        // (Patterns on the typed error in catch clauses crash Swift 6.3's compiler here.)
        throw Self.exit(for: error)
      }
    }

    /// A PAM item pam_exec passed in the environment.
    static func variable(_ name: String) -> String? {
      getenv(name).map { String(cString: $0) }
    }

    /// A refusal says nothing (PAM tells the person); anything else its one sentence.
    static func exit(for error: AccountsError) -> any Error {
      if let answer = SilentExit(answering: error) { return answer }
      switch error {
      // Unlike verify's person at a terminal, PAM has nobody to read a form's refusal.
      case .invalidForm, .incompleteForm, .notActivated: return SilentExit(status: .refused)
      default: return error
      }
    }
  }
}
