import FoundationEssentials

extension Messages {
  /// Why a role that reads password hashes sealed (a fleet host role) may not export them.
  public static let sealedHashesDenied = "permission denied for the password hashes"

  /// A store failure in one sentence: what is wrong and what to do.
  public static func storage(_ error: StoreError) -> String {
    switch error {
    case .isDirectory(let path):
      return "Cannot use the database \(path): it is a directory, not a file."
    case .cannotCreateFolder(let path, let reason):
      return "Cannot create the folder \(path) for the database: \(reason)."
    case .notADatabase(let path):
      return "Cannot use the database \(path): it is not an SQLite database. Move it aside or "
        + "choose another file with --database."
    case .foreignSchema(let path, let schema):
      return "Cannot use the database \(path): its schema \(schema) was not made by accounts. "
        + "Choose another database with --database."
    case .foreignDatabase(let path):
      return "Cannot use the database \(path): it was not made by accounts. Choose another file "
        + "with --database."
    case .corrupt(let path):
      return "Cannot use the database \(path): the file is damaged. Restore it from a backup or "
        + "move it aside."
    case .newerSchema(let path):
      return "Cannot use the database \(path): it was written by a newer version of accounts. "
        + "Upgrade accounts to use it."
    case .needsRelease(let path, let release):
      return "Cannot use the database \(path): its store needs accounts \(release) or later; "
        + "upgrade accounts on this host to use it."
    case .upgradeNeeded(let path):
      return "Cannot use the database \(path): its store is older than this version of accounts "
        + "(\(AccountsRelease.version)); its owner must first run accounts store upgrade."
    case .olderSchema(let path):
      return "Cannot read the database \(path): it was written by an older version of accounts "
        + "and must be upgraded, which needs write access. Run accounts as the file's owner once."
    case .readOnlyServer(let path):
      return "Cannot write the database \(path): the server only allows reading (a standby?). "
        + "Name the primary, for example with target_session_attrs=read-write."
    case .readOnly(let path):
      return "Cannot write the database \(path): the file or its folder is read-only."
    case .busy(let path, let seconds):
      return "The database \(path) is busy: another program held it for more than "
        + "\(Int(seconds)) seconds. Try again later."
    case .diskFull(let path):
      return "Cannot write the database \(path): the disk is full. Nothing was changed."
    case .cannotOpen(let path, let reason):
      return "Cannot open the database \(path): \(reason)."
    case .inconsistent(let path):
      return "The database \(path) refused a change that would break its rules; nothing was "
        + "changed."
    case .unreadableValue(let path, let reason):
      return "Cannot use the database \(path): a stored value is not what accounts wrote "
        + "(\(reason)). Restore it from a backup."
    case .failure(let path, let reason):
      return "The database \(path) failed: \(reason)."
    case .symlink(let path, let file):
      let what = file == path ? "it is" : "\(file) is"
      return "Cannot use the database \(path): \(what) a symbolic link, which accounts does not "
        + "follow. Name the file itself with --database (links to folders are fine)."
    case .notOurs(let path, let file, let owner, let me):
      return "Cannot use the database \(path): \(file) belongs to the user \(owner), not to you "
        + "(\(me)). If it is yours, run `chown \(me) \(file)`; otherwise use it as \(owner)."
    case .notPrivate(let path, let file, let mode):
      return "Cannot use the database \(path): other users may read or write \(file) (mode "
        + "\(String(mode, radix: 8))). Run `chmod 600 \(file)` to make it private."
    case .unsafeFolder(let path, let folder, .ownedBy(let owner)):
      return "Cannot use the database \(path): its folder \(folder) belongs to the user "
        + "\(owner), who could replace the file. Choose a folder of your own with --database."
    case .cannotConnect(let path, let server, let reason):
      let whereabouts = server.isEmpty ? "" : " \(server)"
      return "Cannot connect to the PostgreSQL server\(whereabouts) for the database \(path): "
        + "\(reason)."
    case .connectionLost(let path, let reason):
      return "The connection to the PostgreSQL server for the database \(path) was lost: "
        + "\(reason). No change was half-written; try again."
    case .permissionDenied(let path, let reason):
      return "Cannot write the database \(path): the role has no permission (\(reason))."
    case .readDenied(let path, let reason):
      return "Cannot read the database \(path): the role has no permission (\(reason))."
    case .unsafeFolder(let path, let folder, .writableByOthers(let mode)):
      return "Cannot use the database \(path): other users may write its folder \(folder) "
        + "(mode \(String(mode, radix: 8)), not sticky) and replace the file. Run "
        + "`chmod go-w \(folder)` or choose a private folder with --database."
    }
  }

  // MARK: - PostgreSQL stores and `store copy`

