import AccountsCore
import AccountsStore
import AccountsTestSupport
import Foundation
import Testing

/// The groups and expiry part of the repository contract.
@Suite("Repository contract: groups and expiry")
struct GroupContract {
  let noon = Date(timeIntervalSince1970: 1_800_000_000)

  func newAccount(_ name: String, expiresAt: Date? = nil) -> NewAccount {
    NewAccount(
      username: name, usernameKey: name.lowercased(), fullName: name, email: "\(name)@example.org",
      passwordHash: "pbkdf2_sha256$1000$salt$key", expiresAt: expiresAt)
  }

  /// An activated store with alice (the owner) and bob; bob's id.
  func activated(_ backend: Backend) throws -> (any AccountRepository, () -> Void, Int64) {
    let (store, cleanup) = try backend.make()
    let bob = try store.write { writer throws(AccountsError) -> Int64 in
      _ = try writer.activate(owner: newAccount("alice"), at: noon)
      return try writer.insert(newAccount("Bob"), at: noon).id
    }
    return (store, cleanup, bob)
  }

  /// An expiry is stored on insert and update, read back to the millisecond, and cleared; an
  /// account is expired from that moment on, not before.
  @Test(arguments: Backend.allCases) func expiryRoundTrips(_ backend: Backend) throws {
    let (store, cleanup, _) = try activated(backend)
    defer { cleanup() }
    let carol = try store.write { writer throws(AccountsError) in
      try writer.insert(newAccount("carol", expiresAt: noon + 60), at: noon)
    }
    #expect(carol.expiresAt == noon + 60)
    let read = try store.read { reader throws(AccountsError) in try reader.account(key: "carol") }
    #expect(read?.expiresAt == noon + 60)
    #expect(read?.isExpired(at: noon + 59.999) == false)
    #expect(read?.isExpired(at: noon + 60) == true)
    try store.write { writer throws(AccountsError) in
      guard var bob = try writer.account(key: "bob") else { throw .noSuchAccount("bob") }
      #expect(bob.expiresAt == nil && !bob.isExpired(at: .distantFuture))
      bob.expiresAt = noon + 0.25
      try writer.update(bob)
    }
    var listed: [String: Date?] = [:]
    try store.read { reader throws(AccountsError) in
      try reader.forEachAccount { listed[$0.account.username] = $0.account.expiresAt }
    }
    #expect(listed == ["alice": nil, "Bob": noon + 0.25, "carol": noon + 60])
    try store.write { writer throws(AccountsError) in
      guard var carol = try writer.account(key: "carol") else { throw .noSuchAccount("carol") }
      carol.expiresAt = nil
      try writer.update(carol)
    }
    let cleared = try store.read { reader throws(AccountsError) in
      try reader.account(key: "carol")?.expiresAt
    }
    #expect(cleared == nil)
  }

