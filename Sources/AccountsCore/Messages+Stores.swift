import Foundation

extension Messages {
  // MARK: PostgreSQL stores and `store copy`

  /// `store copy` into a store that holds data.
  public static func copyTargetNotEmpty(_ location: String, accounts: Int, events: Int)
    -> String
  {
    "Cannot copy to \(location): it is not empty (it holds \(count(accounts, "account")) and "
      + "\(count(events, "audit event"))). Copy only into a new store."
  }
  /// `store copy` with the same store on both sides.
  public static func copyToItself(_ location: String) -> String {
    "Cannot copy \(location) onto itself: --from and --to name the same store."
  }
  /// `store copy` done.
  public static func copied(
    accounts: Int, events: Int, secondFactors: Int, from source: String, to target: String
  ) -> String {
    "Copied \(count(accounts, "account")), \(count(events, "audit event")) and "
      + "\(count(secondFactors, "second factor")) from \(source) to \(target); sessions are not "
      + "copied, so people log in again there."
  }
  /// A `--database` URI that carries a password (standard error; the command goes on).
  public static let passwordInURI =
    "Warning: the database URI holds a password, which other users can see on the command "
    + "line; keep it in ~/.pgpass instead."

  /// "1 account", "2 accounts".
  static func count(_ number: Int, _ noun: String) -> String {
    "\(number) \(noun)\(number == 1 ? "" : "s")"
  }
}
