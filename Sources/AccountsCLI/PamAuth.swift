import AccountsCore
import ArgumentParser
import Foundation

extension AccountsCommand {
  /// `accounts pam-auth`: the password check behind PAM's `pam_exec`.
  struct PamAuth: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "pam-auth",
      abstract: "Check PAM_USER's password from standard input, for PAM's pam_exec.",
      discussion: """
        PAM line: auth required pam_exec.so expose_authtok quiet /usr/local/bin/accounts \
        pam-auth --database PATH (or a postgresql:// URI). Reads standard input to its end (at most 4096 bytes; a final \
        NUL or newline is dropped); for an account with TOTP, the 6-digit code follows the \
        password directly. Prints nothing; exit 0 right, 1 wrong, 4 locked. Ignores ACCOUNTS_*, \
        HOME, XDG_* and PG* (a PAM environment is partly the user's) and gives up after 5 \
        seconds. A PostgreSQL password comes from the running user's ~/.pgpass.
        """)

    /// The most standard input may hold.
    static let inputLimit = 4096
    /// The most the whole check may take, in seconds.
    static let timeLimit: UInt32 = 5

    @OptionGroup var global: GlobalOptions

    @Option(
      name: .customLong("key-file"),
      help: ArgumentHelp(
        "The key file TOTP secrets are sealed with (default: <database>.key for SQLite, "
          + "~/.config/accounts/postgresql.key of the running user for PostgreSQL).",
        valueName: "path"))
    var keyFile: String?

    func validate() throws {
      // Never the environment's database: a PAM environment is partly the user's.
      if (global.database ?? "").isEmpty { throw ValidationError(Messages.pamNeedsDatabase) }
    }

    mutating func run() throws {
      // pam_exec has no timeout of its own: our own alarm ends the check (exit 142).
      alarm(Self.timeLimit)
      guard let user = getenv("PAM_USER").map({ String(cString: $0) }), !user.isEmpty else {
        StandardStreams.error(Messages.pamUserMissing)
        throw SilentExit(status: .refused)
      }
      guard var secret = StandardStreams.readAll(limit: Self.inputLimit) else {
        StandardStreams.error(Messages.pamInputTooLong(Self.inputLimit))
        throw SilentExit(status: .refused)
      }
      defer {
        _ = secret.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) }
      }
      if secret.last == 0 { secret.removeLast() }
      if secret.last == UInt8(ascii: "\n") { secret.removeLast() }
      if secret.last == UInt8(ascii: "\r") { secret.removeLast() }
      let variable: (String) -> String? = { name in
        switch name {
        case "PAM_SERVICE", "PAM_RHOST", "PAM_TTY": return getenv(name).map { String(cString: $0) }
        default: return nil
        }
      }
      // libpq reads PG* variables (a server, a password file, a service file): none from a
      // PAM environment. Its connection is the URI, ~/.pgpass and the system's service file.
      Self.unsetPostgresVariables()
      var context = try CommandContext.make(
        database: global.database, variable: { _ in nil }, console: TerminalConsole(),
        bulk: StandardOutputBuffer(), busyTimeout: 2, keyFile: keyFile)
      context.environment.origin = Messages.pamOrigin(
        service: variable("PAM_SERVICE"), remoteHost: variable("PAM_RHOST"),
        tty: variable("PAM_TTY"))
      do {
        try PamAuthFlow.run(
          context.environment, request: PamRequest(username: user, secret: secret))
      } catch {
        // (Patterns on the typed error in catch clauses crash Swift 6.3's compiler here.)
        throw Self.exit(for: error)
      }
    }

    /// Removes every `PG*` variable from this process's environment.
    static func unsetPostgresVariables() {
      var names: [String] = []
      var entry = environ
      while let pointer = entry.pointee {
        let text = String(cString: pointer)
        if text.hasPrefix("PG"), let equals = text.firstIndex(of: "=") {
          names.append(String(text[..<equals]))
        }
        entry += 1
      }
      for name in names { unsetenv(name) }
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
