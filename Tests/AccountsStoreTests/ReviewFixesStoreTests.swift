import AccountsCore
import AccountsTestSupport
import Foundation
import GRDB
import Testing

@testable import AccountsStore

/// The store's side of the outside review's findings (issue 8).
@Suite("Review fixes: store")
struct ReviewFixesStoreTests {
  /// Every writing connection overwrites deleted content, whatever SQLite's build defaults to:
  /// a connection with `secure_delete` off has it on after the store's preparation.
  @Test func secureDeleteIsSetNotInherited() throws {
    let queue = try DatabaseQueue()
    try queue.writeWithoutTransaction { db in
      try db.execute(sql: "PRAGMA secure_delete = OFF")
      #expect(try Int.fetchOne(db, sql: "PRAGMA secure_delete") == 0)
      try AccountStore.prepareWriter(db)
      #expect(try Int.fetchOne(db, sql: "PRAGMA secure_delete") == 1)
      #expect(try Int.fetchOne(db, sql: "PRAGMA synchronous") == 2)
    }
  }

  /// A tampered count at Int64.max neither traps nor switches the lockout off: the attempt is
  /// counted, the name is locked, and a tampered lock count gives the longest lock.
  @Test func tamperedCountersSaturate() throws {
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("a.sqlite3").path
    let store = try #require(try AccountStore.open(path: path, access: .readWrite))
    try store.activate(alice, at: noon)
    _ = try store.recordLoginFailure(
      username: "alice", usernameKey: "alice", at: noon, policy: .standard)
    try DatabaseQueue(path: path).write { db in
      try db.execute(
        sql: "UPDATE login_throttle SET failures = ?, lockouts = ?",
        arguments: [Int64.max, Int64.max])
    }
    let later = noon.addingTimeInterval(1)
    let outcome = try store.recordLoginFailure(
      username: "alice", usernameKey: "alice", at: later, policy: .standard)
    #expect(outcome == .lockedNow(until: later.addingTimeInterval(3600)))
    #expect(
      try store.auditEvents(limit: 2).map(\.kind) == [.loginFailure, .lockout])
  }

  /// The lockout arithmetic saturates at every extreme a stored value can take.
  @Test func policyArithmeticNeverTraps() {
    let policy = LockoutPolicy.standard
    for failures in [Int.min, -1, 0, 3, 4, Int.max - 1, Int.max] {
      for lockouts in [Int.min, -1, 0, 1, 40, Int.max] {
        let tally = ThrottleState(failures: failures, lockouts: lockouts, lockedUntil: nil)
        let (next, until) = policy.tally(afterFailure: tally, at: noon)
        #expect(next.failures >= 0 && next.lockouts >= 0)
        if let until {
          let length = until.timeIntervalSince(noon)
          #expect(length >= 60 && length <= 3600)
        }
      }
    }
    #expect(policy.duration(ofLock: Int.min) == 60)
    #expect(policy.duration(ofLock: Int.max) == 3600)
  }

  /// Tallies are forgotten a day after their last failure, once no lock is in force, for every
  /// name alike (known or not, so that it reveals nothing); a lock in force is kept.
  @Test func oldTalliesExpire() throws {
    let store = try AccountStore.inMemory()
    try store.activate(alice, at: noon)
    for name in ["alice", "mallory"] {
      _ = try store.recordLoginFailure(
        username: name, usernameKey: name, at: noon, policy: .standard)
    }
    for _ in 1...5 {
      _ = try store.recordLoginFailure(
        username: "eve", usernameKey: "eve", at: noon,
        policy: LockoutPolicy(
          threshold: 5, firstLock: 172_800, longestLock: 172_800))
    }
    let nextDay = noon.addingTimeInterval(86_401)
    _ = try store.recordLoginFailure(
      username: "bob", usernameKey: "bob", at: nextDay, policy: .standard)
    #expect(try store.loginRecord(usernameKey: "alice").tally == .clear)
    #expect(try store.loginRecord(usernameKey: "mallory").tally == .clear)
    #expect(try store.loginRecord(usernameKey: "eve").tally.lock(at: nextDay) != nil)
    #expect(try store.loginRecord(usernameKey: "bob").tally.failures == 1)
  }
}

/// The path helpers answer as `dirname` and `basename` do.
@Suite("Paths")
struct PathTests {
  @Test(arguments: [
    ("/a/b/c", "/a/b", "c"), ("/a/b/", "/a", "b"), ("/a", "/", "a"), ("/", "/", "/"),
    ("a", ".", "a"), ("a/b", "a", "b"), ("//a//b//", "//a", "b"), ("/a/é é/x", "/a/é é", "x"),
  ])
  func dirnameAndBasename(_ path: String, _ folder: String, _ name: String) {
    #expect(FileSystem.folder(of: path) == folder)
    #expect(FileSystem.name(of: path) == name)
  }
}
