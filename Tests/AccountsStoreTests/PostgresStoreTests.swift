import AccountsCore
import AccountsTestSupport
import Foundation
import Testing

@testable import AccountsPostgres

/// What only the PostgreSQL store has to prove; the behaviours both stores share are
/// the repository contract's.
@Suite("PostgreSQL store")
struct PostgresStoreTests {
  /// `schema-postgresql.sql` is exactly what the migrations make: the same `pg_dump` of the
  /// schema `accounts` (tables, constraints, indexes, functions, triggers) and the same kinds.
  @Test func matchesSchemaFile() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
    let (migrated, dropMigrated) = try temporaryPostgresDatabase()
    defer { dropMigrated() }
    let (applied, dropApplied) = try temporaryPostgresDatabase()
    defer { dropApplied() }
    _ = try PostgresStore(uri: migrated).opened(for: .readWrite)
    let psql = try runTool(
      "/usr/bin/psql",
      [
        "-qAt", "-v", "ON_ERROR_STOP=1", "-d", applied, "-f",
        root.appendingPathComponent("schema-postgresql.sql").path,
      ])
    #expect(psql.status == 0)
    func picture(_ uri: String) throws -> String {
      let dump = try runTool(
        "/usr/bin/pg_dump", ["--schema-only", "--schema=accounts", "--no-owner", "-d", uri])
      #expect(dump.status == 0)
      let kinds = try runTool(
        "/usr/bin/psql",
        ["-qAt", "-d", uri, "-c", "SELECT name FROM accounts.audit_kind ORDER BY name"])
      // pg_dump's `\restrict KEY` lines carry a random key of each run.
      let lines = dump.output.split(separator: "\n").filter {
        !$0.hasPrefix("\\restrict") && !$0.hasPrefix("\\unrestrict")
      }
      return lines.joined(separator: "\n") + "\n" + kinds.output
    }
    let fromMigrations = try picture(migrated)
    #expect(fromMigrations.contains("CREATE TABLE accounts.session"))
    #expect(fromMigrations == (try picture(applied)))
    let kinds = try runTool(
      "/usr/bin/psql", ["-qAt", "-d", migrated, "-c", "SELECT count(*) FROM accounts.audit_kind"])
    #expect(kinds.output == String(AuditEventKind.known.count))
  }

  /// Reading creates nothing; a schema `accounts` another program made, and a migration this
  /// build does not know, are refused and left as they are.
  @Test func refusesWhatIsNotOurs() throws {
    let (uri, drop) = try temporaryPostgresDatabase()
    defer { drop() }
    #expect(try PostgresStore(uri: uri).opened(for: .readOnly) == nil)
    #expect(try PostgresStore(uri: uri).status() == nil)
    let schemas = try runTool(
      "/usr/bin/psql",
      ["-qAt", "-d", uri, "-c", "SELECT count(*) FROM pg_namespace WHERE nspname = 'accounts'"])
    #expect(schemas.output == "0")

    _ = try runTool(
      "/usr/bin/psql",
      ["-qAt", "-d", uri, "-c", "CREATE SCHEMA accounts; CREATE TABLE accounts.account (x int)"])
    let location = StoreLocation.shown(uri)
    #expect(throws: StoreError.foreignSchema(location: location, schema: "accounts")) {
      try PostgresStore(uri: uri).opened(for: .readWrite)
    }
    #expect(throws: StoreError.foreignSchema(location: location, schema: "accounts")) {
      try PostgresStore(uri: uri).status()
    }

    _ = try runTool(
      "/usr/bin/psql", ["-qAt", "-d", uri, "-c", "DROP SCHEMA accounts CASCADE"])
    _ = try PostgresStore(uri: uri).opened(for: .readWrite)
    _ = try runTool(
      "/usr/bin/psql",
      ["-qAt", "-d", uri, "-c", "INSERT INTO accounts.schema_migration VALUES ('v99', now())"])
    #expect(throws: StoreError.newerSchema(location: location)) {
      try PostgresStore(uri: uri).opened(for: .readOnly)
    }
    #expect(throws: StoreError.newerSchema(location: location)) {
      try PostgresStore(uri: uri).status()
    }
  }

  /// Connections made at once in one process leave standard error where it was: each points
  /// it at /dev/null while libpq connects, and without taking turns one would put back the
  /// other's /dev/null for good (the test runner's own output went with it).
  @Test func connectionsAtOnceKeepStandardError() throws {
    let (uri, drop) = try temporaryPostgresDatabase()
    defer { drop() }
    // Read while no connection is being made (other tests connect at the same time).
    func identity() -> [UInt64] {
      standardErrorSwap.withLock { _ in
        var info = stat()
        guard fstat(STDERR_FILENO, &info) == 0 else { return [] }
        return [UInt64(info.st_dev), UInt64(info.st_ino)]
      }
    }
    let before = identity()
    for _ in 0..<20 {
      DispatchQueue.concurrentPerform(iterations: 8) { _ in
        _ = try? PostgresStore(uri: uri).status()
      }
    }
    #expect(identity() == before)
  }

  /// An unreachable server is one store error naming where it was looked for.
  @Test func namesTheServerItCannotReach() throws {
    let uri = "postgresql://alice:s3cret@127.0.0.1:1/accounts?connect_timeout=2"
    #expect {
      try PostgresStore(uri: uri).status()
    } throws: { error in
      guard case .cannotConnect(let path, let server, _) = error as? StoreError else {
        return false
      }
      return path == "postgresql://alice@127.0.0.1:1/accounts?connect_timeout=2"
        && server == "at 127.0.0.1:1"
    }
  }
}