  /// `store copy` into a store that holds data.
  public static func copyTargetNotEmpty(_ location: String, accounts: Int, events: Int)
    -> String
  {
    "Cannot copy to \(location): it is not empty (it holds \(count(accounts, "account")) and "
      + "\(count(events, "audit event"))). Copy only into a new store."
  }
  /// `store roles` with a role name it does not take.
  public static func unusableRoleName(_ option: String, _ name: String) -> String {
    "\(option) needs a role name of 1 to 63 letters, digits, _ . or -, starting with a letter "
      + "or _, and not PUBLIC or pg_…: \(name) is not one."
  }
  /// `store roles` with one role for both.
  public static let sameRoles =
    "--admin and --host must name two different roles: a host role must not administer."
  /// `store roles --apply` on an SQLite store.
  public static let rolesNeedPostgres =
    "--apply needs a PostgreSQL store (a postgresql:// URI in --database or ACCOUNTS_DATABASE): "
    + "an SQLite store has no roles; its file's permissions decide who administers."
  /// `store roles --apply` done.
  public static func rolesGranted(admin: String, host: String, location: String) -> String {
    "The role \(admin) may now administer \(location), and the role \(host) may log people "
      + "in there."
  }
  /// `store upgrade` on an SQLite store.
  public static let upgradeNeedsPostgres =
    "accounts store upgrade upgrades a PostgreSQL store (a postgresql:// URI in --database or "
    + "ACCOUNTS_DATABASE): an SQLite file upgrades itself when accounts next writes it."
  /// `store upgrade` done: what it applied (or that there was nothing), and what waits for
  /// `--contract`.
  public static func storeUpgraded(_ upgrade: StoreUpgrade, location: String) -> [String] {
    var lines = [
      upgrade.applied.isEmpty
        ? "The store \(location) is up to date for accounts \(upgrade.release)."
        : "The store \(location) is upgraded for accounts \(upgrade.release): applied "
          + "\(upgrade.applied.joined(separator: ", "))."
    ]
    if !upgrade.waiting.isEmpty {
      lines.append(
        "Once every host runs accounts \(upgrade.release), run accounts store upgrade "
          + "--contract to apply \(upgrade.waiting.joined(separator: ", ")).")
    }
    if upgrade.rolesBehind {
      lines.append(
        "The fleet's roles got their rights before a migration of this store: run accounts "
          + "store roles --apply again, as its owner, with accounts \(upgrade.release).")
    }
    return lines
  }
  /// `store copy` with the same store on both sides.
  public static func copyToItself(_ location: String) -> String {
    "Cannot copy \(location) onto itself: --from and --to name the same store."
  }
  /// `store copy` done.
  public static func copied(
    accounts: Int, events: Int, secondFactors: Int, from source: String, to target: String
  ) -> String {
    "Copied \(count(accounts, "account")), \(count(events, "audit event")) and "
      + "\(count(secondFactors, "second factor")) from \(source) to \(target); sessions are not "
      + "copied, so people log in again there."
  }
  /// Root's store found at its former default, the XDG folder, while the system one does not
  /// exist yet (standard error; the command goes on with the former one).
  public static func formerRootStoreInUse(_ former: String, system: String) -> String {
    "Note: this database is at root's former default place \(former); move it to \(system) "
      + "with accounts store copy --from \(former) --to \(system) (and copy \(former).key "
      + "to \(system).key if it exists)."
  }

  /// Root's system store in use while one is still at its former default (standard error).
  public static func formerRootStoreLeft(_ former: String, system: String) -> String {
    "Note: another database is still at root's former default place \(former); \(system) "
      + "is used, so remove the former one once nothing in it is needed."
  }

  /// A `--database` URI that carries a password (standard error; the command goes on).
  public static let passwordInURI =
    "Warning: the database URI holds a password, which other users can see on the command "
    + "line; keep it in ~/.pgpass instead."

  /// "1 account", "2 accounts".
  static func count(_ number: Int, _ noun: String) -> String {
    "\(number) \(noun)\(number == 1 ? "" : "s")"
  }
}

extension Messages {
  // The device's rules a store's data breaks (`AccountRepository.consistencyProblems`).

  /// The store has no activation row.
  public static let consistencyNoActivationRow = "no activation row"
  /// A Public device keeps `count` accounts.
  public static func consistencyPublicWithAccounts(_ count: Int) -> String {
    "Public with \(count) account(s)"
  }
  /// An Activated device's owner is not among its accounts.
  public static let consistencyActivatedWithoutOwner = "Activated with no owner account"
  /// The state and the owner named contradict each other.
  public static let consistencyStateAndOwnerDisagree = "activation state and owner disagree"
}
