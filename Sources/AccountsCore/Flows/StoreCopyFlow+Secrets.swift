import FoundationEssentials

/// How `store copy` carries a second factor's secret between stores that keep it differently.
///
/// A store whose server keeps the secrets (PostgreSQL, migration "v17") gives each in the clear
/// under `StoredSecondFactor.serverKeyID`, and takes one so to encrypt it itself. An SQLite
/// target seals such a secret under its own key file (made if missing); a secret an SQLite source
/// sealed under its key file is opened with it for a server to keep, and otherwise copied as it
/// is (one a server still holds sealed under a key file waits for `store second-factors
/// import-key`).
extension StoreCopyFlow {
  /// The row of `second_factor` (account id, sealed secret, key id, last step, time) as the
  /// target keeps it.
  static func carried(
    _ values: [StoreValue], source: AccountsEnvironment, target: AccountsEnvironment,
    fromServer: Bool, toServer: Bool
  ) throws(AccountsError) -> [StoreValue] {
    guard let factor = StoredSecondFactor(secretOf: values) else { return values }
    var carried = values
    if factor.isServerHeld {
      if toServer { return values }
      let key = try target.keys.keyMakingIfNeeded()
      carried[1] = .blob(
        try SecondFactorGate.seal(factor.sealedSecret, accountID: factor.accountID, key: key))
      carried[2] = .text(key.id)
    } else if toServer && !fromServer {
      carried[1] = .blob(try SecondFactorGate.unseal(factor, keys: source.keys))
      carried[2] = .text(StoredSecondFactor.serverKeyID)
    }
    return carried
  }
}
