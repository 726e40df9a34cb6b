import AccountsCore
import Testing

/// The device's rules, judged once in the core on the facts every store reports.
@Suite("Store consistency")
struct StoreConsistencyTests {
  private func facts(_ state: String?, owner: Int64?, exists: Bool = false, accounts: Int = 0)
    -> DeviceFacts
  {
    DeviceFacts(state: state, ownerID: owner, ownerExists: exists, accountCount: accounts)
  }

  /// A Public device with no account and an Activated one whose owner exists break no rule.
  @Test func healthyDevicesBreakNoRule() {
    #expect(facts("Public", owner: nil).problems == [])
    #expect(facts("Activated", owner: 1, exists: true, accounts: 2).problems == [])
  }

  /// Each broken rule is named in its own words.
  @Test func brokenRulesAreNamed() {
    #expect(facts(nil, owner: nil).problems == ["no activation row"])
    #expect(facts("Public", owner: nil, accounts: 3).problems == ["Public with 3 account(s)"])
    #expect(
      facts("Activated", owner: 7, accounts: 1).problems == ["Activated with no owner account"])
    #expect(facts("Activated", owner: nil).problems == ["activation state and owner disagree"])
    #expect(
      facts("Public", owner: 1, exists: true).problems == ["activation state and owner disagree"])
    #expect(facts("Sealed", owner: nil).problems == ["activation state and owner disagree"])
  }
}
