import Dispatch
import FoundationEssentials

/// A name service's answers for many names or numbers, looked up at once on every processor,
/// then given from memory; anything not looked up is asked of the service itself.
///
/// Each lookup of libnss-systemd opens its six drop-in folders (about 100 µs), so the 400,000 a
/// `userdb enable` of 100,000 accounts needs (a uid and a gid free for each, then its name
/// unknown as a user and as a group) are most of its time when asked one by one. NSS lookups
/// are thread-safe (`getpwnam_r` and the others), and the answers are those the same lookups
/// would give one by one a moment later.
struct PrefetchedNames: NameService {
  let base: any NameService
  private var users: [String: Int64?] = [:]
  private var groups: [String: Int64?] = [:]
  private var knownNumbers: [Int64: Bool] = [:]

  /// The answers for `userNames` (as a user and as a group), `groupNames` (as a group) and the
  /// numbers `numbers` (whether some user or group has them).
  init(
    _ base: any NameService, userNames: [String] = [], groupNames: [String] = [],
    numbers: ClosedRange<Int64>? = nil
  ) {
    self.base = base
    let numbers = numbers.map(Array.init) ?? []
    let userAnswers = Self.inParallel(userNames) {
      (base.uid(ofUser: $0), base.gid(ofGroup: $0))
    }
    let groupAnswers = Self.inParallel(groupNames) { base.gid(ofGroup: $0) }
    let numberAnswers = Self.inParallel(numbers) { base.knowsUID($0) || base.knowsGID($0) }
    for (name, answer) in zip(userNames, userAnswers) {
      users[name] = .some(answer.0)
      groups[name] = .some(answer.1)
    }
    for (name, answer) in zip(groupNames, groupAnswers) { groups[name] = .some(answer) }
    for (number, known) in zip(numbers, numberAnswers) { knownNumbers[number] = known }
  }

  func uid(ofUser name: String) -> Int64? { users[name] ?? base.uid(ofUser: name) }
  func gid(ofGroup name: String) -> Int64? { groups[name] ?? base.gid(ofGroup: name) }
  func knowsUID(_ number: Int64) -> Bool {
    knownNumbers[number] == true || (knownNumbers[number] == nil && base.knowsUID(number))
  }
  func knowsGID(_ number: Int64) -> Bool {
    knownNumbers[number] == true || (knownNumbers[number] == nil && base.knowsGID(number))
  }
  func isLocalUser(_ name: String) -> Bool { base.isLocalUser(name) }
  func hasUserRecord(named name: String, uid: Int64) -> Bool {
    base.hasUserRecord(named: name, uid: uid)
  }

  /// `answer` for each of `items`, in their order, asked on every processor at once (in
  /// slices, so that a processor stays on one part of the list).
  static func inParallel<Item: Sendable, Answer: Sendable>(
    _ items: [Item], _ answer: @escaping @Sendable (Item) -> Answer
  ) -> [Answer] {
    guard items.count > 1 else { return items.map(answer) }
    var answers = [Answer?](repeating: nil, count: items.count)
    let slices = min(items.count, 64)
    answers.withUnsafeMutableBufferPointer { buffer in
      let results = Slots(base: buffer.baseAddress)
      DispatchQueue.concurrentPerform(iterations: slices) { slice in
        let start = items.count * slice / slices
        let end = items.count * (slice + 1) / slices
        for index in start..<end { results.base?[index] = answer(items[index]) }
      }
    }
    return answers.compactMap { $0 }
  }
}

/// The answers' slots, each written by exactly one slice of `inParallel`.
private struct Slots<Answer>: @unchecked Sendable {
  let base: UnsafeMutablePointer<Answer?>?
}
