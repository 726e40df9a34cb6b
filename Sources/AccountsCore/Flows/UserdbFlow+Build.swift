import FoundationEssentials

// The record files the store's accounts and groups make.
extension UserdbFlow {
  /// What a build found: the files, how many user and group records, why some accounts or
  /// groups make none, how many lack a number, and whose files were looked at (nil: all).
  struct Built {
    var files: [UserRecordFile] = []
    var users = 0
    var groups = 0
    var skipped: [String] = []
    var unnumbered = 0
    var owners: Set<String>?
  }

  /// The owner of an account's files (its records, links and memberships).
  static func owner(account id: Int64) -> String { "u\(id)" }
  /// The owner of a group's files (its record and link).
  static func owner(group id: Int64) -> String { "g\(id)" }

  /// Every record file the store's accounts and groups make.
  static func build(_ reader: any AccountReader, names: (any NameService)?) throws(AccountsError)
    -> Built
  {
    var built = Built()
    var listed: [AccountListing] = []
    try reader.forEachAccount { listed.append($0) }
    var listings: [GroupListing] = []
    try reader.forEachGroup { listings.append($0) }
    // Every name the records would take, asked of the system at once.
    let names = names.map {
      PrefetchedNames(
        $0,
        userNames: listed.filter { $0.account.uid != nil }.map(\.account.username)
          .filter(LinuxNameRules.isValid),
        groupNames: listings.filter { $0.group.gid != nil }.map(\.group.name))
    }
    var accounts: [(account: Account, uid: Int64, groups: [String])] = []
    for listing in listed {
      guard let uid = recordableAccount(listing.account, names: names, into: &built) else {
        continue
      }
      accounts.append((listing.account, uid, listing.groups))
    }
    let userNames = Set(accounts.map(\.account.username))
    var recordedGroups = Set<String>()
    for listing in listings {
      let group = listing.group
      guard
        let gid = try recordableGroup(
          group, names: names, userNamed: userNames.contains, into: &built)
      else { continue }
      built.files += groupFiles(group, gid: gid)
      recordedGroups.insert(group.name)
    }
    for (account, uid, groups) in accounts {
      let keys = try reader.sshKeys(accountID: account.id).map(\.key.line)
      built.files += userFiles(
        account, uid: uid, groups: groups.filter(recordedGroups.contains), keys: keys)
    }
    built.users = accounts.count
    built.groups = recordedGroups.count + accounts.count
    return built
  }

  /// The record files of the accounts and groups `changes` names (an account or group that is
  /// gone, or makes no record, makes none: its files go).
  static func build(
    _ reader: any AccountReader, names: (any NameService)?, only changes: UserdbEntities
  ) throws(AccountsError) -> Built {
    var built = Built(owners: [])
    var groupIDs = Set(changes.groups)
    var recordedAccounts: [(Account, Int64)] = []
    for id in changes.users {
      built.owners?.insert(owner(account: id))
      guard let account = try reader.account(id: id),
        let uid = recordableAccount(account, names: names, into: &built)
      else { continue }
      recordedAccounts.append((account, uid))
      // A group of the same name makes no record while this account does.
      if let namesake = try reader.group(named: account.username) { groupIDs.insert(namesake.id) }
    }
    let isRecordedUser = { (name: String) throws(AccountsError) -> Bool in
      try isRecordedAccount(named: name, reader: reader, names: names)
    }
    for id in groupIDs {
      built.owners?.insert(owner(group: id))
      guard let group = try reader.group(id: id),
        let gid = try recordableGroup(group, names: names, userNamed: isRecordedUser, into: &built)
      else { continue }
      built.files += groupFiles(group, gid: gid)
    }
    for (account, uid) in recordedAccounts {
      var groups: [String] = []
      for name in try reader.groups(accountID: account.id) {
        var ignored = Built()
        guard let group = try reader.group(named: name),
          try recordableGroup(group, names: names, userNamed: isRecordedUser, into: &ignored) != nil
        else { continue }
        groups.append(name)
      }
      let keys = try reader.sshKeys(accountID: account.id).map(\.key.line)
      built.files += userFiles(account, uid: uid, groups: groups, keys: keys)
    }
    return built
  }

  /// True when an account named exactly `name` makes a record.
  static func isRecordedAccount(
    named name: String, reader: any AccountReader, names: (any NameService)?
  ) throws(AccountsError) -> Bool {
    guard let key = try UsernameRules.key(for: name),
      let account = try reader.account(key: key), account.username == name
    else { return false }
    var ignored = Built()
    return recordableAccount(account, names: names, into: &ignored) != nil
  }

  /// The account's uid when it makes a record; otherwise nil, and why among `built.skipped`.
  static func recordableAccount(
    _ account: Account, names: (any NameService)?, into built: inout Built
  )
    -> Int64?
  {
    guard let uid = account.uid else {
      built.unnumbered += 1
      built.skipped.append(Messages.noRecordNoUID(account.username))
      return nil
    }
    guard LinuxNameRules.isValid(account.username) else {
      built.skipped.append(Messages.noRecordNotLinuxName(account.username))
      return nil
    }
    if let names,
      names.uid(ofUser: account.username).map({ $0 != uid }) ?? false
        || names.gid(ofGroup: account.username).map({ $0 != uid }) ?? false
    {
      built.skipped.append(Messages.noRecordNameKnown(account.username))
      return nil
    }
    return uid
  }

  /// The group's gid when it makes a record (no account's own group and no group of the
  /// system has its name); otherwise nil, and why among `built.skipped`.
  static func recordableGroup(
    _ group: AccountGroup, names: (any NameService)?,
    userNamed: (String) throws(AccountsError) -> Bool, into built: inout Built
  ) throws(AccountsError) -> Int64? {
    guard let gid = group.gid else {
      built.unnumbered += 1
      built.skipped.append(Messages.noGroupRecordNoGID(group.name))
      return nil
    }
    if try userNamed(group.name) || (names?.gid(ofGroup: group.name).map { $0 != gid } ?? false) {
      built.skipped.append(Messages.noGroupRecordNameKnown(group.name))
      return nil
    }
    return gid
  }

  /// A group's record and its link.
  ///
  /// Its members are not in it: each membership has its own file (the member's), which
  /// libnss-systemd reads for `getent group` and `id`, so that a membership change never
  /// rewrites a file as long as the group.
  static func groupFiles(_ group: AccountGroup, gid: Int64) -> [UserRecordFile] {
    let owner = owner(group: group.id)
    return [
      .record(
        "\(group.name).group", UserRecordJSON.group(group.name, gid: gid),
        owner: owner),
      .link("\(gid).group", to: "\(group.name).group", owner: owner),
    ]
  }

  /// An account's record, its own group, their links, and its memberships of `groups`.
  static func userFiles(_ account: Account, uid: Int64, groups: [String], keys: [String])
    -> [UserRecordFile]
  {
    let name = account.username
    let owner = owner(account: account.id)
    var files: [UserRecordFile] = [
      .record(
        "\(name).user", UserRecordJSON.user(account, uid: uid, groups: groups, keys: keys),
        owner: owner),
      .link("\(uid).user", to: "\(name).user", owner: owner),
      .record("\(name).group", UserRecordJSON.group(name, gid: uid), owner: owner),
      .link("\(uid).group", to: "\(name).group", owner: owner),
    ]
    for group in groups {
      files.append(
        .record(
          "\(name):\(group).membership", UserRecordJSON.membership(user: name, group: group),
          owner: owner))
    }
    return files
  }
}
