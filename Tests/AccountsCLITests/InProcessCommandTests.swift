import AccountsCore
import AccountsStore
import AccountsTestSupport
import ArgumentParser
import Foundation
import Testing

@testable import AccountsCLI

/// One in-memory device and a way to run command lines against it in-process, as the binary
/// would (parse, build the context, run), with a scripted console and fixed settings.
final class InProcessDevice {
  let store: SQLiteStore
  var now = Date(timeIntervalSince1970: 1_800_000_000)

  init() throws { store = try SQLiteStore.inMemory() }

  /// Runs `arguments` with `input` lines; returns the console, the exit status and what the
  /// error printed.
  @discardableResult
  func run(_ arguments: [String], input: [String] = [], interactive: Bool = false) throws
    -> (console: ScriptedConsole, status: AccountsCore.ExitStatus, errors: [String])
  {
    let console = ScriptedConsole(interactive: interactive, input)
    let settings = ["ACCOUNTS_PBKDF2_ITERATIONS": "1000", "HOME": "/nonexistent"]
    let command = try AccountsCommand.parseAsRoot(arguments)
    let context = try CommandContext.make(
      database: ":memory:", variable: { settings[$0] }, console: console,
      bulk: ConsoleBulkOutput(console),
      openStore: { [store] _, _ throws(StoreError) in store }, now: { [now] in now })
    do {
      guard let contextual = command as? any ContextualCommand else {
        Issue.record("\(arguments) is not a contextual command")
        return (console, .usage, [])
      }
      try contextual.run(context)
      return (console, .success, [])
    } catch let error as AccountsError {
      return (console, error.exitStatus, error.lines)
    } catch let exit as SilentExit {
      return (console, exit.status, [])
    }
  }
}

private let password = "correct horse battery staple"
private let other = "purple lantern meadow window"

@Suite("Commands in-process")
struct InProcessCommandTests {
  func activated() throws -> InProcessDevice {
    let device = try InProcessDevice()
    let result = try device.run(
      [
        "activate", "--username", "alice", "--full-name", "Alice Liddell", "--email",
        "alice@example.org", "--password-stdin",
      ], input: [password])
    #expect(result.status == .success)
    return device
  }

  /// `user add` is refused on a Public device with the sentence saying to activate first.
  @Test func addNeedsActivation() throws {
    let device = try InProcessDevice()
    let result = try device.run(
      ["user", "add", "--username", "bob", "--full-name", "Bob", "--email", "b@example.org"],
      input: [password, password])
    #expect(result.status == .refused)
    #expect(result.errors == [Messages.runActivateFirst])
  }

  /// `user add` then `user list --json`: one object per account, every key present, in order.
  @Test func addAndList() throws {
    let device = try activated()
    let added = try device.run(
      ["user", "add", "--username", "Bob", "--full-name", "Bob B", "--email", "b@example.org"],
      input: [password, password])
    #expect(added.console.outputs == ["Account added: Bob."])
    let taken = try device.run(
      ["user", "add", "--username", "BOB", "--full-name", "X", "--email", "x@example.org"],
      input: [password, password])
    #expect(taken.status == .refused && taken.errors == ["User name BOB is already taken!"])
    let listed = try device.run(["user", "list", "--json"])
    #expect(listed.console.outputs.count == 2)
    let keys = try listed.console.outputs.map { line -> [String] in
      let object = try #require(
        try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
      return object.keys.sorted()
    }
    let expected = [
      "createdAt", "disabled", "email", "expired", "expiresAt", "failures", "fullName", "groups",
      "home", "lastLogin", "locked", "lockedUntil", "mustChangePassword", "owner", "shell", "uid",
      "username",
    ]
    #expect(keys == [expected, expected])
    #expect(listed.console.outputs[0].hasPrefix(#"{"username":"alice","#))
  }

  /// An unknown account exits 5 on every administrator command that names one.
  @Test(arguments: [
    ["user", "show", "nobody"], ["user", "disable", "nobody"], ["user", "enable", "nobody"],
    ["user", "remove", "nobody", "--yes"], ["user", "edit", "nobody", "--full-name", "N"],
  ])
  func unknownAccount(_ arguments: [String]) throws {
    let device = try activated()
    let result = try device.run(arguments)
    #expect(result.status == .noSuchAccount)
    #expect(result.errors == ["No account named nobody."])
  }