  /// Groups are added once by name, listed in name order with their member counts, and an
  /// account's groups and a group's members come back sorted.
  @Test(arguments: Backend.allCases) func groupsAndMembers(_ backend: Backend) throws {
    let (store, cleanup, bob) = try activated(backend)
    defer { cleanup() }
    let (wheel, staff) = try store.write { writer throws(AccountsError) in
      (
        try writer.insertGroup(named: "wheel", at: noon),
        try writer.insertGroup(named: "staff", at: noon + 1)
      )
    }
    #expect(wheel.name == "wheel" && wheel.createdAt == noon && staff.createdAt == noon + 1)
    #expect(throws: AccountsError.groupNameTaken("wheel")) {
      try store.write { writer throws(AccountsError) in
        _ = try writer.insertGroup(named: "wheel", at: noon)
      }
    }
    try store.write { writer throws(AccountsError) in
      #expect(try writer.addMember(accountID: bob, groupID: wheel.id))
      #expect(try writer.addMember(accountID: bob, groupID: staff.id))
      #expect(try writer.addMember(accountID: 1, groupID: wheel.id))
      #expect(try !writer.addMember(accountID: bob, groupID: wheel.id))
    }
    try store.read { reader throws(AccountsError) in
      #expect(try reader.groups(accountID: bob) == ["staff", "wheel"])
      #expect(try reader.groups(accountID: 1) == ["wheel"])
      #expect(try reader.group(named: "staff") == staff)
      #expect(try reader.group(named: "nope") == nil)
      #expect(try reader.members(groupID: wheel.id) == ["alice", "Bob"])
      var listings: [GroupListing] = []
      try reader.forEachGroup { listings.append($0) }
      #expect(
        listings == [
          GroupListing(group: staff, memberCount: 1), GroupListing(group: wheel, memberCount: 2),
        ])
      var groups: [String: [String]] = [:]
      try reader.forEachAccount { groups[$0.account.username] = $0.groups }
      #expect(groups == ["alice": ["wheel"], "Bob": ["staff", "wheel"]])
    }
    try store.write { writer throws(AccountsError) in
      #expect(try writer.removeMember(accountID: bob, groupID: wheel.id))
      #expect(try !writer.removeMember(accountID: bob, groupID: wheel.id))
    }
    let left = try store.read { reader throws(AccountsError) in try reader.groups(accountID: bob) }
    #expect(left == ["staff"])
  }

  /// Removing a group ends its memberships and nothing else; removing an account ends its
  /// memberships; making the device Public removes every group.
  @Test(arguments: Backend.allCases) func removals(_ backend: Backend) throws {
    let (store, cleanup, bob) = try activated(backend)
    defer { cleanup() }
    let (wheel, staff) = try store.write { writer throws(AccountsError) in
      let wheel = try writer.insertGroup(named: "wheel", at: noon)
      let staff = try writer.insertGroup(named: "staff", at: noon)
      for group in [wheel, staff] {
        _ = try writer.addMember(accountID: bob, groupID: group.id)
        _ = try writer.addMember(accountID: 1, groupID: group.id)
      }
      return (wheel, staff)
    }
    try store.write { writer throws(AccountsError) in try writer.deleteGroup(id: wheel.id) }
    try store.read { reader throws(AccountsError) in
      #expect(try reader.group(named: "wheel") == nil)
      #expect(try reader.groups(accountID: bob) == ["staff"])
      #expect(try reader.accountCount() == 2)
      #expect(try reader.rowCount(.groupMember) == 2)
    }
    try store.write { writer throws(AccountsError) in
      guard let account = try writer.account(key: "bob") else { throw .noSuchAccount("bob") }
      try writer.delete(account)
    }
    let members = try store.read { reader throws(AccountsError) in
      try reader.members(groupID: staff.id)
    }
    #expect(members == ["alice"])
    _ = try store.write { writer throws(AccountsError) in try writer.makePublic(at: noon + 1) }
    try store.read { reader throws(AccountsError) in
      #expect(try reader.rowCount(.group) == 0)
      #expect(try reader.rowCount(.groupMember) == 0)
    }
    #expect(try store.consistencyProblems() == [])
  }

  /// The store refuses a group name that breaks Linux's rules, even past the core.
  @Test(arguments: Backend.allCases) func refusesBadNames(_ backend: Backend) throws {
    let (store, cleanup, _) = try activated(backend)
    defer { cleanup() }
    for name in ["", "Wheel", "1abc", "-x", "a b", "é", String(repeating: "a", count: 33)] {
      #expect(!GroupNameRules.isValid(name))
      #expect(throws: AccountsError.self) {
        try store.write { writer throws(AccountsError) in
          _ = try writer.insertGroup(named: name, at: noon)
        }
      }
    }
    for name in ["_x", "a", "a-b_9", String(repeating: "a", count: 32)] {
      #expect(GroupNameRules.isValid(name))
    }
  }
}
