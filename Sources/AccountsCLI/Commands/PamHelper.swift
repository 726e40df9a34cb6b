import AccountsCore
import ArgumentParser
import CPam
import FoundationEssentials
import Glibc

extension AccountsCommand {
  /// `accounts pam-helper STAGE`: the program `pam_accounts.so` runs for each management group.
  struct PamHelper: ParsableCommand {
    /// The subcommand's name.
    static let commandName = "pam-helper"

    static let configuration = CommandConfiguration(
      commandName: commandName,
      abstract: "The checks behind the PAM module pam_accounts.so, which runs this command.",
      discussion: """
        STAGE is auth, account, password, open-session or close-session. Standard input and \
        output are the module's socket, spoken in the line protocol docs/pam.md describes: the \
        helper asks the PAM conversation's questions through the module and ends with \
        RESULT and the verdict. The user and where the login comes from are PAM_USER, \
        PAM_SERVICE, PAM_RHOST and PAM_TTY, which the module sets from PAM's items; every \
        other variable is dropped first, as pam-auth does. The time limit counts the helper's \
        own work, not the time the person takes to answer.
        """)

    @Argument(help: "auth, account, password, open-session or close-session.")
    var stage: String

    @OptionGroup var global: GlobalOptions

    @Option(
      name: .customLong(Invocation.keyFileOption),
      help: ArgumentHelp(
        "The key file TOTP secrets are sealed with (as for pam-auth).", valueName: "path"))
    var keyFile: String?

    @Option(
      name: .customLong(Invocation.loginCacheOption),
      help: ArgumentHelp("This host's login cache (as for pam-auth).", valueName: "path"))
    var loginCache: String?

    @Option(
      name: .customLong(Invocation.timeLimitOption),
      help: ArgumentHelp(
        "The seconds of work the stage may take, 1 to 300 (default: 5).", valueName: "seconds"))
    var timeLimit: UInt32 = PamAuthFlow.defaultTimeLimit

    @Option(
      name: .customLong(Invocation.allowGroupsOption),
      help: ArgumentHelp(
        "The account stage allows only accounts in one of these groups.",
        valueName: "group,group"))
    var allowGroups: String?

    @Flag(
      name: .customLong(Invocation.expiredOnlyOption),
      help: "The password stage changes only a password that must change.")
    var expiredOnly = false

    @Flag(
      name: .customLong(Invocation.authenticatedOption),
      help: """
        With --expired-only: this PAM handle's auth stage accepted the person just before, so \
        the verification code is not asked again.
        """)
    var authenticated = false

    @Option(
      name: .customLong(Invocation.sessionLoginOption),
      help: ArgumentHelp(
        """
        open-session: a login this module's auth did not accept, logged as one (ssh-key: \
        sshd accepted a key; pam-session: any other way).
        """, valueName: "ssh-key|pam-session"))
    var sessionLogin: String?

    mutating func run() throws {
      try Invocation(
        stage: stage, database: global.database, keyFile: keyFile, loginCache: loginCache,
        timeLimit: timeLimit,
        allowGroups: allowGroups, expiredOnly: expiredOnly, authenticated: authenticated,
        sessionLogin: sessionLogin
      ).run()
    }
  }
}

private typealias Helper = AccountsCommand.PamHelper

extension AccountsCommand.PamHelper {
  /// The run `arguments` (the whole command line after the program's name) ask for when they
  /// are a `pam-helper` line the module writes; nil for anything else.
  static func quickInvocation(_ arguments: [String]) -> Invocation? {
    guard arguments.first == commandName else { return nil }
    return Invocation(arguments: Array(arguments.dropFirst()))
  }

  /// One run of the helper: what the parser (ArgumentParser, or `init(arguments:)` for the
  /// lines the module writes) read from the command line.
  struct Invocation: Equatable {
    static let keyFileOption = PamHelperArguments.keyFileOption
    static let loginCacheOption = PamHelperArguments.loginCacheOption
    static let timeLimitOption = PamHelperArguments.timeLimitOption
    static let allowGroupsOption = PamHelperArguments.allowGroupsOption
    static let expiredOnlyOption = PamHelperArguments.expiredOnlyOption
    static let authenticatedOption = PamHelperArguments.authenticatedOption
    static let sessionLoginOption = PamHelperArguments.sessionLoginOption

