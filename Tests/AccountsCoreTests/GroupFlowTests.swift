import AccountsCore
import AccountsStore
import AccountsTestSupport
import Foundation
import Testing

@Suite("Groups")
struct GroupFlowTests {
  let bobPassword = "another long passphrase 99"

  /// alice activated, the groups `names` added.
  func world(groups names: [String] = ["staff", "wheel"]) throws -> World {
    let world = try World()
    try world.activateAlice()
    for name in names { try GroupFlow.add(world.environment(ScriptedConsole([])), name: name) }
    return world
  }

  /// Adds bob from a pipe with `groups`.
  func addBob(_ world: World, groups: [String]) throws {
    try UserAddFlow.run(
      world.environment(ScriptedConsole([bobPassword])),
      options: ActivationOptions(
        username: "bob", fullName: "Bob", email: "bob@example.org",
        passwordFromStandardInput: true), groups: groups)
  }

  /// A group is added once, by a name of Linux's rules, on an Activated device only; each
  /// refusal is one sentence and exit 1.
  @Test func addRules() throws {
    let world = try world(groups: ["staff"])
    let env = world.environment(ScriptedConsole([]))
    #expect(throws: AccountsError.groupNameTaken("staff")) { try GroupFlow.add(env, name: "staff") }
    #expect(throws: AccountsError.invalidGroupName("Staff")) {
      try GroupFlow.add(env, name: "Staff")
    }
    #expect(
      AccountsError.groupNameTaken("staff").description == "Group name staff is already taken!")
    #expect(AccountsError.groupNameTaken("staff").exitStatus == .refused)
    #expect(AccountsError.invalidGroupName("x").exitStatus == .refused)
    let publicDevice = try World()
    #expect(throws: AccountsError.notActivated) {
      try GroupFlow.add(publicDevice.environment(ScriptedConsole([])), name: "staff")
    }
    let events = try world.store.auditEvents().filter { $0.kind == .groupAdded }
    #expect(events.map(\.detail) == ["group staff"])
  }

  /// user add --group joins each group and logs each membership; an unknown group refuses
  /// the whole add before the form is asked (exit 5, nothing written).
  @Test func userAddJoins() throws {
    let world = try world()
    let console = ScriptedConsole([bobPassword])
    #expect(throws: AccountsError.noSuchGroup("nope")) {
      try UserAddFlow.run(
        world.environment(console),
        options: ActivationOptions(
          username: "bob", fullName: "Bob", email: "bob@example.org",
          passwordFromStandardInput: true), groups: ["staff", "nope"])
    }
    #expect(console.prompts.isEmpty)
    #expect(AccountsError.noSuchGroup("nope").exitStatus == .noSuchAccount)
    #expect(AccountsError.noSuchGroup("nope").description == "No group named nope.")
    #expect(try world.store.accountCount() == 1)
    try addBob(world, groups: ["wheel", "staff"])
    let shown = try AccountQuery.show(world.environment(ScriptedConsole([])), username: "bob")
    #expect(shown.groups == ["staff", "wheel"])
    let joined = try world.store.auditEvents().filter { $0.kind == .groupMemberAdded }
    #expect(joined.map(\.detail) == ["group wheel", "group staff"])
    #expect(joined.allSatisfy { $0.username == "bob" })
  }

  /// user edit adds and removes groups with the other options, in one transaction: leaving a
  /// group the account is not in refuses the whole edit.
  @Test func userEditJoinsAndLeaves() throws {
    let world = try world()
    try addBob(world, groups: ["staff"])
    let env = world.environment(ScriptedConsole([]))
    #expect(throws: AccountsError.notInGroup(username: "bob", group: "wheel")) {
      try UserEditFlow.run(
        env, username: "bob",
        edit: AccountEdit(fullName: "Robert", addGroups: ["wheel"], removeGroups: ["wheel"]))
    }
    #expect(AccountsError.notInGroup(username: "bob", group: "wheel").exitStatus == .refused)
    #expect(try world.store.account(key: "bob")?.fullName == "Bob")
    let said = try UserEditFlow.run(
      env, username: "bob",
      edit: AccountEdit(fullName: "Robert", addGroups: ["wheel", "staff"], removeGroups: ["staff"]))
    #expect(
      said == [
        "Account edited: bob.", "bob removed from group staff.", "bob added to group wheel.",
        "bob added to group staff.",
      ])
    #expect(try AccountQuery.show(env, username: "bob").groups == ["staff", "wheel"])
    #expect(throws: AccountsError.noSuchGroup("ops")) {
      try UserEditFlow.run(env, username: "bob", edit: AccountEdit(addGroups: ["ops"]))
    }
    #expect(
      try UserEditFlow.run(env, username: "bob", edit: AccountEdit(addGroups: ["wheel"]))
        == ["bob is already in group wheel; nothing changed."])
  }

  /// Removing a group ends its memberships and keeps its accounts; removing an account ends
  /// its memberships; reset removes every group.
  @Test func removals() throws {
    let world = try world()
    try addBob(world, groups: ["staff", "wheel"])
    let env = world.environment(ScriptedConsole([]))
    #expect(
      try GroupFlow.remove(env, name: "wheel") == "Group removed: wheel (1 membership ended).")
    #expect(throws: AccountsError.noSuchGroup("wheel")) { try GroupFlow.remove(env, name: "wheel") }
    #expect(throws: AccountsError.noSuchGroup("wheel")) { try GroupFlow.show(env, name: "wheel") }
    #expect(try world.store.accountCount() == 2)
    #expect(try GroupFlow.show(env, name: "staff").members == ["bob"])
    try UserRemoveFlow.run(env, username: "bob", confirmed: true)
    #expect(try GroupFlow.show(env, name: "staff").members == [])
    try ResetFlow.run(env, confirmed: true)
    var groups: [String] = []
    try GroupFlow.list(env) { groups.append($0.group.name) }
    #expect(groups.isEmpty)
  }

  /// list in name order with member counts; show lists the members by user name.
  @Test func listAndShow() throws {
    let world = try world(groups: ["wheel", "_ops", "staff"])
    try addBob(world, groups: ["wheel"])
    try UserEditFlow.run(
      world.environment(ScriptedConsole([])), username: "alice",
      edit: AccountEdit(addGroups: ["wheel"]))
    var lines: [String] = []
    try GroupFlow.list(world.environment(ScriptedConsole([]))) {
      lines.append(GroupPresentation.json($0))
    }
    let created = Timestamp.string(from: start)
    #expect(
      lines == [
        #"{"name":"_ops","memberCount":0,"createdAt":"\#(created)"}"#,
        #"{"name":"staff","memberCount":0,"createdAt":"\#(created)"}"#,
        #"{"name":"wheel","memberCount":2,"createdAt":"\#(created)"}"#,
      ])
    let (group, members) = try GroupFlow.show(world.environment(ScriptedConsole([])), name: "wheel")
    #expect(members == ["Alice", "bob"])
    #expect(
      GroupPresentation.details(group, members: members)
        == ["Group: wheel", "Created: \(created)", "Members: Alice, bob"])
  }
}
