import FoundationEssentials

/// `accounts userdb enable|disable|sync|status` (as root; a fleet host's role may run them, but
/// for `enable --uids`): accounts as Linux users.
///
/// The store's accounts and groups become Linux users and groups through systemd's JSON user
/// records in a drop-in folder that `libnss-systemd` reads. The same work runs after every
/// command that changes what the records say (`reconcile`): the folder's manifest keeps the
/// store's change counter as the folder last applied it, and only the files of the accounts
/// and groups changed since are compared and written, so a change whose records were never
/// written (a crash between the commit and the files) is repaired by the next one.
public enum UserdbFlow {
  /// What a sync found and did.
  public struct Outcome: Equatable, Sendable {
    /// This host's entry.
    public var host: UserdbHost
    /// The store's range.
    public var range: PosixIDRange
    /// User records in the folder (as the store says).
    public var users = 0
    /// Group records in the folder, the per-user groups included.
    public var groups = 0
    /// What changed in the folder (or, for `status`, would).
    public var changes = UserRecordChanges()
    /// Why some accounts or groups have no record: one sentence each.
    public var skipped: [String] = []
    /// Accounts and groups without a number yet (the next sync gives them one, if its role may).
    public var unnumbered = 0
    /// False when this role may not give numbers (a fleet host's): the accounts and groups
    /// without one are the administrator's to number, and no sync here is behind for them.
    public var mayNumber = true
    /// Accounts given a home other than the one they named (another account's before): one
    /// sentence each, also among `skipped`.
    public var homesMoved: [String] = []
    /// The store's change counter the folder holds after a sync (nil for a comparison).
    public var applied: Int64?

    /// How far the folder is behind the store: files to write or remove, and accounts and
    /// groups still to number.
    public var behind: Int {
      changes.written.count + changes.removed.count + (mayNumber ? unnumbered : 0)
    }
  }

  /// Turns records on for this host: in `folder` (default `/etc/userdb`), from `range` (which
  /// becomes the store's for every host: the administrator's) if given; then syncs.
  ///
  /// Without `range` only this host's own entry is written (`keepUserdbHost`), which a fleet
  /// host's role may do.
  public static func enable(_ env: AccountsEnvironment, folder: String?, range: PosixIDRange?)
    throws(AccountsError) -> Outcome
  {
    let folder = try checkedFolder(folder ?? LinuxUserDefaults.folder)
    let store = try env.writableStore()
    if let range {
      try store.write { writer throws(AccountsError) in
        if let existing = try writer.userdbHost(named: env.hostName), existing.folder != folder {
          throw .userdbFolderInUse(host: env.hostName, folder: existing.folder)
        }
        try writer.setPosixIDRange(range)
      }
    }
    let kept = try store.keepUserdbHost(
      UserdbHost(host: env.hostName, folder: folder, enabledAt: env.now()))
    guard kept == folder else { throw .userdbFolderInUse(host: env.hostName, folder: kept) }
    guard let outcome = try run(env, dryRun: false) else {
      throw .userdbNotEnabled(host: env.hostName)
    }
    try log(.enabled, store: store, env: env, detail: Messages.detailUserdbSynced(outcome))
    return outcome
  }

  /// Removes every file this store wrote in this host's folder (the folder too if enabling
  /// made it and nothing else is left), then forgets the host; returns the folder and what
  /// went.
  ///
  /// A store that refuses the change leaves the folder and the store as they were.
  public static func disable(_ env: AccountsEnvironment) throws(AccountsError)
    -> (folder: String, removal: UserRecordRemoval)
  {
    guard let store = try env.readableStore(), let folders = env.userRecords else {
      throw .userdbNotEnabled(host: env.hostName)
    }
    let (settings, host, quiet) = try store.read { reader throws(AccountsError) in
      (
        try reader.userdbSettings(), try reader.userdbHost(named: env.hostName),
        try holdsNothing(reader)
      )
    }
    guard let host else { throw .userdbNotEnabled(host: env.hostName) }
    // The folder's lock before the store's, as every sync takes them.
    let session = try folders.open(
      host.folder, storeID: settings.storeID, create: false, repair: false)
    defer { session?.close() }
    // The host is forgotten first and the files removed inside that same transaction, before
    // its commit: a store that may not be changed (a read-only file, a role without the host
    // step) refuses the delete before any file goes, and nothing is left half done. Should the
    // commit itself fail after the files went (or the process die there), the host is still
    // enabled with its records missing: the next sync writes them again, and disabling again
    // finishes. The other order (commit, then files) could leave the records of a host the
    // store has forgotten, which no later command would remove. Its event is written in it
    // too.
    let removal = try env.writableStore().forgetUserdbHost(named: env.hostName, at: env.now()) {
      () throws(AccountsError) -> (UserRecordRemoval, detail: String?) in
      let removal = try session?.removeAll() ?? UserRecordRemoval()
      return (removal, quiet ? nil : Messages.detailUserdbDisabled(host.folder, removal))
    }
    guard let removal else { throw .userdbNotEnabled(host: env.hostName) }
    return (host.folder, removal)
  }

