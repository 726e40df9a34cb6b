import FoundationEssentials

/// `accounts store second-factors import-key FILE`: a store whose secrets were sealed under a
/// key file hands them to its server, which encrypts them itself (PostgreSQL, migration "v17").
///
/// Every secret sealed under the file's key is opened and handed over in one transaction: all
/// of them or none. A secret sealed under another key stops it (nothing moved), so that no one
/// loses a second factor; afterwards no host needs the key file.
public enum SecondFactorKeyImport {
  /// Moves every secret sealed under `keys`' key into the server's keeping; how many.
  public static func run(_ env: AccountsEnvironment, keys: any SealingKeyStore)
    throws(AccountsError) -> Int
  {
    let store = try env.writableStore()
    guard let key = try keys.existingKey() else {
      throw .clientFile(.keyMissing(path: keys.location))
    }
    return try store.write { writer throws(AccountsError) -> Int in
      var sealed: [StoredSecondFactor] = []
      try writer.forEachRow(of: .secondFactor) { values throws(AccountsError) in
        guard let factor = StoredSecondFactor(secretOf: values), !factor.isServerHeld else {
          return
        }
        sealed.append(factor)
      }
      for factor in sealed {
        guard factor.keyID == key.id else { throw .clientFile(.wrongKey(path: keys.location)) }
        let secret = try SecondFactorGate.unseal(factor, keys: keys)
        _ = try writer.replaceSecondFactorSecret(
          accountID: factor.accountID, sealedSecret: secret, keyID: StoredSecondFactor.serverKeyID)
      }
      return sealed.count
    }
  }
}
