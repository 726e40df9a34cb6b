import AccountsCore
import AccountsPostgres
import AccountsStore
import AccountsTestSupport
import Foundation
import Testing

/// The backends the contract runs against; a new backend is added here and must pass it all.
enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
  case sqliteInMemory = "SQLite in memory"
  case sqliteFile = "SQLite file"
  case postgres = "PostgreSQL"

  var testDescription: String { rawValue }

  /// A fresh, empty store of this kind, and what removes it afterwards.
  func make() throws -> (any AccountRepository, () -> Void) {
    switch self {
    case .sqliteInMemory:
      return (try SQLiteStore.inMemory(), {})
    case .sqliteFile:
      let folder = try temporaryFolder()
      let path = folder.appendingPathComponent("contract.sqlite3").path
      let store = try #require(try SQLiteStore.open(path: path, access: .readWrite))
      return (store, { try? FileManager.default.removeItem(at: folder) })
    case .postgres:
      let (uri, drop) = try temporaryPostgresDatabase()
      let store = try #require(try PostgresStore(uri: uri).opened(for: .readWrite))
      return (store, drop)
    }
  }
}

private func newAccount(_ name: String, hash: String = "pbkdf2_sha256$1000$salt$key")
  -> NewAccount
{
  NewAccount(
    username: name, usernameKey: name.lowercased(), fullName: "\(name) Liddell",
    email: "\(name.lowercased())@example.org", passwordHash: hash)
}

