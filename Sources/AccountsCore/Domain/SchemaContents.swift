import Foundation

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

  /// The refusal these contents call for whoever opens the store at `location`, if any.
  public func refusal(location: String) -> StoreError? {
    switch self {
    case .foreign: return .foreignDatabase(location: location)
    case .newer: return .newerSchema(location: location)
    case .absent, .older, .current: return nil
    }
  }
}
