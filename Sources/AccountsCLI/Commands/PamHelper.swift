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
        output are the module's socket, spoken in the line protocol README describes: the \
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

    mutating func run() throws {
      try Invocation(
        stage: stage, database: global.database, keyFile: keyFile, timeLimit: timeLimit,
        allowGroups: allowGroups, expiredOnly: expiredOnly
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
    static let databaseOption = "database"
    static let keyFileOption = "key-file"
    static let timeLimitOption = "time-limit"
    static let allowGroupsOption = "allow-groups"
    static let expiredOnlyOption = "expired-only"

    var stage: String
    var database: String?
    var keyFile: String?
    var timeLimit: UInt32 = PamAuthFlow.defaultTimeLimit
    var allowGroups: String?
    var expiredOnly = false

    /// The arguments after `pam-helper`, read without ArgumentParser.
    ///
    /// It reads the forms the module writes: the stage, then `--name value` (or
    /// `--name=value`) options, each once, and `--expired-only`. Nil for anything else (help,
    /// a repeated or unknown option, a value that looks like an option or is no number):
    /// ArgumentParser then reads them as ever, with its messages. Why by hand: ArgumentParser's
    /// reflection over the command (its completion-script check above all) took 1.3 ms of every
    /// PAM stage, more than the rest of its start-up, and the module runs the helper for each
    /// stage of every login.
    init?(arguments: [String]) {
      var stage: String?
      var values: [String: String] = [:]
      var expiredOnly = false
      var rest = arguments[...]
      while let argument = rest.popFirst() {
        guard argument.hasPrefix("--") else {
          guard stage == nil, !argument.hasPrefix("-") else { return nil }
          stage = argument
          continue
        }
        let option = argument.dropFirst(2)
        if option == Self.expiredOnlyOption {
          guard !expiredOnly else { return nil }
          expiredOnly = true
          continue
        }
        let name: String
        let value: String
        if let equals = option.firstIndex(of: "=") {
          name = String(option[..<equals])
          value = String(option[option.index(after: equals)...])
        } else {
          guard let next = rest.popFirst(), !next.hasPrefix("-") else { return nil }
          name = String(option)
          value = next
        }
        let known = [
          Self.databaseOption, Self.keyFileOption, Self.timeLimitOption, Self.allowGroupsOption,
        ]
        guard known.contains(name), values.updateValue(value, forKey: name) == nil else {
          return nil
        }
      }
      guard let stage else { return nil }
      self.stage = stage
      database = values[Self.databaseOption]
      keyFile = values[Self.keyFileOption]
      allowGroups = values[Self.allowGroupsOption]
      self.expiredOnly = expiredOnly
      if let limit = values[Self.timeLimitOption] {
        guard let seconds = UInt32(limit) else { return nil }
        timeLimit = seconds
      }
    }

    init(
      stage: String, database: String?, keyFile: String?, timeLimit: UInt32,
      allowGroups: String?, expiredOnly: Bool
    ) {
      self.stage = stage
      self.database = database
      self.keyFile = keyFile
      self.timeLimit = timeLimit
      self.allowGroups = allowGroups
      self.expiredOnly = expiredOnly
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
        bulk: StandardOutputBuffer(), busyTimeout: 2, keyFile: keyFile)
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
        allowedGroups: groups, expiredOnly: expiredOnly, callerIsRoot: getuid() == 0)
    }
  }
}
