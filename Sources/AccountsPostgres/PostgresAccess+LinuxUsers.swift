import AccountsCore
import FoundationEssentials

// Accounts as Linux users: `userdb_setting`, `userdb_host`, `posix_id` and `ssh_key`
// (migration "v3").

extension PostgresAccess {
  func userdbSettings() throws(AccountsError) -> UserdbSettings {
    let rows = try query(
      "SELECT store_id, first_uid, last_uid FROM accounts.userdb_setting WHERE id = 1")
    guard rows.count == 1 else { throw .storage(.corrupt(location: store.location)) }
    return try decoded { () throws(PGUnreadableValue) in
      UserdbSettings(
        storeID: try rows.decode(String.self, 0, 0),
        range: PosixIDRange(
          uncheckedFirst: try rows.decode(Int64.self, 0, 1),
          last: try rows.decode(Int64.self, 0, 2)))
    }
  }

  func userdbHost(named host: String) throws(AccountsError) -> UserdbHost? {
    let rows = try query(
      """
      SELECT host, folder, accounts.stamp(enabled_at) FROM accounts.userdb_host
      WHERE host = accounts.caller_host($1)
      """, [.text(host)])
    guard rows.count == 1 else { return nil }
    return try decoded { () throws(PGUnreadableValue) in
      UserdbHost(
        host: try rows.decode(String.self, 0, 0), folder: try rows.decode(String.self, 0, 1),
        enabledAt: try rows.decode(Date.self, 0, 2))
    }
  }

  func userdbGeneration() throws(AccountsError) -> Int64 {
    let rows = try query("SELECT generation FROM accounts.userdb_generation WHERE id = 1")
    guard rows.count == 1 else { return 0 }
    return try decoded { () throws(PGUnreadableValue) in try rows.decode(Int64.self, 0, 0) }
  }

  func userdbChanges(after generation: Int64) throws(AccountsError) -> UserdbEntities {
    let rows = try query(
      """
      SELECT kind, entity_id FROM accounts.userdb_change WHERE generation > $1
      ORDER BY kind, entity_id
      """, [PGValue(generation)])
    return try decoded { () throws(PGUnreadableValue) in
      var changes = UserdbEntities()
      for row in 0..<rows.count {
        let id = try rows.decode(Int64.self, row, 1)
        if try rows.decode(String.self, row, 0) == "user" {
          changes.users.append(id)
        } else {
          changes.groups.append(id)
        }
      }
      return changes
    }
  }

  func unnumbered() throws(AccountsError) -> UserdbEntities {
    let users = try query("SELECT id FROM accounts.account WHERE uid IS NULL ORDER BY id")
    let groups = try query("SELECT id FROM accounts.account_group WHERE gid IS NULL ORDER BY id")
    return try decoded { () throws(PGUnreadableValue) in
      UserdbEntities(
        users: try (0..<users.count).map { row throws(PGUnreadableValue) in
          try users.decode(Int64.self, row, 0)
        },
        groups: try (0..<groups.count).map { row throws(PGUnreadableValue) in
          try groups.decode(Int64.self, row, 0)
        })
    }
  }

  func hasUnnumbered() throws(AccountsError) -> Bool {
    let rows = try query(
      """
      SELECT EXISTS (SELECT 1 FROM accounts.account WHERE uid IS NULL)
        OR EXISTS (SELECT 1 FROM accounts.account_group WHERE gid IS NULL)
      """)
    return try decoded { () throws(PGUnreadableValue) in try rows.decode(Bool.self, 0, 0) }
  }

  func lastPosixID(in range: PosixIDRange) throws(AccountsError) -> Int64? {
    let rows = try query(
      "SELECT max(number) FROM accounts.posix_id WHERE number BETWEEN $1 AND $2",
      [PGValue(range.first), PGValue(range.last)])
    return try decoded { () throws(PGUnreadableValue) in try rows.decode(Int64?.self, 0, 0) }
  }

  func givesPosixIDs() throws(AccountsError) -> Bool {
    let rows = try query(
      """
      SELECT EXISTS (SELECT 1 FROM accounts.userdb_host)
        OR EXISTS (SELECT 1 FROM accounts.posix_id)
      """)
    return try decoded { () throws(PGUnreadableValue) in try rows.decode(Bool.self, 0, 0) }
  }

  func mayGivePosixIDs() throws(AccountsError) -> Bool {
    let rows = try query(
      """
      SELECT has_table_privilege('accounts.posix_id', 'INSERT')
        AND has_table_privilege('accounts.home_path', 'INSERT')
        AND has_column_privilege('accounts.account', 'uid', 'UPDATE')
        AND has_column_privilege('accounts.account_group', 'gid', 'UPDATE')
      """)
    return try decoded { () throws(PGUnreadableValue) in try rows.decode(Bool.self, 0, 0) }
  }

