import FoundationEssentials

/// What a store found when it checked itself: the facts the device's rules are judged on.
public struct ConsistencyFacts: Sendable, Equatable {
  /// The backend's own integrity problems (SQLite's integrity and foreign key checks), in its
  /// words; empty when it found none.
  public var integrityProblems: [String]
  /// The device as stored; nil when the store holds no schema yet (nothing to judge).
  public var device: DeviceFacts?

  public init(integrityProblems: [String] = [], device: DeviceFacts?) {
    self.integrityProblems = integrityProblems
    self.device = device
  }
}

/// The stored device, as the device's rules need it.
public struct DeviceFacts: Sendable, Equatable {
  /// The activation row's state as stored; nil when there is no activation row.
  public var state: String?
  /// The owner the activation row names, if any.
  public var ownerID: Int64?
  /// True when an account with the id `ownerID` exists.
  public var ownerExists: Bool
  /// How many accounts there are.
  public var accountCount: Int

  public init(state: String?, ownerID: Int64?, ownerExists: Bool, accountCount: Int) {
    self.state = state
    self.ownerID = ownerID
    self.ownerExists = ownerExists
    self.accountCount = accountCount
  }

  /// What breaks the device's rules: a Public device keeps no account and names no owner; an
  /// Activated one names an owner that exists (so it has at least one account).
  public var problems: [String] {
    switch (state, ownerID) {
    case (nil, _): return [Messages.consistencyNoActivationRow]
    case (ActivationState.publicState.rawValue?, nil) where accountCount != 0:
      return [Messages.consistencyPublicWithAccounts(accountCount)]
    case (ActivationState.publicState.rawValue?, nil): return []
    case (ActivationState.activated.rawValue?, .some):
      return ownerExists ? [] : [Messages.consistencyActivatedWithoutOwner]
    default: return [Messages.consistencyStateAndOwnerDisagree]
    }
  }
}

extension AccountRepository {
  /// What is wrong with the stored data (nothing, for a healthy store): the backend's own
  /// integrity problems, then the device's rules its facts break.
  public func consistencyProblems() throws(AccountsError) -> [String] {
    let facts = try consistencyFacts()
    return facts.integrityProblems + (facts.device?.problems ?? [])
  }
}