/// What every `AccountRepository` must do, whatever stores it: the seam a second backend
/// (PostgreSQL) plugs into is proven by passing this suite.
@Suite("Repository contract")
struct RepositoryContract {
  /// A new store reads as an empty Public device.
  @Test(arguments: Backend.allCases) func startsEmpty(_ backend: Backend) throws {
    let (store, cleanup) = try backend.make()
    defer { cleanup() }
    try store.read { reader throws(AccountsError) in
      #expect(try reader.deviceStatus().state == .publicState)
      #expect(try reader.owner() == nil)
      #expect(try reader.accountCount() == 0)
      #expect(try reader.account(key: "alice") == nil)
      #expect(try reader.tally(key: "alice") == .clear)
      var seen = 0
      try reader.forEachAccount { _ throws(AccountsError) in seen += 1 }
      try reader.forEachEvent(AuditQuery()) { _ throws(AccountsError) in seen += 1 }
      #expect(seen == 0)
    }
    #expect(
      try store.consistencyFacts()
        == ConsistencyFacts(
          device: DeviceFacts(state: "Public", ownerID: nil, ownerExists: false, accountCount: 0)))
    #expect(try store.consistencyProblems() == [])
  }

  /// Activation stores the owner and the state together, once.
  @Test(arguments: Backend.allCases) func activatesOnce(_ backend: Backend) throws {
    let (store, cleanup) = try backend.make()
    defer { cleanup() }
    let owner = try store.write { writer throws(AccountsError) in
      try writer.activate(owner: newAccount("Alice"), at: noon)
    }
    #expect(owner.isOwner && owner.username == "Alice" && owner.usernameKey == "alice")
    #expect(owner.createdAt == noon && owner.lastLoginAt == nil && !owner.mustChangePassword)
    #expect(try store.status() == DeviceStatus(state: .activated, changedAt: noon))
    #expect(try store.storedStatus() == DeviceStatus(state: .activated, changedAt: noon))
    #expect(try store.user() == owner)
    #expect(throws: AccountsError.alreadyActivated) {
      try store.write { writer throws(AccountsError) in
        _ = try writer.activate(owner: newAccount("Bob"), at: noon)
      }
    }
    #expect(try store.account(key: "bob") == nil)
    #expect(
      try store.consistencyFacts()
        == ConsistencyFacts(
          device: DeviceFacts(
            state: "Activated", ownerID: owner.id, ownerExists: true, accountCount: 1)))
    #expect(try store.consistencyProblems() == [])
  }

  /// The device's state checks, asked inside a write: only a Public device may be activated,
  /// only an Activated one takes more accounts.
  @Test(arguments: Backend.allCases) func stateChecks(_ backend: Backend) throws {
    let (store, cleanup) = try backend.make()
    defer { cleanup() }
    try store.write { writer throws(AccountsError) in
      try writer.requirePublic()
      #expect(throws: AccountsError.notActivated) { try writer.requireActivated() }
      _ = try writer.activate(owner: newAccount("Alice"), at: noon)
      try writer.requireActivated()
      #expect(throws: AccountsError.alreadyActivated) { try writer.requirePublic() }
    }
  }

  /// Accounts join an Activated device only; a taken key is refused with its own error and
  /// nothing is written.
  @Test(arguments: Backend.allCases) func insertRules(_ backend: Backend) throws {
    let (store, cleanup) = try backend.make()
    defer { cleanup() }
    #expect(throws: AccountsError.self) {
      try store.write { writer throws(AccountsError) in
        _ = try writer.insert(newAccount("Bob"), at: noon)
      }
    }
    try store.activate(newAccount("Alice"), at: noon)
    let bob = try store.write { writer throws(AccountsError) in
      try writer.insert(newAccount("Bob"), at: noon + 1)
    }
    #expect(!bob.isOwner && bob.createdAt == noon + 1)
    #expect(throws: AccountsError.usernameTaken("BOB")) {
      try store.write { writer throws(AccountsError) in
        _ = try writer.insert(newAccount("BOB"), at: noon)
      }
    }
    #expect(try store.read { reader throws(AccountsError) in try reader.accountCount() } == 2)
  }

  /// An update stores every field it is given; a rename onto a taken key is refused.
  @Test(arguments: Backend.allCases) func updates(_ backend: Backend) throws {
    let (store, cleanup) = try backend.make()
    defer { cleanup() }
    try store.activate(newAccount("Alice"), at: noon)
    var bob = try store.write { writer throws(AccountsError) in
      try writer.insert(newAccount("Bob"), at: noon)
    }
    bob.fullName = "Robert Builder"
    bob.email = "robert@example.org"
    bob.passwordHash = "pbkdf2_sha256$2000$pepper$other"
    bob.mustChangePassword = true
    bob.disabledAt = noon + 5
    bob.lastLoginAt = noon + 6
    bob.updatedAt = noon + 7
    bob.passwordChangedAt = noon + 8
    try store.write { writer throws(AccountsError) in try writer.update(bob) }
    #expect(try store.account(key: "bob") == bob)
    var renamed = bob
    renamed.username = "ALICE"
    renamed.usernameKey = "alice"
    #expect(throws: AccountsError.usernameTaken("ALICE")) {
      try store.write { writer throws(AccountsError) in try writer.update(renamed) }
    }
    renamed.username = "Rob"
    renamed.usernameKey = "rob"
    try store.write { writer throws(AccountsError) in try writer.update(renamed) }
    #expect(try store.account(key: "bob") == nil)
    #expect(try store.account(key: "rob") == renamed)
  }

  /// The owner cannot be deleted while it owns the device; ownership moves; others delete.
  @Test(arguments: Backend.allCases) func ownershipAndDeletion(_ backend: Backend) throws {
    let (store, cleanup) = try backend.make()
    defer { cleanup() }
    try store.activate(newAccount("Alice"), at: noon)
    let bob = try store.write { writer throws(AccountsError) in
      try writer.insert(newAccount("Bob"), at: noon)
    }
    let alice = try #require(try store.user())
    #expect(throws: AccountsError.self) {
      try store.write { writer throws(AccountsError) in try writer.delete(alice) }
    }
    try store.write { writer throws(AccountsError) in
      try writer.moveOwnership(to: bob, at: noon + 1)
    }
    #expect(try store.user()?.username == "Bob")
    #expect(try store.account(key: "alice")?.isOwner == false)
    #expect(try store.status().changedAt == noon)
    try store.write { writer throws(AccountsError) in try writer.delete(alice) }
    #expect(try store.account(key: "alice") == nil)
    #expect(try store.consistencyProblems() == [])
  }

  /// Making the device Public deletes every account and tally, and keeps the log.
  @Test(arguments: Backend.allCases) func makesPublic(_ backend: Backend) throws {
    let (store, cleanup) = try backend.make()
    defer { cleanup() }
    try store.activate(newAccount("Alice"), at: noon)
    try store.write { writer throws(AccountsError) in
      _ = try writer.insert(newAccount("Bob"), at: noon)
      try writer.setTally(
        ThrottleState(failures: 2, lockouts: 0, lockedUntil: nil), key: "mallory", at: noon)
    }
    let deleted = try store.write { writer throws(AccountsError) in
      try writer.makePublic(at: noon + 9)
    }
    #expect(deleted == 2)
    #expect(try store.status() == DeviceStatus(state: .publicState, changedAt: noon + 9))
    #expect(try store.tally(key: "mallory") == .clear)
    #expect(try store.auditEvents().map(\.kind) == [.activation])
    #expect(try store.consistencyProblems() == [])
  }

  /// Tallies round-trip, are forgotten on request, and old ones expire unless locked.
  @Test(arguments: Backend.allCases) func tallies(_ backend: Backend) throws {
    let (store, cleanup) = try backend.make()
    defer { cleanup() }
    let locked = ThrottleState(failures: 0, lockouts: 3, lockedUntil: noon + 86_400 * 3)
    let counted = ThrottleState(failures: 4, lockouts: 1, lockedUntil: nil)
    try store.write { writer throws(AccountsError) in
      try writer.setTally(locked, key: "eve", at: noon)
      try writer.setTally(counted, key: "bob", at: noon)
      try writer.setTally(counted, key: "carol", at: noon + 86_400)
    }
    #expect(try store.tally(key: "eve") == locked)
    #expect(try store.tally(key: "bob") == counted)
    try store.write { writer throws(AccountsError) in
      try writer.forgetTallies(lastFailureBefore: noon + 1, notLockedAt: noon + 86_401)
    }
    #expect(try store.tally(key: "eve") == locked)
    #expect(try store.tally(key: "bob") == .clear)
    #expect(try store.tally(key: "carol") == counted)
    try store.write { writer throws(AccountsError) in
      try writer.setTally(nil, key: "carol", at: noon)
    }
    #expect(try store.tally(key: "carol") == .clear)
  }

  /// Events come back oldest first, filtered by name key, kind and time, the newest N kept.
  @Test(arguments: Backend.allCases) func events(_ backend: Backend) throws {
    let (store, cleanup) = try backend.make()
    defer { cleanup() }
    let script: [(AuditEventKind, String?, TimeInterval)] = [
      (.loginFailure, "bob", 1), (.loginFailure, "alice", 2), (.loginSuccess, "bob", 3),
      (.loginFailure, "bob", 4), (.reset, nil, 5), (.loginFailure, "bob", 6),
    ]
    try store.write { writer throws(AccountsError) in
      for (kind, key, offset) in script {
        try writer.append(
          AuditRecord(
            kind, at: noon + offset, username: key?.uppercased(), usernameKey: key,
            detail: "n\(Int(offset))"))
      }
    }
    func details(_ query: AuditQuery) throws -> [String] {
      try store.read { reader throws(AccountsError) -> [String] in
        var found: [String] = []
        try reader.forEachEvent(query) { event throws(AccountsError) in
          found.append(event.detail ?? "")
        }
        return found
      }
    }
    #expect(try details(AuditQuery()) == ["n1", "n2", "n3", "n4", "n5", "n6"])
    #expect(try details(AuditQuery(usernameKey: "bob")) == ["n1", "n3", "n4", "n6"])
    #expect(try details(AuditQuery(kind: .loginFailure, limit: 2)) == ["n4", "n6"])
    #expect(try details(AuditQuery(since: noon + 4)) == ["n4", "n5", "n6"])
    #expect(
      try details(AuditQuery(usernameKey: "bob", kind: .loginFailure, since: noon + 2))
        == ["n4", "n6"])
    let events = try store.auditEvents()
    #expect(events.map(\.id) == events.map(\.id).sorted())
    #expect(events[0].username == "BOB" && events[0].occurredAt == noon + 1)
    let count = try store.read { reader throws(AccountsError) in
      try reader.eventCount(key: "bob", kind: .loginFailure, afterLatestOf: [.loginSuccess])
    }
    #expect(count == 2)
    let none = try store.read { reader throws(AccountsError) in
      try reader.eventCount(key: "alice", kind: .loginFailure, afterLatestOf: [.loginSuccess])
    }
    #expect(none == 1)
  }

  /// Accounts are listed in key order, each with its tally.
  @Test(arguments: Backend.allCases) func listsInOrder(_ backend: Backend) throws {
    let (store, cleanup) = try backend.make()
    defer { cleanup() }
    try store.activate(newAccount("Mallory"), at: noon)
    try store.write { writer throws(AccountsError) in
      for name in ["carol", "Bob", "alice"] { _ = try writer.insert(newAccount(name), at: noon) }
      try writer.setTally(
        ThrottleState(failures: 3, lockouts: 0, lockedUntil: nil), key: "bob", at: noon)
    }
    let listed = try store.read { reader throws(AccountsError) -> [AccountListing] in
      var all: [AccountListing] = []
      try reader.forEachAccount { listing throws(AccountsError) in all.append(listing) }
      return all
    }
    #expect(listed.map(\.account.usernameKey) == ["alice", "bob", "carol", "mallory"])
    #expect(listed.map(\.tally.failures) == [0, 3, 0, 0])
    #expect(listed.map(\.account.isOwner) == [false, false, false, true])
  }

  /// A name refused as taken draws no id: the ids of an import's accounts grow by one, which
  /// `user import` relies on to name the line a duplicate first appeared on.
  @Test(arguments: Backend.allCases) func refusedNamesDrawNoID(_ backend: Backend) throws {
    let (store, cleanup) = try backend.make()
    defer { cleanup() }
    try store.activate(newAccount("Alice"), at: noon)
    let ids = try store.write { writer throws(AccountsError) -> [Int64] in
      let bob = try writer.insert(newAccount("Bob"), at: noon)
      for name in ["Bob", "Alice"] {
        do throws(AccountsError) {
          _ = try writer.insert(newAccount(name), at: noon)
          Issue.record("\(name) was inserted twice")
        } catch {
          #expect(error == .usernameTaken(name))
        }
      }
      return [bob.id, try writer.insert(newAccount("Carol"), at: noon).id]
    }
    #expect(ids[1] == ids[0] + 1)
  }

  /// A batch is stored in its order: ids grow by one, a key stored before or given earlier in
  /// the batch is refused (nil) and draws no id, and every field is kept as given.
  @Test(arguments: Backend.allCases) func insertsBatches(_ backend: Backend) throws {
    let (store, cleanup) = try backend.make()
    defer { cleanup() }
    try store.activate(newAccount("Alice"), at: noon)
    // Given a batch whose names are out of key order, with a name twice and one stored, and
    // an account whose text needs quoting in any list syntax.
    let dave = NewAccount(
      username: "Dave", usernameKey: "dave", fullName: #"Dave "Q" O'Brien \ {x,y} NULL"#,
      email: "dave@example.org", passwordHash: "pbkdf2_sha256$1000$salt$key",
      mustChangePassword: true, disabled: true, expiresAt: noon + 86_400, home: "/srv/dave",
      shell: "/bin/sh")
    let batch = [
      newAccount("Carol"), newAccount("Bob"), newAccount("carol"), newAccount("ALICE"), dave,
    ]
    // When it is stored, then one more batch in the same write.
    let (ids, more, none) = try store.write {
      writer throws(AccountsError) -> ([Int64?], [Int64?], [Int64?]) in
      (
        try writer.insert(batch, at: noon), try writer.insert([newAccount("Eve")], at: noon),
        try writer.insert([], at: noon)
      )
    }
    // Then the first of each name holds it, and the ids follow the batch's order.
    let carol = try #require(ids[0])
    #expect(ids == [carol, carol + 1, nil, nil, carol + 2])
    #expect(more == [carol + 3] && none == [])
    #expect(try store.account(key: "carol")?.username == "Carol")
    #expect(try store.account(key: "alice")?.isOwner == true)
    let stored = try #require(try store.account(key: "dave"))
    #expect(stored.id == carol + 2 && stored.fullName == dave.fullName)
    #expect(stored.home == "/srv/dave" && stored.shell == "/bin/sh")
    #expect(stored.mustChangePassword && stored.disabledAt == noon && stored.createdAt == noon)
    #expect(stored.expiresAt == noon + 86_400 && stored.passwordChangedAt == noon)
    #expect(try store.account(key: "bob")?.home == nil)
    #expect(try store.accountCount() == 5)
    #expect(try store.consistencyProblems() == [])
  }

  /// An error thrown by the body of a walk over rows comes out as it was thrown (a copy's
  /// target failing inside the source's walk is the target's failure, not the source's).
  @Test(arguments: Backend.allCases) func walksPassErrorsThrough(_ backend: Backend) throws {
    let (store, cleanup) = try backend.make()
    defer { cleanup() }
    try store.activate(newAccount("Alice"), at: noon)
    let lost = AccountsError.storage(.connectionLost(location: "elsewhere", reason: "gone"))
    for table in [StoreRecordKind.account, .auditEvent] {
      #expect(throws: lost) {
        try store.read { reader throws(AccountsError) in
          try reader.forEachRow(of: table) { _ throws(AccountsError) in throw lost }
        }
      }
    }
    #expect(throws: lost) {
      try store.read { reader throws(AccountsError) in
        try reader.forEachAccount { _ throws(AccountsError) in throw lost }
      }
    }
  }

  /// A write that throws leaves nothing behind, and its error comes out as it was thrown.
  @Test(arguments: Backend.allCases) func writesAreAtomic(_ backend: Backend) throws {
    let (store, cleanup) = try backend.make()
    defer { cleanup() }
    try store.activate(newAccount("Alice"), at: noon)
    #expect(throws: AccountsError.noSuchAccount("x")) {
      try store.write { writer throws(AccountsError) in
        _ = try writer.insert(newAccount("Bob"), at: noon)
        try writer.append(AuditRecord(.accountAdded, at: noon, username: "Bob"))
        try writer.setTally(.clear, key: "bob", at: noon)
        throw .noSuchAccount("x")
      }
    }
    #expect(try store.account(key: "bob") == nil)
    #expect(try store.auditEvents().map(\.kind) == [.activation])
    #expect(try store.consistencyProblems() == [])
  }
}
