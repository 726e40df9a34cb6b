import AccountsCore
import AccountsTestSupport
import Foundation
import Testing

/// A change writes only the files of what it changed: the store's change counter and its notes
/// of which accounts and groups changed, against the counter the folder last applied.
@Suite("User record changes")
struct UserRecordChangeTests: UserRecordsWorld {
  let world: World
  let names = FakeNameService()
  let folders = MemoryFolders()

  init() throws {
    world = try World()
    try world.activateAlice()
  }

  func add(_ name: String) throws {
    try UserAddFlow.run(
      env(ScriptedConsole([password])),
      options: ActivationOptions(
        username: name, fullName: "Some One", email: "\(name)@example.org",
        passwordFromStandardInput: true))
    try UserdbFlow.reconcile(env())
  }

  /// A changing command as the program runs it: the change, then the records.
  func change(_ body: () throws -> Void) throws {
    try body()
    try UserdbFlow.reconcile(env())
  }

  /// Adding an account writes its four files and nothing else; a sync with nothing behind
  /// writes nothing; a membership rewrites the member's record and adds its membership file,
  /// not the group's record.
  @Test func aChangeWritesOnlyItsFiles() throws {
    _ = try UserdbFlow.enable(
      env(), folder: "/run/userdb", range: PosixIDRange(parsing: "21000-21099"))
    for name in ["bob", "carol", "dave"] { try add(name) }
    try add("erin")
    #expect(folders.touched.last == ["21004.group", "21004.user", "erin.group", "erin.user"])
    #expect(folders.scopes.last == ["u5"])
    let applied = folders.touched.count
    let idle = try UserdbFlow.sync(env())
    #expect(idle.changes.isEmpty && folders.touched.count == applied)
    #expect((idle.users, idle.groups) == (5, 5))
    try change { try GroupFlow.add(env(), name: "crew") }
    #expect(folders.touched.last == ["21005.group", "crew.group"])
    #expect(folders.scopes.last == ["g1"])
    try change {
      try UserEditFlow.run(env(), username: "bob", edit: AccountEdit(addGroups: ["crew"]))
    }
    #expect(folders.touched.last == ["bob.user", "bob:crew.membership"])
    #expect(folders.scopes.last == ["u2"])
  }

  /// After renames, memberships, keys and removals, each written only as it changed, the whole
  /// comparison finds nothing to do.
  @Test func changesAddUpToTheWholeFolder() throws {
    _ = try UserdbFlow.enable(
      env(), folder: "/run/userdb", range: PosixIDRange(parsing: "21000-21099"))
    for name in ["bob", "carol", "dave"] { try add(name) }
    try change { try GroupFlow.add(env(), name: "crew") }
    try change { try GroupFlow.add(env(), name: "ops") }
    try change {
      try UserEditFlow.run(env(), username: "bob", edit: AccountEdit(addGroups: ["crew", "ops"]))
    }
    try change {
      try UserEditFlow.run(env(), username: "carol", edit: AccountEdit(addGroups: ["crew"]))
    }
    try change {
      try UserEditFlow.run(env(), username: "bob", edit: AccountEdit(username: "robert"))
    }
    try change { try SSHKeyFlow.add(env(), username: "carol", text: ed25519Line) }
    try change {
      try UserEditFlow.run(env(), username: "carol", edit: AccountEdit(removeGroups: ["crew"]))
    }
    try change { try GroupFlow.remove(env(), name: "ops") }
    try change { try UserRemoveFlow.run(env(), username: "dave", confirmed: true) }
    #expect(folders.files["robert:crew.membership"] != nil && folders.files["bob.user"] == nil)
    #expect(folders.files["robert:ops.membership"] == nil && folders.files["ops.group"] == nil)
    #expect(folders.files["dave.user"] == nil)
    let full = try UserdbFlow.sync(env(), full: true)
    #expect(full.changes == UserRecordChanges())
    #expect((full.users, full.groups) == (3, 4))
  }
}
