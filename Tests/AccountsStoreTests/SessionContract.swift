import AccountsCore
import AccountsStore
import AccountsTestSupport
import Foundation
import Testing

/// The sessions and second factors part of the repository contract.
@Suite("Repository contract: sessions and second factors")
struct SessionContract {
  let noon = Date(timeIntervalSince1970: 1_800_000_000)

  /// An activated store with alice (id 1) and bob.
  func activated(_ backend: Backend) throws -> (any AccountRepository, () -> Void, Int64) {
    let (store, cleanup) = try backend.make()
    let bob = try store.write { writer throws(AccountsError) -> Int64 in
      _ = try writer.activate(
        owner: NewAccount(
          username: "alice", usernameKey: "alice", fullName: "Alice", email: "a@example.org",
          passwordHash: "pbkdf2_sha256$1000$salt$key"), at: noon)
      return try writer.insert(
        NewAccount(
          username: "bob", usernameKey: "bob", fullName: "Bob", email: "b@example.org",
          passwordHash: "pbkdf2_sha256$1000$salt$key"), at: noon
      ).id
    }
    return (store, cleanup, bob)
  }

  func newSession(_ byte: UInt8, account: Int64, at date: Date) -> NewSession {
    NewSession(
      tokenHash: [UInt8](repeating: byte, count: 32), accountID: account, createdAt: date,
      expiresAt: date + 86_400, idleSeconds: 3600, secondFactor: byte.isMultiple(of: 2))
  }

  /// Sessions are found by token hash and id, touched, listed live only, and ended one, all
  /// but one, or dead.
  @Test(arguments: Backend.allCases) func sessions(_ backend: Backend) throws {
    let (store, cleanup, bob) = try activated(backend)
    defer { cleanup() }
    let ids = try store.write { writer throws(AccountsError) -> [Int64] in
      [
        try writer.startSession(newSession(1, account: 1, at: noon)).id,
        try writer.startSession(newSession(2, account: 1, at: noon)).id,
        try writer.startSession(newSession(3, account: bob, at: noon)).id,
      ]
    }
    try store.read { reader throws(AccountsError) in
      let found = try reader.session(tokenHash: [UInt8](repeating: 2, count: 32))
      #expect(found?.id == ids[1])
      #expect(found?.idleUntil == noon + 3600)
      #expect(found?.secondFactor == true)
      #expect(try reader.session(id: ids[2])?.accountID == bob)
      var names: [String] = []
      try reader.forEachSession(accountID: nil, liveAt: noon + 60) {
        listing throws(AccountsError) in names.append(listing.username)
      }
      #expect(names == ["alice", "alice", "bob"])
    }
    try store.write { writer throws(AccountsError) in
      try writer.touchSession(id: ids[0], at: noon + 3000, idleUntil: noon + 6600)
      #expect(try writer.endSessions(accountID: 1, keeping: ids[0]) == [ids[1]])
      #expect(try writer.endSession(id: ids[1]) == false)
    }
    try store.write { writer throws(AccountsError) in
      // At noon + 1h30 bob's session is idle; alice's was used at noon + 50 min.
      try writer.endSessions(deadAt: noon + 5400)
      #expect(try writer.session(id: ids[2]) == nil)
      #expect(try writer.session(id: ids[0])?.lastSeenAt == noon + 3000)
    }
    #expect(try store.consistencyProblems() == [])
  }

  /// A session number is never given again, even after the newest session ended (so a
  /// `session revoke ID` read from an older list cannot end another session).
  @Test(arguments: Backend.allCases) func idsAreNotReused(_ backend: Backend) throws {
    let (store, cleanup, _) = try activated(backend)
    defer { cleanup() }
    let (first, second) = try store.write { writer throws(AccountsError) -> (Int64, Int64) in
      let first = try writer.startSession(newSession(1, account: 1, at: noon)).id
      _ = try writer.endSession(id: first)
      return (first, try writer.startSession(newSession(2, account: 1, at: noon)).id)
    }
    #expect(second > first)
  }

