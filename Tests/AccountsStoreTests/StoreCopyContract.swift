import AccountsCore
import AccountsCrypto
import AccountsSchema
import AccountsStore
import AccountsTestSupport
import Foundation
import Testing

/// `store copy` between every pair of backends: every row of every table arrives as
/// it was, and the next ids continue after the source's.
@Suite("Repository contract: copying a whole store")
struct StoreCopyContract {
  let noon = Date(timeIntervalSince1970: 1_800_000_000)
  /// alice's TOTP secret, and the key file's key an SQLite store seals it under.
  static let secret = [UInt8](1...20)
  static func sealingKey() throws -> SealingKey {
    try SealingKey(bytes: [UInt8](repeating: 5, count: 32))
  }

  /// Every row of every table, and the id positions.
  func contents(_ store: any AccountRepository) throws -> (
    [StoreRecordKind: [[StoreValue]]], IDPositions
  ) {
    try store.read { reader throws(AccountsError) in
      var tables: [StoreRecordKind: [[StoreValue]]] = [:]
      for table in StoreRecordKind.allCases {
        var rows: [[StoreValue]] = []
        try reader.forEachRow(of: table) { rows.append($0) }
        tables[table] = rows
      }
      return (tables, try reader.idPositions())
    }
  }

  /// A store with a row in every table: an owner, a disabled account with a crypt(3) hash, a
  /// removed one (a gap in ids), a tally with a lock and one at the largest count, events, a live
  /// and an ended session, a second factor with one recovery code used; events with a host and
  /// one with none.
  func filled(_ backend: Backend) throws -> (any AccountRepository, () -> Void) {
    let (store, cleanup) = try backend.make()
    let sealingKey = try Self.sealingKey()
    try store.write { writer throws(AccountsError) in
      let alice = try writer.activate(
        owner: NewAccount(
          username: "Alice", usernameKey: "alice", fullName: "Alice Liddell",
          email: "alice@example.org", passwordHash: "pbkdf2_sha256$1000$salt$key"), at: noon)
      var bob = try writer.insert(
        NewAccount(
          username: "bob", usernameKey: "bob", fullName: "Bob ✓", email: "bob@example.org",
          passwordHash: "$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7",
          mustChangePassword: true, disabled: true), at: noon + 1)
      bob.lastLoginAt = noon + 2.5
      bob.home = "/srv/bob"
      bob.shell = "/bin/sh"
      try writer.update(bob)
      let carol = try writer.insert(
        NewAccount(
          username: "carol", usernameKey: "carol", fullName: "Carol", email: "carol@example.org",
          passwordHash: "pbkdf2_sha256$1000$salt$key"), at: noon + 3)
      // Numbers given (one to an account since removed), a group with its gid, an SSH key.
      try writer.setPosixIDRange(PosixIDRange(uncheckedFirst: 30000, last: 30999))
      for (number, account) in [(Int64(30000), alice), (30001, carol)] {
        #expect(try writer.givePosixID(number, kind: .user, name: account.username, at: noon))
        try writer.setUID(number, home: account.homeDirectory, accountID: account.id)
      }
      #expect(!(try writer.givePosixID(30000, kind: .group, name: "again", at: noon)))
      let staff = try writer.insertGroup(named: "crew", at: noon)
      _ = try writer.givePosixID(30002, kind: .group, name: "crew", at: noon)
      try writer.setGID(30002, groupID: staff.id)
      _ = try writer.addMember(accountID: alice.id, groupID: staff.id)
      let key = SSHKey(
        type: "ssh-ed25519",
        data: "AAAAC3NzaC1lZDI1NTE5AAAAIOFZkC33EfqKewwOisSItt2FJo/PInlAGgMR0vFXd8aG",
        comment: "alice@laptop", fingerprint: "SHA256:oJ5Ml5JTa0iXcArq79CChS/mAg0y2TbJuPFnFjzKH7Y",
        bits: 256)
      #expect(try writer.insertSSHKey(key, accountID: alice.id, at: noon + 7))
      #expect(!(try writer.insertSSHKey(key, accountID: alice.id, at: noon + 8)))
      try writer.delete(carol)
      try writer.setTally(
        ThrottleState(failures: 5, lockouts: 1, lockedUntil: noon + 600), key: "mallory",
        at: noon + 4)
      // Whole numbers are 64-bit in both stores: the largest copies over.
      try writer.setTally(
        ThrottleState(failures: .max, lockouts: .max, lockedUntil: nil), key: "zed", at: noon)
      // Events from two hosts and one from before hosts were recorded.
      for (kind, host) in [(AuditEventKind.activation, "host-1"), (.accountAdded, "hôte-2")] {
        try writer.append(
          AuditRecord(kind, at: noon + 5, username: "bob", detail: "from x", host: host))
      }
      try writer.append(AuditRecord(.lockout, at: noon + 5, username: "bob", detail: "from x"))
      // The kinds the newest migrations added (PAM's refusals, the user records' changes).
      for kind in [AuditEventKind.accessRefused, .userdbEnabled, .userdbDisabled, .userdbSynced] {
        try writer.append(AuditRecord(kind, at: noon + 6, detail: kind.rawValue, host: "host-1"))
      }
      let live = try writer.startSession(
        NewSession(
          tokenHash: [UInt8](repeating: 7, count: 32), accountID: alice.id, createdAt: noon,
          expiresAt: noon + 86_400, idleSeconds: 3600, secondFactor: true))
      let ended = try writer.startSession(
        NewSession(
          tokenHash: [UInt8](repeating: 8, count: 32), accountID: alice.id, createdAt: noon,
          expiresAt: noon + 86_400, idleSeconds: 3600, secondFactor: false))
      try writer.touchSession(id: live.id, at: noon + 61.25, idleUntil: noon + 3661.25)
      _ = try writer.endSession(id: ended.id)
      let sealed: [UInt8]
      do throws(CryptoError) {
        sealed = try AESGCM.seal(
          Self.secret, key: sealingKey.bytes,
          associatedData: Array("accounts totp secret v1, account \(alice.id)".utf8))
      } catch {
        throw .crypto(error)
      }
      // Sealed under the key file (a PostgreSQL store's from before its server kept secrets).
      try writer.storeSecondFactor(
        StoredSecondFactor(
          accountID: alice.id, sealedSecret: sealed, keyID: sealingKey.id, lastStep: 60_000_000,
          enabledAt: noon),
        recoveryCodeHashes: [[UInt8](repeating: 1, count: 32), [UInt8](repeating: 2, count: 32)])
      _ = try writer.useRecoveryCode(
        accountID: alice.id, hash: [UInt8](repeating: 2, count: 32), at: noon + 9)
    }
    return (store, cleanup)
  }