  func homeOwner(_ path: String) throws(AccountsError) -> Int64? {
    let rows = try query("SELECT uid FROM accounts.home_path WHERE path = $1", [.text(path)])
    guard rows.count == 1 else { return nil }
    return try decoded { () throws(PGUnreadableValue) in try rows.decode(Int64.self, 0, 0) }
  }

  func sshKeys(accountID: Int64) throws(AccountsError) -> [StoredSSHKey] {
    let rows = try query(
      """
      SELECT key_type, key_data, comment, fingerprint, accounts.stamp(added_at)
      FROM accounts.ssh_key WHERE account_id = $1 ORDER BY id
      """, [PGValue(accountID)])
    return try decoded { () throws(PGUnreadableValue) in
      try (0..<rows.count).map { row throws(PGUnreadableValue) in
        StoredSSHKey(
          key: SSHKey(
            type: try rows.decode(String.self, row, 0), data: try rows.decode(String.self, row, 1),
            comment: try rows.decode(String.self, row, 2),
            fingerprint: try rows.decode(String.self, row, 3), bits: 0),
          addedAt: try rows.decode(Date.self, row, 4))
      }
    }
  }

  func setUserdbHost(_ host: UserdbHost) throws(AccountsError) {
    try query(
      """
      INSERT INTO accounts.userdb_host (host, folder, enabled_at) VALUES ($1, $2, $3::timestamptz)
      ON CONFLICT (host) DO UPDATE SET folder = excluded.folder, enabled_at = excluded.enabled_at
      """, [.text(host.host), .text(host.folder), PGValue(host.enabledAt)])
  }

  func removeUserdbHost(named host: String) throws(AccountsError) -> Bool {
    try query("DELETE FROM accounts.userdb_host WHERE host = $1", [.text(host)]).changed == 1
  }

  func setPosixIDRange(_ range: PosixIDRange) throws(AccountsError) {
    try query(
      "UPDATE accounts.userdb_setting SET first_uid = $1, last_uid = $2 WHERE id = 1",
      [PGValue(range.first), PGValue(range.last)])
  }

  func givePosixID(_ number: Int64, kind: PosixIDKind, name: String, at date: Date)
    throws(AccountsError) -> Bool
  {
    try query(
      """
      INSERT INTO accounts.posix_id (number, kind, name, given_at)
      VALUES ($1, $2, $3, $4::timestamptz) ON CONFLICT DO NOTHING
      """, [PGValue(number), .text(kind.rawValue), .text(name), PGValue(date)]
    ).changed == 1
  }

  func setUID(_ uid: Int64, home: String, accountID: Int64) throws(AccountsError) {
    try query(
      "UPDATE accounts.account SET uid = $1, home = $2 WHERE id = $3",
      [PGValue(uid), .text(home), PGValue(accountID)])
  }

  func giveHome(_ path: String, uid: Int64, at date: Date) throws(AccountsError) -> Bool {
    try query(
      """
      INSERT INTO accounts.home_path (path, uid, given_at) VALUES ($1, $2, $3::timestamptz)
      ON CONFLICT DO NOTHING
      """, [.text(path), PGValue(uid), PGValue(date)])
    return try homeOwner(path) == uid
  }

  func setGID(_ gid: Int64, groupID: Int64) throws(AccountsError) {
    try query(
      "UPDATE accounts.account_group SET gid = $1 WHERE id = $2",
      [PGValue(gid), PGValue(groupID)])
  }

  func insertSSHKey(_ key: SSHKey, accountID: Int64, at date: Date) throws(AccountsError) -> Bool {
    try query(
      """
      INSERT INTO accounts.ssh_key
        (account_id, key_type, key_data, comment, fingerprint, added_at)
      VALUES ($1, $2, $3, $4, $5, $6::timestamptz) ON CONFLICT DO NOTHING
      """,
      [
        PGValue(accountID), .text(key.type), .text(key.data), .text(key.comment),
        .text(key.fingerprint), PGValue(date),
      ]
    ).changed == 1
  }

  func deleteSSHKey(accountID: Int64, fingerprint: String) throws(AccountsError) -> Bool {
    try query(
      "DELETE FROM accounts.ssh_key WHERE account_id = $1 AND fingerprint = $2",
      [PGValue(accountID), .text(fingerprint)]
    ).changed == 1
  }
}
