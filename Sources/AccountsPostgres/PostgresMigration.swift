import AccountsCore

/// One PostgreSQL migration: its identifier, its SQL, its kind and the release that brought it.
///
/// A store is upgraded by its owner (`accounts store upgrade`) while the hosts still run the
/// release before: an expansion keeps that release working, a contract step may not, so it waits
/// for `--contract`, run once every host runs the release that brought it.
struct PostgresMigration: Sendable {
  /// What a migration does to the releases before it.
  enum Kind: Sendable, Equatable {
    /// Only adds (tables, nullable or defaulted columns, functions or overloads, grants, audit
    /// kinds): the release before keeps working. Recorded in `accounts.schema_expansion`,
    /// which no release before rolling upgrades reads, so that it sees its store as current.
    case expand
    /// Changes or drops what an earlier release uses. Recorded in `accounts.schema_migration`
    /// (with its release), where a program that does not know it refuses the store.
    case contract
  }

  /// Its name, recorded once it ran: `v18`.
  let identifier: String
  /// What it runs, in the migration's transaction.
  let sql: String
  /// Whether the release before keeps working after it.
  let kind: Kind
  /// The release that brought it: what a program too old for it is told to install.
  let release: String

  /// The migration `migration` (its identifier and SQL) of `kind`, brought by `release`.
  init(_ migration: (identifier: String, sql: String), _ kind: Kind, release: String) {
    identifier = migration.identifier
    sql = migration.sql
    self.kind = kind
    self.release = release
  }
}

/// What a store records of the migrations it had, from its two tables.
struct RecordedMigrations: Equatable, Sendable {
  /// `accounts.schema_migration`: each identifier with the release it names (nil for the
  /// steps recorded before releases were, and wherever the column was not read).
  var steps: [String: String?]
  /// `accounts.schema_expansion`'s identifiers (empty before migration "v18" made it).
  var expansions: Set<String>

  /// Both tables' identifiers, read as the comma-separated lists of `string_agg` (nil: none).
  init(steps: String?, expansions: String?) {
    let split = { (list: String?) in (list ?? "").split(separator: ",").map(String.init) }
    self.steps = Dictionary(split(steps).map { ($0, nil) }, uniquingKeysWith: { a, _ in a })
    self.expansions = Set(split(expansions))
  }

  /// The identifiers and releases as read row by row.
  init(steps: [String: String?], expansions: Set<String>) {
    self.steps = steps
    self.expansions = expansions
  }
}

extension [PostgresMigration] {
  /// What a store that records `recorded` (nil: no migration table) is to a program of
  /// `release` that has these migrations; `hasTables` is asked only when there is no record.
  ///
  /// A step it does not know in `schema_migration` is a contract step of a later release: the
  /// store needs that release (or, where none is recorded, a newer accounts). An expansion it
  /// does not know is a later release's addition, within the window: ignored. Every expansion
  /// of its own must be there, and every contract step but its own release's, which wait for
  /// `store upgrade --contract` (this release works with and without them).
  func contents<Failure: Error>(
    of recorded: RecordedMigrations?, release: String, hasTables: () throws(Failure) -> Bool
  ) throws(Failure) -> SchemaContents {
    guard let recorded else { return try hasTables() ? .foreign : .absent }
    let known = Set(map(\.identifier))
    let unknown = recorded.steps.filter { !known.contains($0.key) }
    if !unknown.isEmpty {
      let releases = unknown.values.map { $0 ?? nil }
      guard let needed = releases.compactMap({ $0 }).max(by: AccountsRelease.precedes),
        !releases.contains(nil)
      else { return .newer }
      return .needsRelease(needed)
    }
    let missing = pending(in: recorded).filter { $0.kind == .expand || $0.release != release }
    return missing.isEmpty ? .current : .older
  }

  /// The migrations `recorded` lacks, in order.
  func pending(in recorded: RecordedMigrations) -> [PostgresMigration] {
    filter { recorded.steps[$0.identifier] == nil && !recorded.expansions.contains($0.identifier) }
  }

  /// What `accounts store upgrade` applies to a store that lacks `pending`: all of them with
  /// `contract`; otherwise those before the first contract step of `release` (the rest wait
  /// for every host to run it).
  func applying(_ pending: [PostgresMigration], release: String, contract: Bool)
    -> (apply: [PostgresMigration], wait: [PostgresMigration])
  {
    guard !contract,
      let first = pending.firstIndex(where: { $0.kind == .contract && $0.release == release })
    else { return (pending, []) }
    return (Array(pending[..<first]), Array(pending[first...]))
  }
}
