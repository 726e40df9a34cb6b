import AccountsCore
import AccountsTestSupport
import Foundation
import Testing

@testable import AccountsPostgres

/// Rolling upgrades of a PostgreSQL store: only `store upgrade` migrates an existing schema,
/// expansions keep the release before working, contract steps wait for `--contract`.
@Suite("PostgreSQL store upgrades")
struct PostgresUpgradeTests {
  /// A release after this one, with an expansion and a contract step of its own.
  static let later =
    postgresMigrations + [
      PostgresMigration(
        ("v9001", "CREATE TABLE accounts.later_table (id integer PRIMARY KEY);"), .expand,
        release: "1.3.0"),
      PostgresMigration(
        ("v9002", "ALTER TABLE accounts.later_table ADD COLUMN note text NOT NULL;"), .contract,
        release: "1.3.0"),
    ]

  /// A store of `uri` for a program of `release` that knows `migrations`.
  static func store(_ uri: String, _ migrations: [PostgresMigration], release: String)
    -> PostgresStore
  {
    let store = PostgresStore(uri: uri)
    store.migrations = migrations
    store.release = release
    return store
  }

  static func psql(_ uri: String, _ sql: String) throws -> String {
    let result = try runTool(
      "/usr/bin/psql", ["-qAt", "-v", "ON_ERROR_STOP=1", "-d", uri, "-c", sql])
    #expect(result.status == 0, "\(result.output)")
    return result.output
  }

  /// A store of the release before (every step to "v17") is used by no command of this one
  /// until `store upgrade` applies this release's expansions ("v18" on); reading and writing say
  /// to upgrade, and change nothing.
  @Test func olderStoreWaitsForStoreUpgrade() throws {
    let (uri, drop) = try temporaryPostgresDatabase()
    defer { drop() }
    let previous = Array(postgresMigrations.prefix { $0.identifier != "v18" })
    _ = try Self.store(uri, previous, release: "1.1.0").opened(for: .readWrite)
    let location = StoreLocation.shown(uri)

    #expect(throws: StoreError.upgradeNeeded(location: location)) {
      try PostgresStore(uri: uri).opened(for: .readWrite)
    }
    #expect(throws: StoreError.upgradeNeeded(location: location)) {
      try PostgresStore(uri: uri).status()
    }
    #expect(try Self.psql(uri, "SELECT to_regclass('accounts.schema_expansion')") == "")

    #expect(
      try PostgresStore(uri: uri).upgrade(contract: false)
        == StoreUpgrade(
          applied: ["v18", "v19", "v20", "v21", "v22", "v23"], waiting: [],
          release: AccountsRelease.version))
    #expect(
      try PostgresStore(uri: uri).upgrade(contract: true)
        == StoreUpgrade(applied: [], waiting: [], release: AccountsRelease.version))
    #expect(try PostgresStore(uri: uri).status() != nil)
    #expect(try PostgresStore(uri: uri).opened(for: .readWrite) != nil)
    #expect(
      try Self.psql(
        uri, "SELECT identifier, release FROM accounts.schema_expansion ORDER BY applied_at, 1")
        == "v18|1.2.0\nv19|1.2.0\nv20|1.2.0\nv21|1.2.0\nv22|1.2.0\nv23|1.2.0")
  }

  /// The next release's expansion keeps this one working; its contract step waits for
  /// `--contract`, after which this release is told which release the store needs.
  @Test func contractStepWaitsForContractAndRefusesTheReleaseBefore() throws {
    let (uri, drop) = try temporaryPostgresDatabase()
    defer { drop() }
    _ = try PostgresStore(uri: uri).opened(for: .readWrite)
    let location = StoreLocation.shown(uri)
    // Given a program of 1.3.0, which needs its expansion before it uses the store
    #expect(throws: StoreError.upgradeNeeded(location: location)) {
      try Self.store(uri, Self.later, release: "1.3.0").opened(for: .readWrite)
    }

    // When its owner upgrades without --contract
    #expect(
      try Self.store(uri, Self.later, release: "1.3.0").upgrade(contract: false)
        == StoreUpgrade(applied: ["v9001"], waiting: ["v9002"], release: "1.3.0"))

    // Then both releases use it: this one ignores the expansion it does not know
    #expect(try PostgresStore(uri: uri).opened(for: .readWrite) != nil)
    #expect(try Self.store(uri, Self.later, release: "1.3.0").opened(for: .readWrite) != nil)
    #expect(
      try Self.store(uri, Self.later, release: "1.3.0").upgrade(contract: false)
        == StoreUpgrade(applied: [], waiting: ["v9002"], release: "1.3.0"))

    // When the contract step runs, this release is refused, naming the release it needs
    #expect(
      try Self.store(uri, Self.later, release: "1.3.0").upgrade(contract: true)
        == StoreUpgrade(applied: ["v9002"], waiting: [], release: "1.3.0"))
    #expect(
      try Self.psql(uri, "SELECT release FROM accounts.schema_migration WHERE identifier = 'v9002'")
        == "1.3.0")
    #expect(throws: StoreError.needsRelease(location: location, release: "1.3.0")) {
      try PostgresStore(uri: uri).opened(for: .readOnly)
    }
    #expect(throws: StoreError.needsRelease(location: location, release: "1.3.0")) {
      try PostgresStore(uri: uri).status()
    }
    #expect(
      throws: AccountsError.storage(.needsRelease(location: location, release: "1.3.0"))
    ) {
      try PostgresStore(uri: uri).upgrade(contract: false)
    }
    #expect(try Self.store(uri, Self.later, release: "1.3.0").opened(for: .readWrite) != nil)
  }

  /// The sorting of what a store records, without a server.
  @Test func sortsRecordedMigrations() {
    let known = Self.later
    func contents(_ steps: [String: String?], _ expansions: Set<String>, _ release: String)
      -> SchemaContents
    {
      known.contents(
        of: RecordedMigrations(steps: steps, expansions: expansions), release: release
      ) { () -> Bool in true }
    }
    let before = Dictionary(
      uniqueKeysWithValues: postgresMigrations.filter { $0.kind == .contract }.map {
        ($0.identifier, String?.none)
      })
    // This program's own expansions ("v18" on), which every store of it records.
    let own = Set(postgresMigrations.filter { $0.kind == .expand }.map(\.identifier))
    #expect(contents(before, own, "1.3.0") == .older)
    #expect(contents(before, own.union(["v9001"]), "1.3.0") == .current)
    #expect(contents(before, own.union(["v9001", "v9999"]), "1.3.0") == .current)
    #expect(
      contents(before.merging(["v9002": "1.3.0"]) { a, _ in a }, own.union(["v9001"]), "1.3.0")
        == .current)
    #expect(
      contents(
        before.merging(["v9003": "1.10.0", "v9004": "1.9.0"]) { a, _ in a }, own.union(["v9001"]),
        "1.3.0") == .needsRelease("1.10.0"))
    #expect(
      contents(
        before.merging(["v9003": "1.4.0", "v9004": nil]) { a, _ in a }, own.union(["v9001"]),
        "1.3.0")
        == .newer)
    #expect(known.contents(of: nil, release: "1.3.0") { () -> Bool in false } == .absent)
    #expect(known.contents(of: nil, release: "1.3.0") { () -> Bool in true } == .foreign)
  }
}
