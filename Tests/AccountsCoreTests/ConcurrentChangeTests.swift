import AccountsCore
import AccountsStore
import AccountsTestSupport
import Foundation
import Testing

/// A login or a password change decided on an account read before a concurrent process wrote
/// it: a stronger hash of the same password (another login's rehash) is no reason to refuse; a
/// new password, a disabled or a removed account is.
@Suite("Concurrent changes")
struct ConcurrentChangeTests {
  let noon = Date(timeIntervalSince1970: 1_800_000_000)

  func store() throws -> (SQLiteStore, Account) {
    let store = try SQLiteStore.inMemory()
    try store.activate(
      NewAccount(
        username: "alice", usernameKey: "alice", fullName: "Alice", email: "a@example.org",
        passwordHash: "pbkdf2_sha256$1000$salt$key"), at: noon)
    return (store, try #require(try store.user()))
  }

  /// Another login's rehash between the check and the record: still logged in.
  @Test func rehashMeanwhileIsNoChange() throws {
    let (store, read) = try store()
    try store.updatePasswordHash(
      usernameKey: "alice", to: "pbkdf2_sha256$2000$other$stronger", at: noon + 1)
    let outcome = try LoginRecorder.recordSuccess(
      store, username: "alice", usernameKey: "alice", at: noon + 2, expected: read)
    guard case .loggedIn = outcome else {
      Issue.record("refused: \(outcome)")
      return
    }
    #expect(try store.user()?.lastLoginAt == noon + 2)
  }

  /// An administrator's new password between the check and the record: refused, logged.
  @Test func newPasswordMeanwhileRefuses() throws {
    let (store, read) = try store()
    try store.write { writer throws(AccountsError) in
      guard var account = try writer.account(key: "alice") else { throw .noSuchAccount("alice") }
      account.passwordHash = "pbkdf2_sha256$1000$new$password"
      account.passwordChangedAt = noon + 1
      try writer.update(account)
    }
    let outcome = try LoginRecorder.recordSuccess(
      store, username: "alice", usernameKey: "alice", at: noon + 2, expected: read)
    #expect(outcome == .gone)
    #expect(try store.user()?.lastLoginAt == nil)
    #expect(try store.auditEvents().last?.kind == .loginFailure)
  }

  /// A disabled account between the check and the record: refused.
  @Test func disabledMeanwhileRefuses() throws {
    let (store, read) = try store()
    try store.write { writer throws(AccountsError) in
      guard var account = try writer.account(key: "alice") else { throw .noSuchAccount("alice") }
      account.disabledAt = noon + 1
      try writer.update(account)
    }
    let outcome = try LoginRecorder.recordSuccess(
      store, username: "alice", usernameKey: "alice", at: noon + 2, expected: read)
    #expect(outcome == .gone)
  }
}
