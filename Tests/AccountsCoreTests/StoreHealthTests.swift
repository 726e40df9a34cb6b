import AccountsCore
import FoundationEssentials
import Testing

/// `store health`'s verdict from the facts: which problems the thresholds find, and the exit
/// status they make.
@Suite("Store health")
struct StoreHealthTests {
  let now = Date(timeIntervalSince1970: 1_800_000_000)

  func minutes(_ count: Double) -> Date { now.addingTimeInterval(-count * 60) }

  /// A store whose one host synced a minute ago and holds the store's counter.
  func facts(_ hosts: [HostHealthFacts]? = nil) -> StoreHealthFacts {
    StoreHealthFacts(
      now: now, schema: .current, storeSchema: 19, programSchema: 19,
      rolesAppliedAt: minutes(60), migratedAt: minutes(120), generation: 7, failedLogins: 4,
      hosts: hosts ?? [
        HostHealthFacts(
          name: "web-1", keepsRecords: true, lastContact: minutes(1), lastSync: minutes(1),
          applied: 7, release: "1.1.0")
      ])
  }

  /// All well: no problem, exit 0.
  @Test func healthy() {
    let problems = StoreHealth.problems(facts(), HealthThresholds())
    #expect(problems.isEmpty)
    #expect(StoreHealth.status(problems) == .success)
  }

  /// Behind the store: only once its last sync is older than the grace (its timer's turn has
  /// passed); a host that never reported a sync is behind at once.
  @Test func behind() {
    // Given a host whose records hold 6 of 7, last synced 5 minutes ago
    var host = facts().hosts[0]
    host.applied = 6
    host.lastSync = minutes(5)
    // Then it is waiting for its timer at the default 10 minutes, behind at 5
    #expect(StoreHealth.problems(facts([host]), HealthThresholds()).isEmpty)
    let problems = StoreHealth.problems(facts([host]), HealthThresholds(behindMinutes: 5))
    #expect(problems == [.behind(host: "web-1", applied: 6, generation: 7, lastSync: minutes(5))])
    #expect(StoreHealth.status(problems) == .refused)
    // And one that never reported is behind (and silent) whatever the grace
    let never = HostHealthFacts(name: "web-2", keepsRecords: true)
    #expect(
      StoreHealth.problems(facts([never]), HealthThresholds(behindMinutes: 100_000)) == [
        .silent(host: "web-2", lastContact: nil),
        .behind(host: "web-2", applied: nil, generation: 7, lastSync: nil),
      ])
  }

  /// Silent: a host that keeps records, unheard from for --silent-minutes; a host without
  /// records (one with a role of its own that only logs people in) is never silent.
  @Test func silent() {
    var host = facts().hosts[0]
    host.lastContact = minutes(20)
    host.lastSync = minutes(20)
    #expect(
      StoreHealth.problems(facts([host]), HealthThresholds())
        == [.silent(host: "web-1", lastContact: minutes(20))])
    #expect(StoreHealth.problems(facts([host]), HealthThresholds(silentMinutes: 30)).isEmpty)
    host.keepsRecords = false
    #expect(StoreHealth.problems(facts([host]), HealthThresholds()).isEmpty)
  }

  /// Failing: from --failures syncs in a row on, with the last reason.
  @Test func failing() {
    var host = facts().hosts[0]
    host.failures = 2
    host.lastFailure = "The folder cannot be used."
    #expect(
      StoreHealth.problems(facts([host]), HealthThresholds())
        == [.failing(host: "web-1", failures: 2, reason: "The folder cannot be used.")])
    #expect(StoreHealth.problems(facts([host]), HealthThresholds(failures: 3)).isEmpty)
    #expect(
      Messages.healthProblem(.failing(host: "web-1", failures: 2, reason: "It failed."))
        == "web-1's last 2 syncs failed: It failed.")
  }

  /// The schema older or newer than the program's, the roles applied before the newest
  /// migration, and the failed logins from --failed-logins on.
  @Test func storeProblems() {
    var older = facts()
    older.schema = .older
    older.storeSchema = 17
    older.rolesAppliedAt = minutes(180)
    older.failedLogins = 5
    #expect(
      StoreHealth.problems(older, HealthThresholds(failedLogins: 5)) == [
        .schemaOlder(store: 17, program: 19),
        .rolesBeforeMigration(appliedAt: minutes(180), migratedAt: minutes(120)),
        .failedLogins(count: 5),
      ])
    #expect(StoreHealth.problems(older, HealthThresholds(failedLogins: 6)).count == 2)
    var newer = facts()
    newer.schema = .newer
    newer.storeSchema = 20
    #expect(
      StoreHealth.problems(newer, HealthThresholds()) == [.schemaNewer(store: 20, program: 19)])
  }

  /// The JSON form: every key, the host's own problems under it.
  @Test func json() {
    var host = facts().hosts[0]
    host.failures = 1
    host.lastFailure = "No.\u{1B}[2J"
    let shown = facts([host])
    let problems = StoreHealth.problems(shown, HealthThresholds())
    #expect(
      HealthPresentation.json(shown, problems: problems, location: "postgresql:///s")
        == #"{"healthy":false,"problems":["web-1's last sync failed: No.\u001b[2J."],"#
        + #""location":"postgresql:///s","schema":{"store":19,"program":19,"state":"current"},"#
        + #""rolesAppliedAt":"2027-01-15T07:00:00.000Z","generation":7,"#
        + #""failedLoginsLastHour":4,"hosts":[{"name":"web-1","keepsRecords":true,"#
        + #""lastContact":"2027-01-15T07:59:00.000Z","lastSync":"2027-01-15T07:59:00.000Z","#
        + #""applied":7,"release":"1.1.0","failures":1,"lastFailure":"No.\u001b[2J","#
        + #""unreached":0,"unreachedFirst":null,"unreachedLast":null,"unreachedReason":null,"#
        + #""unreachedReportedAt":null,"#
        + #""problems":["web-1's last sync failed: No.\u001b[2J."]}]}"#)
  }
}
