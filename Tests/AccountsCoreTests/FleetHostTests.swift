import AccountsCore
import FoundationEssentials
import Testing

/// `store hosts`: which names a host may have, its default role, and how a host is printed.
@Suite("Fleet hosts")
struct FleetHostTests {
  /// A host name's label: lower-case letters, digits and inner `-`, 1 to 63 of them.
  @Test(arguments: ["a", "box-1", "7", "web-01-paris", String(repeating: "b", count: 63)])
  func usableNames(_ name: String) {
    #expect(FleetHost.isUsableName(name))
  }

  /// Upper case, `_`, `.`, a space, an edge `-`, nothing, too long, or beyond ASCII: refused.
  @Test(arguments: [
    "", "Box-1", "box_1", "box.example.org", "box 1", "-box", "box-", "bóx",
    String(repeating: "b", count: 64), "box\"1",
  ])
  func unusableNames(_ name: String) {
    #expect(!FleetHost.isUsableName(name))
  }

  /// Without --role, the role is accounts_host_NAME.
  @Test func defaultRole() {
    #expect(FleetHost.defaultRole(for: "box-1") == "accounts_host_box-1")
  }

  /// `list`'s line and JSON: every key, the last event `-` (text) or null (JSON) before one.
  @Test func presentation() {
    let made = Date(timeIntervalSince1970: 1_800_000_000)
    let fresh = FleetHost(name: "box-1", role: "accounts_host_box-1", madeAt: made)
    #expect(
      FleetHostPresentation.json(fresh)
        == #"{"name":"box-1","role":"accounts_host_box-1","madeAt":"2027-01-15T08:00:00.000Z","#
        + #""lastEvent":null}"#)
    #expect(
      FleetHostPresentation.line(fresh)
        == "box-1                 accounts_host_box-1               2027-01-15T08:00:00.000Z  -")
    let seen = FleetHost(
      name: "box-1", role: "r", madeAt: made, lastEventAt: made.addingTimeInterval(1.5))
    #expect(FleetHostPresentation.json(seen).hasSuffix(#""lastEvent":"2027-01-15T08:00:01.500Z"}"#))
  }
}
