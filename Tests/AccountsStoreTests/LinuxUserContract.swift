import AccountsCore
import AccountsStore
import AccountsTestSupport
import Foundation
import Testing

/// The accounts-as-Linux-users part of the repository contract: numbers, hosts, SSH keys.
@Suite("Repository contract: Linux users")
struct LinuxUserContract {
  let noon = Date(timeIntervalSince1970: 1_800_000_000)

  func newAccount(_ name: String) -> NewAccount {
    NewAccount(
      username: name, usernameKey: name.lowercased(), fullName: name, email: "\(name)@example.org",
      passwordHash: "pbkdf2_sha256$1000$salt$key", home: name == "bob" ? "/srv/bob" : nil)
  }

  /// A number is given once, ever: not again after its account is removed, nor after reset;
  /// the last one given is found within a range only.
  @Test(arguments: Backend.allCases) func numbersAreNeverGivenTwice(_ backend: Backend) throws {
    let (store, cleanup) = try backend.make()
    defer { cleanup() }
    try store.write { writer throws(AccountsError) in
      let alice = try writer.activate(owner: newAccount("alice"), at: noon)
      let bob = try writer.insert(newAccount("bob"), at: noon)
      #expect(bob.homeDirectory == "/srv/bob")
      #expect(bob.uid == nil)
      #expect(try writer.givePosixID(20000, kind: .user, name: "alice", at: noon))
      #expect(try writer.giveHome(alice.homeDirectory, uid: 20000, at: noon))
      try writer.setUID(20000, home: alice.homeDirectory, accountID: alice.id)
      #expect(try writer.givePosixID(20001, kind: .user, name: "bob", at: noon))
      #expect(try writer.giveHome("/srv/bob", uid: 20001, at: noon))
      #expect(try writer.giveHome("/srv/bob", uid: 20001, at: noon))
      #expect(!(try writer.giveHome("/srv/bob", uid: 20000, at: noon)))
      try writer.setUID(20001, home: "/srv/bob", accountID: bob.id)
      #expect(try writer.account(key: "bob")?.home == "/srv/bob")
      try writer.delete(bob)
      #expect(!(try writer.givePosixID(20001, kind: .user, name: "carol", at: noon)))
    }
    _ = try store.write { writer throws(AccountsError) in try writer.makePublic(at: noon) }
    try store.read { reader throws(AccountsError) in
      #expect(try reader.lastPosixID(in: .standard) == 20001)
      #expect(try reader.lastPosixID(in: PosixIDRange(uncheckedFirst: 20002, last: 29999)) == nil)
      #expect(try reader.rowCount(.posixID) == 2)
      // The homes given outlive their accounts and a reset, as the numbers do.
      #expect(try reader.homeOwner("/srv/bob") == 20001)
      #expect(try reader.homeOwner("/srv/carol") == nil)
    }
  }

