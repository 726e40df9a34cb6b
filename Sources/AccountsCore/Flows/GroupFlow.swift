import FoundationEssentials

/// `accounts group add|list|show|remove` (administrator): named sets of accounts.
public enum GroupFlow {
  /// Adds the group `name` (Linux's naming rules) on an Activated device; returns the sentence
  /// said.
  @discardableResult
  public static func add(_ env: AccountsEnvironment, name: String) throws(AccountsError)
    -> String
  {
    guard GroupNameRules.isValid(name) else { throw .invalidGroupName(name) }
    let store = try env.existingStore()
    let numbered = try store.write { writer throws(AccountsError) -> [String] in
      try writer.requireActivated()
      if try writer.group(named: name) != nil { throw .groupNameTaken(name) }
      let now = env.now()
      let group = try writer.insertGroup(named: name, at: now)
      var numbers = try PosixIDGiver(env, writer: writer, at: now)
      try numbers.number(group, writer: writer)
      try writer.append(AuditRecord(.groupAdded, at: now, detail: Messages.detailGroup(name)))
      return numbers.said
    }
    let said = Messages.groupAdded(name)
    env.console.output(said)
    numbered.forEach(env.console.message)
    return said
  }

  /// Removes the group `name` and its memberships (no account); returns the sentence said.
  @discardableResult
  public static func remove(_ env: AccountsEnvironment, name: String) throws(AccountsError)
    -> String
  {
    let store = try env.existingStore()
    let members = try store.write { writer throws(AccountsError) -> Int in
      let group = try existing(name, reader: writer)
      let members = try writer.members(groupID: group.id).count
      try writer.deleteGroup(id: group.id)
      try writer.append(
        AuditRecord(.groupRemoved, at: env.now(), detail: Messages.detailGroup(name)))
      return members
    }
    let said = Messages.groupRemoved(name, members: members)
    env.console.output(said)
    return said
  }

  /// Calls `each` with every group, in name order (nothing where no database exists).
  public static func list(_ env: AccountsEnvironment, each: (GroupListing) -> Void)
    throws(AccountsError)
  {
    guard let store = try env.readableStore() else { return }
    try store.read { reader throws(AccountsError) in
      try reader.forEachGroup { listing throws(AccountsError) in each(listing) }
    }
  }

  /// The group `name` and its members' user names, in user-name order.
  public static func show(_ env: AccountsEnvironment, name: String) throws(AccountsError)
    -> (group: AccountGroup, members: [String])
  {
    guard let store = try env.readableStore() else { throw .noSuchGroup(name) }
    return try store.read { reader throws(AccountsError) in
      let group = try existing(name, reader: reader)
      return (group, try reader.members(groupID: group.id))
    }
  }

  /// The group named `name`; `.noSuchGroup` when there is none (a name breaking the rules
  /// cannot name one).
  static func existing(_ name: String, reader: any AccountReader) throws(AccountsError)
    -> AccountGroup
  {
    guard GroupNameRules.isValid(name), let group = try reader.group(named: name) else {
      throw .noSuchGroup(name)
    }
    return group
  }

  /// Makes `account` a member of each group of `names` (each must exist), logging each new
  /// membership; returns the sentences to say.
  static func join(
    _ account: Account, groups names: [String], writer: any AccountWriter, at now: Date
  ) throws(AccountsError) -> [String] {
    var said: [String] = []
    for name in names {
      let group = try existing(name, reader: writer)
      guard try writer.addMember(accountID: account.id, groupID: group.id) else {
        said.append(Messages.alreadyInGroup(account.username, group: name))
        continue
      }
      try writer.append(
        AuditRecord(
          .groupMemberAdded, at: now, username: account.username,
          usernameKey: account.usernameKey, detail: Messages.detailGroup(name)))
      said.append(Messages.addedToGroup(account.username, group: name))
    }
    return said
  }

  /// Ends `account`'s membership of each group of `names` (each must exist and hold it),
  /// logging each; returns the sentences to say.
  static func leave(
    _ account: Account, groups names: [String], writer: any AccountWriter, at now: Date
  ) throws(AccountsError) -> [String] {
    var said: [String] = []
    for name in names {
      let group = try existing(name, reader: writer)
      guard try writer.removeMember(accountID: account.id, groupID: group.id) else {
        throw .notInGroup(username: account.username, group: name)
      }
      try writer.append(
        AuditRecord(
          .groupMemberRemoved, at: now, username: account.username,
          usernameKey: account.usernameKey, detail: Messages.detailGroup(name)))
      said.append(Messages.removedFromGroup(account.username, group: name))
    }
    return said
  }
}
