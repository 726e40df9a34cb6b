import AccountsCore
import AccountsStore
import ArgumentParser

extension AccountsCommand {
  /// `accounts userdb …`: the store's accounts as Linux users (systemd user records).
  struct UserdbCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "userdb",
      abstract:
        "Make the accounts Linux users: enable, disable, sync, status, ssh-authorized-keys.",
      discussion: """
        Writes systemd's JSON user and group records (no hash, no secret) into a drop-in folder \
        that libnss-systemd serves to getent, id, login, su and sshd. For administrators, as \
        root. Each host keeps its own folder (by host name, kept in the store); every command \
        that changes an account, a group or an SSH key brings this host's records up to date, \
        and sync rebuilds them (hosts sharing a PostgreSQL store run it at boot and on a timer).
        """,
      subcommands: [
        UserdbEnable.self, UserdbDisable.self, UserdbSync.self, UserdbStatus.self,
        UserdbAuthorizedKeys.self,
      ])
  }

  /// `accounts userdb enable [--folder DIR] [--uids FIRST-LAST]`.
  struct UserdbEnable: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "enable",
      abstract: "Keep user records of this store on this host, and write them now.",
      discussion: """
        --folder (default /etc/userdb; libnss-systemd also reads /run/userdb) is created mode \
        0755 when missing, and removed again by disable. --uids sets the store's range for \
        every host (default 20000-29999, within 1000-59999): accounts and groups get the next \
        free number of it when their first record is made, never one this system already \
        knows nor one given before (not even to a removed account). Run as root.
        """)

    @Option(
      name: .customLong("folder"),
      help: ArgumentHelp("Where this host keeps the records.", valueName: "dir"))
    var folder: String?

    @Option(
      name: .customLong("uids"),
      help: ArgumentHelp("The range uids and gids are given from.", valueName: "first-last"))
    var uids: String?

    @OptionGroup var global: GlobalOptions

    func validate() throws {
      if let uids, PosixIDRange(parsing: uids) == nil {
        throw ValidationError(Messages.invalidPosixIDRange(uids))
      }
    }

    func run(_ context: CommandContext) throws {
      let outcome = try UserdbFlow.enable(
        context.environment, folder: folder, range: uids.flatMap(PosixIDRange.init(parsing:)))
      UserdbOutput.show(outcome, context)
    }
  }

  /// `accounts userdb disable`.
  struct UserdbDisable: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "disable",
      abstract: "Remove every record this store wrote on this host, and keep no more.",
      discussion: """
        Only files accounts wrote (its manifest lists them, with what each held) are removed; \
        the folder too if enable created it and nothing else is in it. The store forgets the \
        host in a transaction committed once the files are gone: a store that refuses the \
        change (a host role, a read-only file) leaves every file. Run as root.
        """)

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      let (folder, removal) = try UserdbFlow.disable(context.environment)
      context.console.output(Messages.userdbDisabled(folder, removal))
    }
  }

  /// `accounts userdb sync`.
  struct UserdbSync: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "sync",
      abstract: "Rebuild this host's user records from the store.",
      discussion: """
        Writes what differs, removes what the store no longer has, gives numbers to accounts \
        and groups without one. Run as root, at boot and on a timer where hosts share a store.
        """)

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      UserdbOutput.show(try UserdbFlow.sync(context.environment), context)
    }
  }

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
      if json {
        context.console.output(
          UserdbPresentation.json(outcome, host: env.hostName, range: range, sshd: sshd))
      } else {
        UserdbPresentation.lines(outcome, host: env.hostName, range: range, sshd: sshd)
          .forEach(context.console.output)
      }
    }
  }
}

/// What `enable` and `sync` print.
enum UserdbOutput {
  static func show(_ outcome: UserdbFlow.Outcome, _ context: CommandContext) {
    context.console.output(Messages.userdbSynced(outcome))
    for name in outcome.changes.foreign {
      context.console.message(Messages.foreignRecord(outcome.host.folder, name))
    }
    for name in outcome.changes.leftAlone {
      context.console.message(Messages.recordChangedElsewhere(outcome.host.folder, name))
    }
    outcome.skipped.forEach(context.console.message)
  }
}