  /// The range and this host's folder are stored, replaced and forgotten; uid, home and shell
  /// round-trip through update.
  @Test(arguments: Backend.allCases) func settingsAndHosts(_ backend: Backend) throws {
    let (store, cleanup) = try backend.make()
    defer { cleanup() }
    try store.write { writer throws(AccountsError) in
      _ = try writer.activate(owner: newAccount("alice"), at: noon)
      #expect(try writer.userdbSettings().range == .standard)
      #expect(try writer.userdbSettings().storeID.count == 32)
      try writer.setPosixIDRange(PosixIDRange(uncheckedFirst: 1000, last: 59999))
      try writer.setUserdbHost(UserdbHost(host: "a", folder: "/etc/userdb", enabledAt: noon))
      try writer.setUserdbHost(UserdbHost(host: "a", folder: "/run/userdb", enabledAt: noon + 1))
      try writer.setUserdbHost(UserdbHost(host: "b", folder: "/etc/userdb", enabledAt: noon))
      guard var alice = try writer.account(key: "alice") else { throw .noSuchAccount("alice") }
      #expect(try writer.givePosixID(1000, kind: .user, name: "alice", at: noon))
      alice.uid = 1000
      alice.shell = "/bin/zsh"
      try writer.update(alice)
    }
    try store.read { reader throws(AccountsError) in
      #expect(try reader.userdbSettings().range == PosixIDRange(uncheckedFirst: 1000, last: 59999))
      #expect(
        try reader.userdbHost(named: "a")
          == UserdbHost(host: "a", folder: "/run/userdb", enabledAt: noon + 1))
      let alice = try reader.account(key: "alice")
      #expect(alice?.uid == 1000)
      #expect(alice?.loginShell == "/bin/zsh")
      #expect(alice?.home == nil)
    }
    let removed = try store.write { writer throws(AccountsError) in
      (try writer.removeUserdbHost(named: "a"), try writer.removeUserdbHost(named: "a"))
    }
    #expect(removed == (true, false))
    try store.read { reader throws(AccountsError) in
      #expect(try reader.userdbHost(named: "a") == nil)
      #expect(try reader.userdbHost(named: "b") != nil)
    }
  }

  /// Keys are stored once per fingerprint and account, listed oldest first, removed by
  /// fingerprint, and go with their account.
  @Test(arguments: Backend.allCases) func sshKeys(_ backend: Backend) throws {
    let (store, cleanup) = try backend.make()
    defer { cleanup() }
    func key(_ n: Int) -> SSHKey {
      SSHKey(
        type: "ssh-ed25519", data: "AAAA\(n)", comment: n == 1 ? "" : "k\(n)",
        fingerprint: "SHA256:\(n)", bits: 256)
    }
    let bob = try store.write { writer throws(AccountsError) -> Int64 in
      _ = try writer.activate(owner: newAccount("alice"), at: noon)
      let bob = try writer.insert(newAccount("bob"), at: noon).id
      #expect(try writer.insertSSHKey(key(2), accountID: bob, at: noon + 1))
      #expect(try writer.insertSSHKey(key(1), accountID: bob, at: noon + 2))
      #expect(!(try writer.insertSSHKey(key(1), accountID: bob, at: noon + 3)))
      #expect(try writer.insertSSHKey(key(1), accountID: 1, at: noon + 3))
      return bob
    }
    try store.read { reader throws(AccountsError) in
      let keys = try reader.sshKeys(accountID: bob)
      #expect(keys.map(\.key.comment) == ["k2", ""])
      #expect(keys.map(\.addedAt) == [noon + 1, noon + 2])
      #expect(keys.first?.key.line == "ssh-ed25519 AAAA2 k2")
    }
    try store.write { writer throws(AccountsError) in
      #expect(try writer.deleteSSHKey(accountID: bob, fingerprint: "SHA256:2"))
      #expect(!(try writer.deleteSSHKey(accountID: bob, fingerprint: "SHA256:2")))
      guard let account = try writer.account(id: bob) else { throw .noSuchAccount("bob") }
      try writer.delete(account)
    }
    try store.read { reader throws(AccountsError) in
      #expect(try reader.rowCount(.sshKey) == 1)
      #expect(try reader.sshKeys(accountID: 1).count == 1)
    }
  }

  /// Every change a record reads adds to the store's counter in its own transaction and notes
  /// whose it was (a removed one's too); numbers and ranges go up to 2147483647.
  @Test(arguments: Backend.allCases) func changesAreCounted(_ backend: Backend) throws {
    let (store, cleanup) = try backend.make()
    defer { cleanup() }
    let start = try store.read { reader throws(AccountsError) in try reader.userdbGeneration() }
    let (alice, bob, crew) = try store.write {
      writer throws(AccountsError) -> (Account, Account, AccountGroup) in
      let alice = try writer.activate(owner: newAccount("alice"), at: noon)
      let bob = try writer.insert(newAccount("bob"), at: noon)
      #expect(try writer.hasUnnumbered())
      try writer.setPosixIDRange(PosixIDRange(uncheckedFirst: 200000, last: 2_147_483_647))
      #expect(try writer.givePosixID(2_147_483_647, kind: .user, name: "alice", at: noon))
      #expect(try writer.giveHome(alice.homeDirectory, uid: 2_147_483_647, at: noon))
      try writer.setUID(2_147_483_647, home: alice.homeDirectory, accountID: alice.id)
      #expect(try writer.givePosixID(200000, kind: .user, name: "bob", at: noon))
      #expect(try writer.giveHome(bob.homeDirectory, uid: 200000, at: noon))
      try writer.setUID(200000, home: bob.homeDirectory, accountID: bob.id)
      #expect(!(try writer.hasUnnumbered()))
      let crew = try writer.insertGroup(named: "crew", at: noon)
      #expect(try writer.hasUnnumbered())
      return (alice, bob, crew)
    }
    let made = try store.read { reader throws(AccountsError) -> Int64 in
      #expect(try reader.userdbSettings().range.last == 2_147_483_647)
      #expect(try reader.group(id: crew.id)?.name == "crew")
      #expect(
        try reader.userdbChanges(after: start)
          == UserdbEntities(users: [alice.id, bob.id].sorted(), groups: [crew.id]))
      return try reader.userdbGeneration()
    }
    #expect(made > start)
    try store.write { writer throws(AccountsError) in
      #expect(try writer.addMember(accountID: bob.id, groupID: crew.id))
    }
    let joined = try store.read { reader throws(AccountsError) -> Int64 in
      #expect(try reader.userdbChanges(after: made) == UserdbEntities(users: [bob.id]))
      return try reader.userdbGeneration()
    }
    try store.write { writer throws(AccountsError) in
      try writer.deleteGroup(id: crew.id)
      try writer.delete(bob)
    }
    try store.read { reader throws(AccountsError) in
      #expect(
        try reader.userdbChanges(after: joined)
          == UserdbEntities(users: [bob.id], groups: [crew.id]))
      #expect(try reader.group(id: crew.id) == nil)
    }
  }
}