  /// The same token hash cannot be stored twice.
  @Test(arguments: Backend.allCases) func tokenHashesAreUnique(_ backend: Backend) throws {
    let (store, cleanup, _) = try activated(backend)
    defer { cleanup() }
    try store.write { writer throws(AccountsError) in
      _ = try writer.startSession(newSession(1, account: 1, at: noon))
    }
    #expect(throws: AccountsError.self) {
      try store.write { writer throws(AccountsError) in
        _ = try writer.startSession(newSession(1, account: 1, at: noon))
      }
    }
  }

  /// A step is accepted only when later than the stored one; a recovery code once; removing
  /// the factor takes its codes; new codes replace the old.
  @Test(arguments: Backend.allCases) func secondFactor(_ backend: Backend) throws {
    let (store, cleanup, _) = try activated(backend)
    defer { cleanup() }
    let codes = (1...10).map { [UInt8](repeating: UInt8($0), count: 32) }
    try store.write { writer throws(AccountsError) in
      try writer.storeSecondFactor(
        StoredSecondFactor(
          accountID: 1, sealedSecret: [UInt8](repeating: 9, count: 48),
          keyID: "0123456789abcdef", lastStep: 100, enabledAt: noon),
        recoveryCodeHashes: codes)
    }
    try store.write { writer throws(AccountsError) in
      #expect(try writer.acceptStep(100, accountID: 1) == false)
      #expect(try writer.acceptStep(99, accountID: 1) == false)
      #expect(try writer.acceptStep(101, accountID: 1) == true)
      #expect(try writer.acceptStep(101, accountID: 1) == false)
      #expect(try writer.useRecoveryCode(accountID: 1, hash: codes[0], at: noon) == true)
      #expect(try writer.useRecoveryCode(accountID: 1, hash: codes[0], at: noon) == false)
      #expect(try writer.hasRecoveryCode(accountID: 1, hash: codes[0]) == false)
      #expect(try writer.hasRecoveryCode(accountID: 1, hash: codes[1]) == true)
      #expect(try writer.recoveryCodesLeft(accountID: 1) == 9)
      #expect(try writer.secondFactor(accountID: 1)?.lastStep == 101)
      // A PostgreSQL store's server keeps the secrets: its hosts need no key file.
      #expect(
        try writer.secondFactorKeyIDs() == (backend == .postgres ? [] : ["0123456789abcdef"]))
      try writer.replaceRecoveryCodes(accountID: 1, hashes: [codes[0]])
      #expect(try writer.recoveryCodesLeft(accountID: 1) == 1)
      #expect(try writer.removeSecondFactor(accountID: 1) == true)
      #expect(try writer.recoveryCodesLeft(accountID: 1) == 0)
      #expect(try writer.removeSecondFactor(accountID: 1) == false)
    }
  }

  /// Deleting an account deletes its sessions, second factor and codes; a reset deletes all.
  @Test(arguments: Backend.allCases) func deletionCascades(_ backend: Backend) throws {
    let (store, cleanup, bob) = try activated(backend)
    defer { cleanup() }
    try store.write { writer throws(AccountsError) in
      _ = try writer.startSession(newSession(1, account: bob, at: noon))
      _ = try writer.startSession(newSession(2, account: 1, at: noon))
      try writer.storeSecondFactor(
        StoredSecondFactor(
          accountID: bob, sealedSecret: [UInt8](repeating: 9, count: 48),
          keyID: "0123456789abcdef", lastStep: 1, enabledAt: noon),
        recoveryCodeHashes: [[UInt8](repeating: 5, count: 32)])
      guard let account = try writer.account(id: bob) else { throw .noSuchAccount("bob") }
      try writer.delete(account)
    }
    try store.read { reader throws(AccountsError) in
      #expect(try reader.session(tokenHash: [UInt8](repeating: 1, count: 32)) == nil)
      #expect(try reader.secondFactor(accountID: bob) == nil)
      #expect(try reader.recoveryCodesLeft(accountID: bob) == 0)
    }
    #expect(try store.consistencyProblems() == [])
    try store.write { writer throws(AccountsError) in _ = try writer.makePublic(at: noon) }
    try store.read { reader throws(AccountsError) in
      #expect(try reader.session(tokenHash: [UInt8](repeating: 2, count: 32)) == nil)
    }
  }
}