  /// A disabled account gets the usual answer; the log says why; enabling lets it in again.
  @Test func disabledAccount() throws {
    let device = try activated()
    #expect(
      try device.run(["user", "disable", "alice"]).console.outputs == [
        "Account disabled: alice."
      ])
    let refused = try device.run(["login", "--username", "alice"], input: [password])
    #expect(refused.status == .refused && refused.errors == [Messages.invalidCredentials])
    let events = try device.store.auditEvents()
    #expect(events.last?.kind == .loginFailure && events.last?.detail == "account disabled")
    try device.run(["user", "enable", "alice"])
    let home = try device.run(["login", "--username", "alice"], input: [password])
    #expect(home.console.outputs.first == "Welcome back Alice Liddell!")
  }

  /// `user passwd --must-change`: the next login asks for a new password before Home, and
  /// the old one stops working.
  @Test func mustChangeAtLogin() throws {
    let device = try activated()
    let set = try device.run(
      ["user", "passwd", "alice", "--password-stdin", "--must-change"], input: [other])
    #expect(
      set.console.outputs == [
        "Password set for alice; it must be changed at the next login."
      ])
    let fresh = "silver harbour lighthouse dawn"
    let login = try device.run(["login"], input: ["alice", other, fresh, fresh])
    #expect(login.status == .success)
    #expect(login.console.messages == [Messages.mustChangePassword])
    #expect(login.console.outputs.first == "Welcome back Alice Liddell!")
    #expect(try device.run(["login"], input: ["alice", other]).status == .refused)
    #expect(try device.run(["login"], input: ["alice", fresh]).status == .success)
    let kinds = try device.store.auditEvents().map(\.kind.rawValue)
    #expect(
      kinds.suffix(5) == [
        "password_set", "password_changed", "login_success", "login_failure", "login_success",
      ])
  }

  /// `passwd` refuses a new password equal to the current one and a wrong current one.
  @Test func personPasswd() throws {
    let device = try activated()
    let same = try device.run(["passwd"], input: ["alice", password, password, password])
    #expect(same.status == .refused && same.errors == [Messages.passwordUnchanged])
    let wrong = try device.run(["passwd"], input: ["alice", other, other, other])
    #expect(wrong.status == .refused && wrong.errors == [Messages.invalidCredentials])
    let done = try device.run(["passwd"], input: ["alice", password, other, other])
    #expect(done.console.outputs == ["Password changed for alice."])
    #expect(
      try device.run(["verify", "--username", "alice", "--password-stdin"], input: [other])
        .status == .success)
  }

  /// `verify` says nothing: 0 right, 1 wrong, 4 locked.
  @Test func verifyIsSilent() throws {
    let device = try activated()
    let arguments = ["verify", "--username", "alice", "--password-stdin"]
    let right = try device.run(arguments, input: [password])
    #expect(right.status == .success && right.console.outputs.isEmpty)
    for _ in 1...4 { #expect(try device.run(arguments, input: [other]).status == .refused) }
    let locking = try device.run(arguments, input: [other])
    #expect(locking.status == .locked)
    #expect(locking.console.messages.isEmpty && locking.console.outputs.isEmpty)
    #expect(try device.run(arguments, input: [password]).status == .locked)
  }

  /// Owner and last-account rules of `user remove`, and ownership moved by `user edit`.
  @Test func removalRules() throws {
    let device = try activated()
    let last = try device.run(["user", "remove", "alice", "--yes"])
    #expect(last.errors == [Messages.lastAccount("alice")])
    try device.run(
      [
        "user", "add", "--username", "bob", "--full-name", "Bob", "--email", "b@example.org",
        "--password-stdin",
      ], input: [password])
    let owner = try device.run(["user", "remove", "alice", "--yes"])
    #expect(owner.status == .refused && owner.errors == [Messages.ownerCannotBeRemoved("alice")])
    let noTerminal = try device.run(["user", "remove", "bob"])
    #expect(noTerminal.errors == [Messages.needsConfirmation(.removal)])
    #expect(
      try device.run(["user", "edit", "bob", "--owner"]).console.outputs == [
        "Ownership moved to bob."
      ])
    #expect(
      try device.run(["user", "remove", "alice", "--yes"]).console.outputs == [
        "Account removed: alice."
      ])
    #expect(try device.store.user()?.username == "bob")
  }

  /// `log` filters by user, kind and time, newest N kept, oldest first.
  @Test func logFilters() throws {
    let device = try activated()
    device.now += 3600
    try device.run(["login"], input: ["alice", other])
    try device.run(["login"], input: ["bob", other])
    let lines = try device.run(["log", "--user", "ALICE", "--event", "login_failure", "--json"])
    #expect(lines.console.outputs.count == 1)
    #expect(lines.console.outputs[0].contains(#""user":"alice""#))
    let recent = try device.run(["log", "--since", "2027-01-15T08:30:00Z"])
    #expect(recent.console.outputs.count == 2)
    let newest = try device.run(["log", "--limit", "1"])
    #expect(newest.console.outputs.count == 1 && newest.console.outputs[0].contains("bob"))
    #expect(throws: (any Error).self) {
      try AccountsCommand.parseAsRoot(["log", "--since", "soon"])
    }
    #expect(throws: (any Error).self) { try AccountsCommand.parseAsRoot(["log", "--event", "x"]) }
  }
}
