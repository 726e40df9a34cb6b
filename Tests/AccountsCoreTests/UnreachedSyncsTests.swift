import AccountsCore
import AccountsTestSupport
import FoundationEssentials
import Testing

/// The syncs a host could not bring to the server: a reason kept short, on one line and
/// escaped; the text of the host's file read back as written; and `store health`'s problem.
@Suite("Unreached syncs")
struct UnreachedSyncsTests {
  let now = Date(timeIntervalSince1970: 1_800_000_000)

  /// A reason's newlines become spaces, its controls and backslashes visible escapes; a long
  /// one ends at the limit with an ellipsis.
  @Test func reasonIsBoundedAndEscaped() {
    #expect(UnreachedSyncs.bounded("a\nb\r\nc") == "a b c")
    #expect(UnreachedSyncs.bounded("\u{1b}[31mred\\u{1b}") == "\\u{1b}[31mred\\\\u{1b}")
    let long = String(repeating: "x", count: 500)
    let bounded = UnreachedSyncs.bounded(long)
    #expect(bounded.count == UnreachedSyncs.reasonLength)
    #expect(bounded == String(repeating: "x", count: UnreachedSyncs.reasonLength - 1) + "…")
    #expect(UnreachedSyncs.bounded(bounded) == bounded)
    let record = UnreachedSyncs(host: "web-1", count: 1, first: now, last: now, reason: long)
    #expect(record.reason == bounded)
  }

  /// The file's text reads back as the same record; a changed header, a count out of range,
  /// times out of order or a line too many read as nothing.
  @Test func textRoundTrip() {
    // Given two syncs that could not reach the server, the last for an odd reason
    let first = UnreachedSyncs(
      host: "web-1", count: 1, first: now, last: now, reason: "Cannot connect: refused.")
    let record = first.adding(reason: "line one\nline\u{7}two", at: now.addingTimeInterval(90))
    // Then the text is a header and one line a field
    #expect(
      record.text
        == "accounts unreached syncs 1\nhost web-1\ncount 2\nfirst 2027-01-15T08:00:00.000Z\n"
        + "last 2027-01-15T08:01:30.000Z\nreason line one line\\u{7}two\n")
    // And it reads back
    #expect(UnreachedSyncs(text: record.text) == record)
    for damaged in [
      record.text.replacingOccurrences(of: "syncs 1", with: "syncs 2"),
      record.text.replacingOccurrences(of: "count 2", with: "count 0"),
      record.text.replacingOccurrences(
        of: "first 2027-01-15T08:00", with: "first 2027-01-16T08:00"),
      record.text + "extra\n", "",
    ] {
      #expect(UnreachedSyncs(text: damaged) == nil)
    }
  }

  /// Reported within --unreached-hours: a problem in one sentence, the count, the first and last
  /// time and the reason; reported earlier: none.
  @Test func healthProblem() {
    let unreached = UnreachedReport(
      count: 40, first: now.addingTimeInterval(-7200), last: now.addingTimeInterval(-3600),
      reason: "Cannot connect to the server.", reportedAt: now.addingTimeInterval(-1800))
    let facts = StoreHealthFacts(
      now: now, schema: .current, storeSchema: 23, programSchema: 23, rolesAppliedAt: nil,
      migratedAt: nil, generation: 0, failedLogins: 0,
      hosts: [HostHealthFacts(name: "web-1", keepsRecords: false, unreached: unreached)])
    let problems = StoreHealth.problems(facts, HealthThresholds())
    #expect(
      problems.map(Messages.healthProblem) == [
        "web-1 could not reach the server 40 times between 2027-01-15T06:00:00.000Z and "
          + "2027-01-15T07:00:00.000Z, last: Cannot connect to the server."
      ])
    #expect(StoreHealth.status(problems) == .refused)
    #expect(StoreHealth.problems(facts, HealthThresholds(unreachedHours: 0)).isEmpty)
  }

  /// A sync that could not reach the server is counted (the first and last time, the last
  /// reason); a sync under another host name starts again; the next report written carries
  /// them and forgets them.
  @Test func keptUntilReported() throws {
    // Given a host whose server is away twice, a minute apart
    let world = try World()
    let kept = MemoryUnreachedSyncs()
    var env = world.environment(ScriptedConsole([]))
    env.unreachedSyncs = kept
    env.hostName = "web-1"
    let away = AccountsError.storage(
      .cannotConnect(location: "postgresql:///db", server: "at here:5432", reason: "refused"))
    HostReporting.failed(env, away, release: "1.2.0")
    world.clock.advance(60)
    HostReporting.failed(env, .serverAway(location: "postgresql:///db"), release: "1.2.0")
    // Then both are kept, the last reason with them
    #expect(
      kept.kept
        == UnreachedSyncs(
          host: "web-1", count: 2, first: start, last: start.addingTimeInterval(60),
          reason: AccountsError.serverAway(location: "postgresql:///db").description))
    // And a sync that reached the server reports them (this store takes every report)
    HostReporting.failed(env, .userdbBehind(folder: "/etc/userdb", reason: "x"), release: "1")
    #expect(kept.kept == nil)
    // And another host name's sync does not add to this one's
    kept.kept = UnreachedSyncs(host: "web-2", count: 5, first: start, last: start, reason: "r")
    HostReporting.failed(env, away, release: "1.2.0")
    #expect(kept.kept?.host == "web-1")
    #expect(kept.kept?.count == 1)
  }
}
