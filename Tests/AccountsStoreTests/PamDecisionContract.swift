import AccountsCore
import AccountsStore
import AccountsTestSupport
import Foundation
import Testing

/// The repository contract for what PAM's stages and `userdb` log: a login PAM's session
/// records, the account stage's refusals, a password changed through PAM, and the user
/// records' changes.
@Suite("Repository contract: PAM's decisions and user record changes")
struct PamDecisionContract {
  let noon = Date(timeIntervalSince1970: 1_800_000_000)

  func alice(_ store: any AccountRepository) throws -> Account {
    try store.write { writer throws(AccountsError) -> Account in
      try writer.activate(
        owner: NewAccount(
          username: "Alice", usernameKey: "alice", fullName: "Alice", email: "a@example.org",
          passwordHash: "pbkdf2_sha256$1000$salt$key"), at: noon)
    }
  }

  func events(_ store: any AccountRepository) throws -> [String] {
    try store.auditEvents().map {
      "\($0.kind.rawValue) \($0.username ?? "-") \($0.detail ?? "-")@\($0.host ?? "-")"
    }
  }

  /// A login stamps the last login and logs `login_success`; a refusal logs `access_refused`
  /// and counts nothing; neither writes for an account gone, and a login none for one
  /// disabled.
  @Test(arguments: Backend.allCases) func pamDecisions(_ backend: Backend) throws {
    let (store, cleanup) = try backend.make()
    defer { cleanup() }
    var stamped = store
    stamped.writingHost = "host-1"
    let account = try alice(store)
    #expect(try store.recordPamDecision(.login, of: account, at: noon + 1, detail: "ssh-key"))
    #expect(try store.account(key: "alice")?.lastLoginAt == noon + 1)
    #expect(try store.recordPamDecision(.refused, of: account, at: noon + 2, detail: "no"))
    #expect(try store.tally(key: "alice").failures == 0)
    var other = account
    other.id += 100
    #expect(!(try store.recordPamDecision(.login, of: other, at: noon + 3, detail: "x")))
    #expect(!(try store.recordPamDecision(.refused, of: other, at: noon + 3, detail: "x")))
    var disabled = try #require(try store.account(key: "alice"))
    disabled.disabledAt = noon + 4
    try store.write { writer throws(AccountsError) in try writer.update(disabled) }
    #expect(!(try store.recordPamDecision(.login, of: account, at: noon + 5, detail: "x")))
    #expect(try store.account(key: "alice")?.lastLoginAt == noon + 1)
    #expect(
      try events(store) == [
        "login_success Alice ssh-key@host-1", "access_refused Alice no@host-1",
      ])
  }

  /// Each change of a host's user records is logged with its kind and detail, about no user.
  @Test(arguments: Backend.allCases) func userdbChanges(_ backend: Backend) throws {
    let (store, cleanup) = try backend.make()
    defer { cleanup() }
    var stamped = store
    stamped.writingHost = "host-2"
    for (offset, change) in UserdbChange.allCases.enumerated() {
      try store.recordUserdbChange(change, at: noon + Double(offset), detail: "/etc/userdb")
    }
    #expect(
      try events(store) == [
        "userdb_enabled - /etc/userdb@host-2", "userdb_disabled - /etc/userdb@host-2",
        "userdb_synced - /etc/userdb@host-2",
      ])
  }

  /// A person's own change logs `password_changed` with the detail it is given (where a change
  /// through PAM came from), and with none when given none, as a change through `accounts`
  /// (and the previous release's hosts) asks.
  @Test(arguments: Backend.allCases) func ownPasswordChangeDetail(_ backend: Backend) throws {
    let (store, cleanup) = try backend.make()
    defer { cleanup() }
    var stamped = store
    stamped.writingHost = "host-1"
    var account = try alice(store)
    let origin = "pam service=passwd rhost=203.0.113.5 tty=pts/2"
    for (offset, detail) in [(1.0, origin), (2.0, nil)] {
      let outcome = try store.changeOwnPassword(
        PasswordChangeRecord(
          expected: account, now: noon + offset,
          newHash: "pbkdf2_sha256$1000$salt$new\(Int(offset))", proof: nil, keeping: nil,
          detail: detail))
      #expect(outcome == .changed)
      account = try #require(try store.account(key: "alice"))
    }
    #expect(
      try events(store) == [
        "password_changed Alice \(origin)@host-1", "password_changed Alice -@host-1",
      ])
  }
}