/// A host's own steps and the store's numbering state.
extension LinuxUserContract {
  /// A store gives numbers once a host keeps its records (and still after it stopped, once a
  /// number was given); a host's entry is kept unless it names another folder; forgetting it
  /// runs the removal inside and logs it, and forgets nothing (running nothing) for a host
  /// that kept no records.
  @Test(arguments: Backend.allCases) func hostStepsAndNumbering(_ backend: Backend) throws {
    let (store, cleanup) = try backend.make()
    defer { cleanup() }
    _ = try store.write { writer throws(AccountsError) in
      try writer.activate(owner: newAccount("alice"), at: noon)
    }
    func gives() throws -> Bool {
      try store.read { reader throws(AccountsError) in try reader.givesPosixIDs() }
    }
    #expect(try !gives())
    #expect(try store.read { reader throws(AccountsError) in try reader.mayGivePosixIDs() })
    let host = UserdbHost(host: "h1", folder: "/run/userdb", enabledAt: noon)
    #expect(try store.keepUserdbHost(host) == "/run/userdb")
    #expect(try gives())
    var elsewhere = host
    elsewhere.folder = "/etc/userdb"
    #expect(try store.keepUserdbHost(elsewhere) == "/run/userdb")
    #expect(
      try store.read { reader throws(AccountsError) in try reader.userdbHost(named: "h1") }?
        .folder == "/run/userdb")
    var ran = 0
    let removed = try store.forgetUserdbHost(named: "h1", at: noon) {
      () throws(AccountsError) -> (Int, detail: String?) in
      ran += 1
      return (7, "/run/userdb: 7 removed")
    }
    #expect(removed == 7 && ran == 1)
    let again = try store.forgetUserdbHost(named: "h1", at: noon) {
      () throws(AccountsError) -> (Int, detail: String?) in
      ran += 1
      return (0, nil)
    }
    #expect(again == nil && ran == 1)
    #expect(try !gives())
    try store.read { reader throws(AccountsError) in
      var details: [String?] = []
      try reader.forEachEvent(AuditQuery()) { event throws(AccountsError) in
        if event.kind == .userdbDisabled { details.append(event.detail) }
      }
      #expect(details == ["/run/userdb: 7 removed"])
    }
    _ = try store.write { writer throws(AccountsError) in
      try writer.givePosixID(20000, kind: .group, name: "g", at: noon)
    }
    #expect(try gives())
  }
}