  /// Rebuilds this host's records from the store: what changed since the folder was last
  /// written, or with `full` the whole folder (a damaged manifest is then made again).
  public static func sync(_ env: AccountsEnvironment, full: Bool = false) throws(AccountsError)
    -> Outcome
  {
    var found: Outcome?
    do {
      found = try run(env, dryRun: false, full: full)
    } catch .userdbFolder(_, let reason) where reason == damagedManifest && !full {
      // Made again from the whole comparison: each file that holds what the store would
      // write is listed again as its own.
      found = try run(env, dryRun: false, full: true)
    }
    guard let outcome = found else { throw .userdbNotEnabled(host: env.hostName) }
    // A sync that found the folder as the store says changed nothing worth a line in the log.
    if !outcome.changes.written.isEmpty || !outcome.changes.removed.isEmpty {
      try log(
        .synced, store: env.writableStore(), env: env,
        detail: Messages.detailUserdbSynced(outcome))
    }
    return outcome
  }

  /// What the folder holds against what the store says, changing nothing; nil when this host
  /// keeps no records of the store.
  public static func status(_ env: AccountsEnvironment) throws(AccountsError) -> Outcome? {
    try run(env, dryRun: true)
  }

  /// The store's range and whether this host keeps records (for `status` where it does not).
  public static func range(_ env: AccountsEnvironment) throws(AccountsError) -> PosixIDRange {
    guard let store = try env.readableStore() else { return .standard }
    return try store.read { reader throws(AccountsError) in try reader.userdbSettings().range }
  }

  /// After a committed change: brings this host's records up to date, if it keeps any.
  ///
  /// A failure says the change is kept and the records are behind.
  public static func reconcile(_ env: AccountsEnvironment) throws(AccountsError) {
    env.beforeUserRecords?()
    guard env.userRecords != nil else { return }
    do {
      // The change's own words: an account just numbered whose home had to differ.
      try run(env, dryRun: false)?.homesMoved.forEach(env.console.message)
    } catch {
      switch error {
      case .userdbBehind: throw error
      default:
        let folder = (try? currentFolder(env)) ?? LinuxUserDefaults.folder
        throw .userdbBehind(folder: folder, reason: error.description)
      }
    }
  }

  /// The reason a folder gives for a manifest it cannot read.
  public static let damagedManifest =
    "its manifest is damaged (accounts userdb sync --full makes it again)"

  /// Logs `change` (the files it wrote or removed are no part of the store's transactions, so
  /// it is logged once they are done), except in a store that holds nothing yet.
  private static func log(
    _ change: UserdbChange, store: any AccountRepository, env: AccountsEnvironment,
    detail: String
  ) throws(AccountsError) {
    guard try !store.read({ reader throws(AccountsError) in try holdsNothing(reader) }) else {
      return
    }
    try store.recordUserdbChange(change, at: env.now(), detail: detail)
  }

  /// True for a store that holds nothing yet (Public, its log empty): it may still be the
  /// target of `store copy`, which copies only into an empty store, so no change of records
  /// is logged there.
  private static func holdsNothing(_ reader: any AccountReader) throws(AccountsError) -> Bool {
    // A role that may not count the log (a fleet host's) logs through its step.
    try reader.deviceStatus().state == .publicState && (try? reader.rowCount(.auditEvent)) == 0
  }

  // MARK: - The work

  private static func currentFolder(_ env: AccountsEnvironment) throws(AccountsError) -> String? {
    guard let store = try env.readableStore() else { return nil }
    return try store.read { reader throws(AccountsError) in
      try reader.userdbHost(named: env.hostName)?.folder
    }
  }

