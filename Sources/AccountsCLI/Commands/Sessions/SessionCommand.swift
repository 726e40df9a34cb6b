import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts whoami`.
  struct Whoami: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "whoami",
      abstract: "Show who is logged in here and when the session ends (exit 1: nobody).")

    @Flag(name: .customLong("json"), help: "Print one JSON object.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      let who: LoggedIn
      do {
        who = try SessionFlow.whoami(context.environment)
      } catch {
        // (A pattern with a condition here crashes Swift 6.3's compiler.)
        guard json, error == .notLoggedIn else { throw error }
        context.console.output(SessionPresentation.notLoggedInJSON)
        throw SilentExit(status: .refused)
      }
      if json {
        context.console.output(SessionPresentation.whoamiJSON(who))
      } else {
        SessionPresentation.whoami(who, timeZone: context.environment.timeZone)
          .forEach(context.console.output)
      }
    }
  }

  /// `accounts logout`.
  struct Logout: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "logout",
      abstract: "End this session; the next accounts asks to log in (exit 1: not logged in).")

    @Flag(name: .customLong("all"), help: "End every session of the logged-in account.")
    var all = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      let ended = try SessionFlow.logout(context.environment, all: all)
      context.console.output(all ? Messages.loggedOutAll(ended) : Messages.loggedOut)
    }
  }

  /// `accounts session …` (administrator).
  struct SessionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "session",
      abstract: "List and end the sessions of this device's accounts.",
      discussion: "For administrators: whoever may write the database.",
      subcommands: [SessionList.self, SessionRevoke.self])
  }

  /// `accounts session list`.
  struct SessionList: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "list",
      abstract: "List the live sessions: id, user name, started, last seen, ends, 2FA.",
      discussion: """
        ENDS is the sooner of the absolute end and the idle end. With --json, one object per \
        line: session, username, startedAt, lastSeenAt, expiresAt, idleUntil, secondFactor.
        """)

    @Option(name: .customLong("user"), help: "Only this account's sessions.")
    var user: String?

    @Flag(name: .customLong("json"), help: "Print one JSON object per line.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      // An unknown --user is refused before anything is printed.
      if let user { _ = try AccountQuery.show(context.environment, username: user) }
      if !json { context.bulk.line(SessionPresentation.header) }
      try SessionAdminFlow.list(context.environment, username: user) { listing in
        if json {
          context.bulk.line(SessionPresentation.json(listing))
        } else {
          context.bulk.line(SessionPresentation.line(listing))
        }
      }
    }
  }

  /// `accounts session revoke`.
  struct SessionRevoke: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "revoke",
      abstract: "End one session (by its ID) or every session of an account (--user).",
      discussion: "An unknown or ended session, or an unknown account, exits 5.")

    @Argument(help: "The session's ID (from accounts session list).")
    var id: Int64?

    @Option(name: .customLong("user"), help: "End every session of this account.")
    var user: String?

    @OptionGroup var global: GlobalOptions

    func validate() throws {
      if (id == nil) == (user == nil) { throw ValidationError(Messages.revokeNeedsOneTarget) }
    }

    func run(_ context: CommandContext) throws {
      if let id {
        try SessionAdminFlow.revoke(context.environment, id: id)
      } else if let user {
        try SessionAdminFlow.revoke(context.environment, username: user)
      }
    }
  }
}
