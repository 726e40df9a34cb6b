import AccountsCrypto
import FoundationEssentials

/// `accounts user ssh-key add|list|remove` (administrator): an account's SSH public keys, which
/// its user record carries for sshd (`userdb ssh-authorized-keys`).
public enum SSHKeyFlow {
  /// Adds every key of `text` (authorized_keys lines; all or none: one refused line refuses the
  /// whole input); returns the sentences said.
  @discardableResult
  public static func add(_ env: AccountsEnvironment, username: String, text: String)
    throws(AccountsError) -> [String]
  {
    let keys = try SSHKeyParser.keys(in: text) { blob throws(AccountsError) in
      SSHKeyParser.fingerprint(
        digest: try hashing { () throws(CryptoError) in try SHA256.hash(blob) })
    }
    guard !keys.isEmpty else { throw .noSSHKeys }
    let said = try AccountChange.run(env, username: username) {
      writer, account throws(AccountsError) -> [String] in
      let now = env.now()
      var said: [String] = []
      for key in keys {
        guard try writer.insertSSHKey(key, accountID: account.id, at: now) else {
          said.append(Messages.sshKeyAlreadyThere(account.username, fingerprint: key.fingerprint))
          continue
        }
        try writer.append(
          AuditRecord(
            .sshKeyAdded, at: now, username: account.username, usernameKey: account.usernameKey,
            detail: Messages.detailSSHKey(type: key.type, fingerprint: key.fingerprint)))
        said.append(Messages.sshKeyAdded(account.username, fingerprint: key.fingerprint))
      }
      return said
    }
    said.forEach(env.console.output)
    return said
  }

  /// The account's keys, oldest first, with their sizes.
  public static func list(_ env: AccountsEnvironment, username: String) throws(AccountsError)
    -> [StoredSSHKey]
  {
    let (name, key) = try DetailRules.username(.text(username))
    guard let store = try env.readableStore() else { throw .noSuchAccount(name) }
    let stored = try store.read { reader throws(AccountsError) -> [StoredSSHKey] in
      guard let account = try reader.account(key: key) else { throw .noSuchAccount(name) }
      return try reader.sshKeys(accountID: account.id)
    }
    return stored.map { item in
      var item = item
      if case .success(let parsed) = SSHKeyParser.parse(item.key.line) {
        item.key.bits = parsed.bits
      }
      return item
    }
  }

  /// Removes the account's key of fingerprint `fingerprint`; returns the sentence said.
  @discardableResult
  public static func remove(_ env: AccountsEnvironment, username: String, fingerprint: String)
    throws(AccountsError) -> String
  {
    let said = try AccountChange.run(env, username: username) {
      writer, account throws(AccountsError) -> String in
      guard try writer.deleteSSHKey(accountID: account.id, fingerprint: fingerprint) else {
        throw .noSuchSSHKey(username: account.username, fingerprint: fingerprint)
      }
      try writer.append(
        AuditRecord(
          .sshKeyRemoved, at: env.now(), username: account.username,
          usernameKey: account.usernameKey,
          detail: Messages.detailSSHKey(type: nil, fingerprint: fingerprint)))
      return Messages.sshKeyRemoved(account.username, fingerprint: fingerprint)
    }
    env.console.output(said)
    return said
  }
}