  static let pairs: [(Backend, Backend)] = [
    (.sqliteFile, .postgres), (.postgres, .sqliteFile), (.postgres, .postgres),
    (.sqliteInMemory, .sqliteFile),
  ]

  /// Everything but the sessions arrives, ids and sequences kept; the next session and event
  /// ids continue.
  @Test(arguments: pairs) func copiesEverything(_ from: Backend, _ to: Backend) throws {
    let (source, dropSource) = try filled(from)
    defer { dropSource() }
    let (target, dropTarget) = try to.make()
    defer { dropTarget() }
    let summary = try StoreCopyFlow.run(
      source: AccountsEnvironment(
        console: ScriptedConsole([]), store: source,
        keys: MemorySealingKeyStore(key: try Self.sealingKey())),
      target: AccountsEnvironment(console: ScriptedConsole([]), store: target))
    #expect(summary == StoreCopyFlow.Summary(accounts: 2, events: 7, secondFactors: 1))
    let (copied, positions) = try contents(target)
    let (original, sourcePositions) = try contents(source)
    for table in StoreRecordKind.allCases where table.isCopied {
      if table == .secondFactor, from != .postgres, to == .postgres {
        // Opened with the SQLite file's key, handed to the server in the clear to encrypt.
        #expect(
          copied[table]
            == original[table]?.map {
              [$0[0], .blob(Self.secret), .text(StoredSecondFactor.serverKeyID), $0[3], $0[4]]
            })
      } else {
        #expect(copied[table] == original[table], "\(table)")
      }
    }
    #expect(
      try target.auditEvents().map(\.host)
        == ["host-1", "hôte-2", nil, "host-1", "host-1", "host-1", "host-1"])
    #expect(
      try target.auditEvents().suffix(4).map(\.kind)
        == [.accessRefused, .userdbEnabled, .userdbDisabled, .userdbSynced])
    // Sessions stay behind: people log in again on the new store.
    #expect(original[.session]?.count == 1)
    #expect(copied[.session] == [])
    #expect(!StoreRecordKind.session.isCopied)
    // Every field of every kind has its column in the stores' schemas.
    for kind in StoreRecordKind.allCases { #expect(kind.columns.count == kind.fields.count) }
    #expect(positions == sourcePositions)
    #expect(positions == IDPositions(auditEvent: 7, session: 2))
    #expect(try target.consistencyProblems() == [])
    // The numbers given, the range, homes, shells and keys came along; the store's identity
    // did not (each store names its own records).
    #expect(copied[.posixID]?.count == 3 && copied[.sshKey]?.count == 1)
    try target.read { reader throws(AccountsError) in
      #expect(try reader.userdbSettings().range == PosixIDRange(uncheckedFirst: 30000, last: 30999))
      #expect(try reader.lastPosixID(in: reader.userdbSettings().range) == 30002)
      #expect(try reader.account(key: "alice")?.uid == 30000)
      #expect(try reader.account(key: "bob")?.loginShell == "/bin/sh")
      #expect(try reader.group(named: "crew")?.gid == 30002)
      #expect(try reader.sshKeys(accountID: 1).map(\.key.comment) == ["alice@laptop"])
    }
    let sourceID = try source.read { reader throws(AccountsError) in
      try reader.userdbSettings().storeID
    }
    let targetID = try target.read { reader throws(AccountsError) in
      try reader.userdbSettings().storeID
    }
    #expect(sourceID != targetID)
    // The next ids continue after the source's.
    let next = try target.write { writer throws(AccountsError) in
      try writer.startSession(
        NewSession(
          tokenHash: [UInt8](repeating: 9, count: 32), accountID: 1, createdAt: noon,
          expiresAt: noon + 86_400, idleSeconds: 3600, secondFactor: false)
      ).id
    }
    #expect(next == 3)
    let dave = try target.write { writer throws(AccountsError) in
      try writer.insert(
        NewAccount(
          username: "dave", usernameKey: "dave", fullName: "Dave", email: "dave@example.org",
          passwordHash: "pbkdf2_sha256$1000$salt$key"), at: noon)
    }
    #expect(dave.id > 2)
  }

  /// An event a host's login cache delivered keeps its offline id: the copy's log says
  /// `offline`, holds the same id, and takes the same event delivered again no second time.
  @Test(arguments: pairs) func keepsOfflineEvents(_ from: Backend, _ to: Backend) throws {
    let (source, dropSource) = try filled(from)
    defer { dropSource() }
    let (target, dropTarget) = try to.make()
    defer { dropTarget() }
    // Given an event delivered by a login cache (at a past time: a server takes none to come)
    let offlineID = "0123456789abcdef0123456789abcdef"
    let delivered = QueuedEvent(
      offlineID: offlineID,
      record: AuditRecord(
        .loginSuccess, at: Date(timeIntervalSince1970: 1_700_000_000), username: "Alice",
        usernameKey: "alice", host: "web-2"))
    #expect(try source.appendOfflineEvent(delivered))
    #expect(!(try source.appendOfflineEvent(delivered)))
    // When the store is copied
    _ = try StoreCopyFlow.run(
      source: AccountsEnvironment(
        console: ScriptedConsole([]), store: source,
        keys: MemorySealingKeyStore(key: try Self.sealingKey())),
      target: AccountsEnvironment(console: ScriptedConsole([]), store: target))
    // Then the copy's last event is offline with the same id, the others are not
    let events = try target.auditEvents()
    #expect(events.map(\.offline) == Array(repeating: false, count: 7) + [true])
    #expect(events.last?.host == "web-2" && events.last?.kind == .loginSuccess)
    let rows = try contents(target).0[.auditEvent] ?? []
    #expect(rows.last?.last == .text(offlineID))
    #expect(rows.dropLast().allSatisfy { $0.last == .null })
    #expect(!(try target.appendOfflineEvent(delivered)))
    var another = delivered
    another.offlineID = "fedcba9876543210fedcba9876543210"
    #expect(try target.appendOfflineEvent(another))
    #expect(try target.auditEvents().map(\.offline).suffix(2) == [true, true])
  }

  /// A target that holds anything is refused, and nothing is written to it.
  @Test(arguments: [Backend.sqliteFile, .postgres]) func refusesANonEmptyTarget(_ to: Backend)
    throws
  {
    let (source, dropSource) = try filled(.sqliteInMemory)
    defer { dropSource() }
    let (target, dropTarget) = try to.make()
    defer { dropTarget() }
    try target.write { writer throws(AccountsError) in
      try writer.append(AuditRecord(.reset, at: noon))
    }
    #expect(
      throws: AccountsError.copyTargetNotEmpty(location: target.location, accounts: 0, events: 1)
    ) {
      try StoreCopyFlow.run(
        source: AccountsEnvironment(console: ScriptedConsole([]), store: source),
        target: AccountsEnvironment(console: ScriptedConsole([]), store: target))
    }
    #expect(try contents(target).0[.account] == [])
  }
}
