import Foundation
import Testing

@testable import AccountsCore

/// A name service that counts what it is asked (from any thread).
final class CountingNames: NameService, @unchecked Sendable {
  let known: FakeNameService
  private let lock = NSLock()
  private var asked = 0
  init(_ known: FakeNameService) { self.known = known }
  var count: Int { lock.withLock { asked } }
  private func ask<T>(_ answer: () -> T) -> T {
    lock.withLock { asked += 1 }
    return answer()
  }
  func uid(ofUser name: String) -> Int64? { ask { known.uid(ofUser: name) } }
  func gid(ofGroup name: String) -> Int64? { ask { known.gid(ofGroup: name) } }
  func knowsUID(_ number: Int64) -> Bool { ask { known.knowsUID(number) } }
  func knowsGID(_ number: Int64) -> Bool { ask { known.knowsGID(number) } }
  func isLocalUser(_ name: String) -> Bool { ask { known.isLocalUser(name) } }
  func hasUserRecord(named name: String, uid: Int64) -> Bool {
    ask { known.hasUserRecord(named: name, uid: uid) }
  }
}

@Suite("Name service lookups asked at once")
struct PrefetchedNamesTests {
  /// Every answer is the service's own, in its place, and once looked up none is asked again;
  /// what was not looked up is asked of the service.
  @Test func answersAreTheServices() {
    let known = FakeNameService()
    for index in stride(from: 0, to: 600, by: 3) { known.users["u\(index)"] = Int64(5000 + index) }
    for index in stride(from: 0, to: 600, by: 5) { known.groups["u\(index)"] = Int64(7000 + index) }
    for index in stride(from: 0, to: 200, by: 7) { known.groups["g\(index)"] = Int64(9000 + index) }
    known.groups["elsewhere"] = 8000
    let base = CountingNames(known)
    let users = (0..<600).map { "u\($0)" }
    let groups = (0..<200).map { "g\($0)" }
    let names = PrefetchedNames(base, userNames: users, groupNames: groups, numbers: 5000...7599)
    let asked = base.count
    #expect(asked >= 600 * 2 + 200 + 2600)
    for name in users {
      #expect(names.uid(ofUser: name) == known.uid(ofUser: name))
      #expect(names.gid(ofGroup: name) == known.gid(ofGroup: name))
    }
    for name in groups { #expect(names.gid(ofGroup: name) == known.gid(ofGroup: name)) }
    for number in Int64(5000)...7599 {
      #expect(names.knowsUID(number) == (known.knowsUID(number) || known.knowsGID(number)))
    }
    #expect(base.count == asked)
    let known3 = names.uid(ofUser: "u3")
    #expect(known3 == 5003)
    let elsewhere = (names.uid(ofUser: "elsewhere"), names.knowsGID(8000))
    #expect(elsewhere.0 == nil && elsewhere.1)
    #expect(base.count == asked + 2)
  }

  /// Answers come back in the order of what was asked, however the work was split.
  @Test func answersKeepTheirOrder() {
    for count in [0, 1, 2, 63, 64, 65, 10_001] {
      let items = (0..<count).map { $0 * 3 }
      #expect(PrefetchedNames.inParallel(items) { $0 + 1 } == items.map { $0 + 1 })
    }
  }
}

extension UserRecordTests {
  /// Numbers known beyond those looked up ahead are still skipped: the system is asked about
  /// them one by one.
  @Test func numbersBeyondTheLookAhead() throws {
    try add("bob", fullName: "Bob")
    for number in 21000...21099 { names.users["system\(number)"] = Int64(number) }
    _ = try UserdbFlow.enable(
      env(), folder: "/run/userdb", range: PosixIDRange(parsing: "21000-21200"))
    #expect(folders.object("Alice.user")?["uid"] as? Int == 21100)
    #expect(folders.object("bob.user")?["uid"] as? Int == 21101)
  }
}