  /// Syncs (or, with `dryRun`, compares) this host's folder; nil when the host keeps none.
  ///
  /// A folder that knows the store's change counter as it last applied it gets only the files
  /// of the accounts and groups changed since (nothing at all when none did); one that does
  /// not (first written, changed by another hand, an earlier release's manifest), a `full`
  /// sync, and a comparison (`dryRun`) compare the whole folder.
  static func run(_ env: AccountsEnvironment, dryRun: Bool, full: Bool = false)
    throws(AccountsError) -> Outcome?
  {
    guard let folders = env.userRecords,
      let store = try dryRun ? env.readableStore() : env.storeForChange()
    else { return nil }
    let (settings, found, mayNumber) = try store.read { reader throws(AccountsError) in
      (
        try reader.userdbSettings(), try reader.userdbHost(named: env.hostName),
        try reader.mayGivePosixIDs()
      )
    }
    guard let host = found else { return nil }
    var outcome = Outcome(host: host, range: settings.range)
    // The folder's lock is taken before the store is read: of two commands, the later writer
    // reads the later state.
    let session = try folders.open(
      host.folder, storeID: settings.storeID, create: !dryRun, repair: full)
    defer { session?.close() }
    if !dryRun && mayNumber {
      let given = try giveNumbers(env, store: store)
      outcome.homesMoved = given.homesMoved
      outcome.skipped += given.said
    }
    let since = dryRun || full ? nil : session?.generation
    let (generation, built, waiting) = try store.read {
      reader throws(AccountsError) -> (Int64, Built?, Int) in
      // What a role that may not number leaves unnumbered is said at every sync, a changed
      // account or not: the ids alone, read where a number is missing.
      let waiting = mayNumber ? 0 : try reader.unnumbered().total
      let (generation, built) = try changedRecords(reader, env: env, since: since)
      return (generation, built, waiting)
    }
    if !dryRun { outcome.applied = generation }
    if waiting > 0 {
      outcome.mayNumber = false
      outcome.unnumbered = waiting
    }
    let waitingSaid = waiting > 0 ? [Messages.posixIDsForAdministrator(waiting)] : []
    guard let built else {
      outcome.users = session?.recordCounts.users ?? 0
      outcome.groups = session?.recordCounts.groups ?? 0
      outcome.skipped += waitingSaid
      return outcome
    }
    outcome.users = built.users
    outcome.groups = built.groups
    // The records' own reasons first, then what the role may not do about them.
    outcome.skipped += built.skipped + waitingSaid
    if mayNumber { outcome.unnumbered = built.unnumbered }
    guard let session else {
      outcome.changes.written = built.files.map(\.name)
      return outcome
    }
    var shown = false
    session.progress = { done, total in
      shown = true
      env.console.progress(Messages.userdbProgress(done, of: total))
    }
    defer { if shown { env.console.progress(nil) } }
    outcome.changes = try session.apply(
      built.files, owners: built.owners, generation: generation, dryRun: dryRun)
    if built.owners != nil {
      outcome.users = session.recordCounts.users
      outcome.groups = session.recordCounts.groups
    }
    return outcome
  }

  /// The store's change counter, and the records to write: those of the accounts and groups
  /// changed since `since` (nil when nothing changed), or every one when the folder does not
  /// know its count (`since` nil) or knows a later one.
  private static func changedRecords(
    _ reader: any AccountReader, env: AccountsEnvironment, since: Int64?
  ) throws(AccountsError) -> (Int64, Built?) {
    let generation = try reader.userdbGeneration()
    guard let since, since <= generation else {
      return (generation, try build(reader, names: env.nameService))
    }
    guard since < generation else { return (generation, nil) }
    let changes = try reader.userdbChanges(after: since)
    return (generation, try build(reader, names: env.nameService, only: changes))
  }

  /// Gives a uid (and its home) to every account and a gid to every group without one, in one
  /// transaction, as the command that makes one gives it (`PosixIDGiver`); returns the
  /// sentences for each account whose home had to differ from the one it named, and what
  /// `PosixIDGiver.said` says (those, then those left without a number).
  static func giveNumbers(_ env: AccountsEnvironment, store: any AccountRepository)
    throws(AccountsError) -> (homesMoved: [String], said: [String])
  {
    let wanting = try store.read { reader throws(AccountsError) in try reader.hasUnnumbered() }
    guard wanting else { return ([], []) }
    return try env.writableStore().write {
      writer throws(AccountsError) -> (homesMoved: [String], said: [String]) in
      // Only those without a number are read (in the order they were made), not the store.
      let unnumbered = try writer.unnumbered()
      var numbers = try PosixIDGiver(env, writer: writer, at: env.now())
      numbers.lookAhead(unnumbered.users.count + unnumbered.groups.count)
      for id in unnumbered.users {
        if let account = try writer.account(id: id) { try numbers.number(account, writer: writer) }
      }
      for id in unnumbered.groups {
        if let group = try writer.group(id: id) { try numbers.number(group, writer: writer) }
      }
      return (numbers.homesMoved, numbers.said)
    }
  }

  /// A records folder as given: absolute, normalized, no ':' or control characters.
  static func checkedFolder(_ folder: String) throws(AccountsError) -> String {
    guard LinuxPathRules.isValid(folder), LinuxPathRules.isNormalized(folder), folder != "/"
    else { throw .invalidLinuxPath(option: "--folder", path: folder) }
    return folder
  }
}

/// Hands out uids and gids: upwards from the last one given in the range, never one given
/// before (the store's `posix_id` refuses that too) nor one this system already knows.
struct PosixIDAllocator {
  let range: PosixIDRange
  var next: Int64
  var names: (any NameService)?

  /// The next free number, recorded as given to `name`; nil when the range is used up.
  mutating func give(_ kind: PosixIDKind, name: String, writer: any AccountWriter, at date: Date)
    throws(AccountsError) -> Int64?
  {
    while next <= range.last {
      let number = next
      next += 1
      if let names, names.knowsUID(number) || names.knowsGID(number) { continue }
      if try writer.givePosixID(number, kind: kind, name: name, at: date) { return number }
    }
    return nil
  }
}