    var stage: String
    var database: String?
    var keyFile: String?
    var loginCache: String?
    var timeLimit: UInt32 = PamAuthFlow.defaultTimeLimit
    var allowGroups: String?
    var expiredOnly = false
    var authenticated = false
    var sessionLogin: String?

    /// The arguments after `pam-helper`, read by `PamHelperArguments`; nil for anything that
    /// is not a line the module writes.
    init?(arguments: [String]) {
      guard let read = PamHelperArguments(arguments) else { return nil }
      self.init(
        stage: read.stage, database: read.database, keyFile: read.keyFile,
        loginCache: read.loginCache, timeLimit: read.timeLimit ?? PamAuthFlow.defaultTimeLimit,
        allowGroups: read.allowGroups,
        expiredOnly: read.expiredOnly, authenticated: read.authenticated,
        sessionLogin: read.sessionLogin)
    }

    init(
      stage: String, database: String?, keyFile: String?, loginCache: String? = nil,
      timeLimit: UInt32,
      allowGroups: String?, expiredOnly: Bool, authenticated: Bool = false,
      sessionLogin: String? = nil
    ) {
      self.stage = stage
      self.database = database
      self.keyFile = keyFile
      self.loginCache = loginCache
      self.timeLimit = timeLimit
      self.allowGroups = allowGroups
      self.expiredOnly = expiredOnly
      self.authenticated = authenticated
      self.sessionLogin = sessionLogin
    }

    func run() throws {
      accounts_pam_environment_reset()
      accounts_pam_time_limit(timeLimit)
      let channel = PamChannel()
      guard let request = request(channel), let stage = PamStage(rawValue: stage) else {
        channel.finish(.systemError)
        throw SilentExit(status: .usage)
      }
      let context = try CommandContext.make(
        database: database, variable: { _ in nil }, console: TerminalConsole(),
        bulk: StandardOutputBuffer(), busyTimeout: 2, keyFile: keyFile, loginCache: loginCache)
      let verdict = PamModuleFlow.run(
        context.environment, stage: stage, request: request, conversation: channel)
      channel.finish(verdict)
    }

    /// The request from PAM's items and the options; nil (the reason logged) when the module's
    /// line or call is unusable.
    func request(_ channel: PamChannel) -> PamModuleRequest? {
      let database = database ?? ""
      let groups = (allowGroups ?? "").split(separator: ",", omittingEmptySubsequences: true)
        .map(String.init)
      let problem: String? =
        if database.isEmpty {
          Messages.pamNeedsDatabase(Helper.commandName)
        } else if !PamAuthFlow.acceptsLocation(database) {
          Messages.pamDatabaseRelative(Helper.commandName)
        } else if !PamAuthFlow.timeLimits.contains(timeLimit) {
          Messages.pamTimeLimitRange(PamAuthFlow.timeLimits)
        } else if let bad = groups.first(where: { !GroupNameRules.isValid($0) }) {
          Messages.pamHelperGroupName(bad)
        } else if PamStage(rawValue: stage) == nil {
          Messages.pamHelperStage(stage)
        } else if let sessionLogin, PamSessionLogin(rawValue: sessionLogin) == nil {
          Messages.pamHelperSessionLogin(sessionLogin)
        } else {
          nil
        }
      if let problem {
        channel.log(problem)
        StandardStreams.error(problem)
        return nil
      }
      guard let user = AccountsCommand.PamAuth.variable("PAM_USER"), !user.isEmpty else {
        channel.log(Messages.pamUserMissing(Helper.commandName, caller: "pam_accounts.so"))
        return nil
      }
      return PamModuleRequest(
        username: user, service: AccountsCommand.PamAuth.variable("PAM_SERVICE"),
        remoteHost: AccountsCommand.PamAuth.variable("PAM_RHOST"),
        tty: AccountsCommand.PamAuth.variable("PAM_TTY"),
        allowedGroups: groups, expiredOnly: expiredOnly, authenticated: authenticated,
        callerIsRoot: getuid() == 0, sessionLogin: sessionLogin.flatMap(PamSessionLogin.init))
    }
  }
}
