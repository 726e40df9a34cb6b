import AccountsCore
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
        that libnss-systemd serves to getent, id, login, su and sshd. As root; a fleet host's \
        role may run them (but enable --uids). Each host keeps its own folder (by host name, kept in the store); every command \
        that changes an account, a group or an SSH key brings this host's records up to date, \
        and sync rebuilds them (hosts sharing a PostgreSQL store run it at boot and on a timer).
        """,
      subcommands: [
        UserdbEnable.self, UserdbDisable.self, UserdbSync.self, UserdbStatus.self,
        UserdbAuthorizedKeys.self,
      ])
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
