import AccountsCore
import AccountsStore
import AccountsTestSupport
import Foundation
import Testing

/// The host part of the repository contract: every event and session records the host that
/// wrote it, and the log is searched by it.
@Suite("Repository contract: the host of events and sessions")
struct HostContract {
  let noon = Date(timeIntervalSince1970: 1_800_000_000)

  /// The events `query` selects, as (detail, host) pairs.
  func events(_ store: any AccountRepository, _ query: AuditQuery = AuditQuery()) throws
    -> [String]
  {
    try store.read { reader throws(AccountsError) -> [String] in
      var found: [String] = []
      try reader.forEachEvent(query) { event throws(AccountsError) in
        found.append("\(event.detail ?? "-")@\(event.host ?? "-")")
      }
      return found
    }
  }

  /// An event appended carries the store's writing host; one with a host of its own keeps it;
  /// with no writing host it records none.
  @Test(arguments: Backend.allCases) func eventsCarryTheHost(_ backend: Backend) throws {
    let (store, cleanup) = try backend.make()
    defer { cleanup() }
    var stamped = store
    stamped.writingHost = "host-1"
    try store.write { writer throws(AccountsError) in
      try writer.append(AuditRecord(.reset, at: noon, detail: "a"))
      try writer.append(AuditRecord(.reset, at: noon + 1, detail: "b", host: "other"))
    }
    stamped.writingHost = nil
    try store.write { writer throws(AccountsError) in
      try writer.append(AuditRecord(.reset, at: noon + 2, detail: "c"))
    }
    #expect(try events(store) == ["a@host-1", "b@other", "c@-"])
  }

  /// `host` keeps the events of exactly that host, and combines with the other filters.
  @Test(arguments: Backend.allCases) func filterByHost(_ backend: Backend) throws {
    let (store, cleanup) = try backend.make()
    defer { cleanup() }
    let script: [(AuditEventKind, String, String?, TimeInterval)] = [
      (.loginFailure, "bob", "host-1", 1), (.loginFailure, "bob", "host-2", 2),
      (.loginSuccess, "bob", "host-1", 3), (.loginFailure, "alice", "host-1", 4),
      (.loginFailure, "bob", nil, 5), (.loginFailure, "bob", "Host-1", 6),
      (.loginFailure, "bob", "host-1", 7),
    ]
    for (kind, key, host, offset) in script {
      var writing = store
      writing.writingHost = host
      try store.write { writer throws(AccountsError) in
        try writer.append(
          AuditRecord(
            kind, at: noon + offset, username: key, usernameKey: key, detail: "n\(Int(offset))"))
      }
    }
    #expect(
      try events(store, AuditQuery(host: "host-1"))
        == ["n1@host-1", "n3@host-1", "n4@host-1", "n7@host-1"])
    #expect(try events(store, AuditQuery(host: "host-2")) == ["n2@host-2"])
    #expect(try events(store, AuditQuery(host: "host")) == [])
    #expect(
      try events(
        store,
        AuditQuery(usernameKey: "bob", kind: .loginFailure, since: noon + 2, host: "host-1"))
        == ["n7@host-1"])
    #expect(
      try events(store, AuditQuery(kind: .loginFailure, host: "host-1", limit: 2))
        == ["n4@host-1", "n7@host-1"])
  }

  /// A session started carries the writing host, read back by token, id and in the listing.
  @Test(arguments: Backend.allCases) func sessionsCarryTheHost(_ backend: Backend) throws {
    let (store, cleanup) = try backend.make()
    defer { cleanup() }
    var stamped = store
    stamped.writingHost = "host-2"
    let started = try store.write { writer throws(AccountsError) -> Session in
      _ = try writer.activate(
        owner: NewAccount(
          username: "alice", usernameKey: "alice", fullName: "Alice", email: "a@example.org",
          passwordHash: "pbkdf2_sha256$1000$salt$key"), at: noon)
      return try writer.startSession(
        NewSession(
          tokenHash: [UInt8](repeating: 7, count: 32), accountID: 1, createdAt: noon,
          expiresAt: noon + 86_400, idleSeconds: 3600, secondFactor: false))
    }
    #expect(started.host == "host-2")
    try store.read { reader throws(AccountsError) in
      #expect(try reader.session(id: started.id) == started)
      #expect(try reader.session(tokenHash: [UInt8](repeating: 7, count: 32))?.host == "host-2")
      var hosts: [String?] = []
      try reader.forEachSession(accountID: nil, liveAt: noon + 60) {
        listing throws(AccountsError) in hosts.append(listing.session.host)
      }
      #expect(hosts == ["host-2"])
    }
  }

  /// A host longer than 253 characters is refused by the store's own schema.
  @Test(arguments: Backend.allCases) func schemaRefusesALongHost(_ backend: Backend) throws {
    let (store, cleanup) = try backend.make()
    defer { cleanup() }
    var stamped = store
    stamped.writingHost = String(repeating: "h", count: 254)
    #expect(throws: AccountsError.self) {
      try store.write { writer throws(AccountsError) in
        try writer.append(AuditRecord(.reset, at: noon))
      }
    }
    #expect(try events(store) == [])
  }
}
