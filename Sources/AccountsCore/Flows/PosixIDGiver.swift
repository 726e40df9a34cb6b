import FoundationEssentials

/// Gives an account its uid (and its home with it) and a group its gid in the transaction that
/// makes them, when the store gives numbers (`givesPosixIDs`).
///
/// Whichever command makes them and on whichever machine, one that keeps no records included,
/// so that no host has to number them later (a fleet host's role may not). Numbers this
/// machine's name service knows are skipped, as at a sync. Accounts and groups made before the
/// store gave numbers get theirs at a sync or enable by a role that may give them
/// (`UserdbFlow.giveNumbers`).
struct PosixIDGiver {
  private var allocator: PosixIDAllocator?
  private let now: Date
  /// A sentence for each account given another home than the one it wanted.
  private(set) var homesMoved: [String] = []
  private var left = 0

  /// The giver for one transaction of `writer`; it gives nothing in a store that gives no
  /// numbers.
  init(_ env: AccountsEnvironment, writer: any AccountWriter, at now: Date)
    throws(AccountsError)
  {
    self.now = now
    guard try writer.givesPosixIDs() else { return }
    let range = try writer.userdbSettings().range
    allocator = PosixIDAllocator(
      range: range, next: (try writer.lastPosixID(in: range) ?? range.first - 1) + 1,
      names: env.nameService)
  }

  /// What the command says once it committed: each account given another home than the one it
  /// wanted, and those left without a number (the range is used up).
  var said: [String] {
    guard let allocator, left > 0 else { return homesMoved }
    return homesMoved + [Messages.posixIDsUsedUp(range: allocator.range.description, left: left)]
  }

  /// Asks the system at once about the numbers the next `count` accounts and groups would be
  /// given (and a few more, for those it knows), rather than one by one as each is numbered.
  mutating func lookAhead(_ count: Int) {
    guard var allocator, let names = allocator.names, count > 1,
      allocator.next <= allocator.range.last
    else { return }
    let last = min(allocator.range.last, allocator.next + Int64(count + count / 8 + 64) - 1)
    allocator.names = PrefetchedNames(names, numbers: allocator.next...last)
    self.allocator = allocator
  }

  /// Gives the account `id` its uid and home.
  ///
  /// `username` names it; `home` is the home it wants (nil: `/home/NAME`).
  mutating func number(
    accountID id: Int64, username: String, home: String?, writer: any AccountWriter
  ) throws(AccountsError) {
    guard var allocator else { return }
    defer { self.allocator = allocator }
    guard let uid = try allocator.give(.user, name: username, writer: writer, at: now) else {
      left += 1
      return
    }
    // The home is given with the uid and kept: a rename does not move it, and no later
    // account is given it (its files are this account's).
    let wanted = home ?? LinuxUserDefaults.home(for: username)
    let given = try LinuxUser.giveHome(wanted, uid: uid, writer: writer, at: now)
    try writer.setUID(uid, home: given, accountID: id)
    if given != wanted {
      homesMoved.append(Messages.homeMoved(username, wanted: wanted, given: given))
    }
  }

  /// `number(accountID:…)` for an account just made.
  mutating func number(_ account: Account, writer: any AccountWriter) throws(AccountsError) {
    try number(
      accountID: account.id, username: account.username, home: account.home, writer: writer)
  }

  /// Gives the group its gid.
  mutating func number(_ group: AccountGroup, writer: any AccountWriter) throws(AccountsError) {
    guard var allocator else { return }
    defer { self.allocator = allocator }
    if let gid = try allocator.give(.group, name: group.name, writer: writer, at: now) {
      try writer.setGID(gid, groupID: group.id)
    } else {
      left += 1
    }
  }
}
