import FoundationEssentials

/// What a store's schema holds, as far as accounts is concerned, judged by the migration
/// identifiers it records against those this build knows.
public enum SchemaContents: Sendable, Equatable {
  /// No migration record and no table: nothing stored yet.
  case absent
  /// Tables but no migration record: another program's.
  case foreign
  /// Some of this build's migrations, not all.
  case older
  /// Every migration this build knows.
  case current
  /// A migration this build does not know: a newer accounts wrote it.
  case newer
  /// A contract step this build does not know, of the release given (a PostgreSQL store
  /// upgraded past this build's window): that release or a later one uses it.
  case needsRelease(String)

  /// Sorts what a store found: `recorded`, the identifiers of the migrations it holds (nil when
  /// it has no migration record at all), against `known`, this build's migrations in order;
  /// `hasTables` is asked only when there is no migration record.
  public static func sorting<Failure: Error>(
    known: [String], recorded: Set<String>?, hasTables: () throws(Failure) -> Bool
  ) throws(Failure) -> SchemaContents {
    guard let recorded else { return try hasTables() ? .foreign : .absent }
    if !recorded.isSubset(of: known) { return .newer }
    if Set(known).isSubset(of: recorded) { return .current }
    return .older
  }

  /// The refusal these contents call for whoever opens the store at `location`, if any;
  /// `schema` names the schema that holds the store where it has one (PostgreSQL), so that
  /// another program's is refused by that name.
  public func refusal(location: String, schema: String? = nil) -> StoreError? {
    switch self {
    case .foreign:
      guard let schema else { return .foreignDatabase(location: location) }
      return .foreignSchema(location: location, schema: schema)
    case .newer: return .newerSchema(location: location)
    case .needsRelease(let release): return .needsRelease(location: location, release: release)
    case .absent, .older, .current: return nil
    }
  }
}
