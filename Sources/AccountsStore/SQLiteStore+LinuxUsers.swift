import AccountsCore
import FoundationEssentials

// Accounts as Linux users: `userdb_setting`, `userdb_host`, `posix_id` and `ssh_key`
// (migration "v6").

extension SQLiteReading {
  func userdbSettings() throws(AccountsError) -> UserdbSettings {
    try statement(path) {
      guard
        let row = try Row.fetchOne(
          db, sql: "SELECT store_id, first_uid, last_uid FROM userdb_setting WHERE id = 1")
      else { throw AccountsError.storage(.corrupt(location: path)) }
      return UserdbSettings(
        storeID: try row[0], range: PosixIDRange(uncheckedFirst: try row[1], last: try row[2]))
    }
  }

  func userdbHost(named host: String) throws(AccountsError) -> UserdbHost? {
    try statement(path) {
      try Row.fetchOne(
        db, sql: "SELECT host, folder, enabled_at FROM userdb_host WHERE host = ?",
        arguments: [host]
      ).map { row in
        let enabledAt: String = try row[2]
        return UserdbHost(
          host: try row[0], folder: try row[1],
          enabledAt: Timestamp.date(from: enabledAt) ?? .distantPast)
      }
    }
  }

  func lastPosixID(in range: PosixIDRange) throws(AccountsError) -> Int64? {
    try statement(path) {
      try Int64.fetchOne(
        db, sql: "SELECT max(number) FROM posix_id WHERE number BETWEEN ? AND ?",
        arguments: [range.first, range.last])
    }
  }

  func givesPosixIDs() throws(AccountsError) -> Bool {
    try statement(path) {
      try Bool.fetchOne(
        db,
        sql: """
          SELECT EXISTS (SELECT 1 FROM userdb_host) OR EXISTS (SELECT 1 FROM posix_id)
          """) ?? false
    }
  }

  // Whoever may open the file for writing may number.
  func mayGivePosixIDs() -> Bool { true }

  func homeOwner(_ path: String) throws(AccountsError) -> Int64? {
    try statement(self.path) {
      try Int64.fetchOne(db, sql: "SELECT uid FROM home_path WHERE path = ?", arguments: [path])
    }
  }

  func sshKeys(accountID: Int64) throws(AccountsError) -> [StoredSSHKey] {
    try statement(path) {
      try Row.fetchAll(
        db,
        sql: """
          SELECT key_type, key_data, comment, fingerprint, added_at FROM ssh_key
          WHERE account_id = ? ORDER BY id
          """, arguments: [accountID]
      ).map { row in
        let addedAt: String = try row[4]
        return StoredSSHKey(
          key: SSHKey(
            type: try row[0], data: try row[1], comment: try row[2], fingerprint: try row[3],
            bits: 0),
          addedAt: Timestamp.date(from: addedAt) ?? .distantPast)
      }
    }
  }
}

extension SQLiteReading {
  func userdbGeneration() throws(AccountsError) -> Int64 {
    try statement(path) {
      try Int64.fetchOne(db, sql: "SELECT generation FROM userdb_generation WHERE id = 1") ?? 0
    }
  }

  func userdbChanges(after generation: Int64) throws(AccountsError) -> UserdbEntities {
    try statement(path) {
      var changes = UserdbEntities()
      for row in try Row.fetchAll(
        db, sql: "SELECT kind, entity_id FROM userdb_change WHERE generation > ? ORDER BY 1, 2",
        arguments: [generation])
      {
        let kind: String = try row[0]
        if kind == "user" {
          changes.users.append(try row[1])
        } else {
          changes.groups.append(try row[1])
        }
      }
      return changes
    }
  }

  func unnumbered() throws(AccountsError) -> UserdbEntities {
    try statement(path) {
      UserdbEntities(
        users: try Int64.fetchAll(db, sql: "SELECT id FROM account WHERE uid IS NULL ORDER BY id"),
        groups: try Int64.fetchAll(
          db, sql: "SELECT id FROM account_group WHERE gid IS NULL ORDER BY id"))
    }
  }

  func hasUnnumbered() throws(AccountsError) -> Bool {
    try statement(path) {
      try Bool.fetchOne(
        db,
        sql: """
          SELECT EXISTS (SELECT 1 FROM account WHERE uid IS NULL)
            OR EXISTS (SELECT 1 FROM account_group WHERE gid IS NULL)
          """) ?? false
    }
  }
}

extension EmptyAccountReader {
  func userdbGeneration() -> Int64 { 0 }
  func userdbChanges(after generation: Int64) -> UserdbEntities { UserdbEntities() }
  func hasUnnumbered() -> Bool { false }
  func unnumbered() -> UserdbEntities { UserdbEntities() }
  func userdbSettings() -> UserdbSettings {
    UserdbSettings(storeID: String(repeating: "0", count: 32), range: .standard)
  }
  func userdbHost(named host: String) -> UserdbHost? { nil }
  func lastPosixID(in range: PosixIDRange) -> Int64? { nil }
  func givesPosixIDs() -> Bool { false }
  func mayGivePosixIDs() -> Bool { true }
  func homeOwner(_ path: String) -> Int64? { nil }
  func sshKeys(accountID: Int64) -> [StoredSSHKey] { [] }
}

extension SQLiteAccountWriter {
  func setUserdbHost(_ host: UserdbHost) throws(AccountsError) {
    try statement(path) {
      try db.execute(
        sql: "INSERT OR REPLACE INTO userdb_host (host, folder, enabled_at) VALUES (?, ?, ?)",
        arguments: [host.host, host.folder, Timestamp.string(from: host.enabledAt)])
    }
  }

  func removeUserdbHost(named host: String) throws(AccountsError) -> Bool {
    try statement(path) {
      try db.execute(sql: "DELETE FROM userdb_host WHERE host = ?", arguments: [host])
      return db.changesCount == 1
    }
  }

  func setPosixIDRange(_ range: PosixIDRange) throws(AccountsError) {
    try statement(path) {
      try db.execute(
        sql: "UPDATE userdb_setting SET first_uid = ?, last_uid = ? WHERE id = 1",
        arguments: [range.first, range.last])
    }
  }

  func givePosixID(_ number: Int64, kind: PosixIDKind, name: String, at date: Date)
    throws(AccountsError) -> Bool
  {
    try statement(path) {
      try db.execute(
        sql: """
          INSERT OR IGNORE INTO posix_id (number, kind, name, given_at) VALUES (?, ?, ?, ?)
          """, arguments: [number, kind.rawValue, name, Timestamp.string(from: date)])
      return db.changesCount == 1
    }
  }

  func setUID(_ uid: Int64, home: String, accountID: Int64) throws(AccountsError) {
    try statement(path) {
      try db.execute(
        sql: "UPDATE account SET uid = ?, home = ? WHERE id = ?", arguments: [uid, home, accountID])
    }
  }

  func giveHome(_ path: String, uid: Int64, at date: Date) throws(AccountsError) -> Bool {
    try statement(self.path) {
      try db.execute(
        sql: "INSERT OR IGNORE INTO home_path (path, uid, given_at) VALUES (?, ?, ?)",
        arguments: [path, uid, Timestamp.string(from: date)])
      return try Int64.fetchOne(
        db, sql: "SELECT uid FROM home_path WHERE path = ?", arguments: [path]) == uid
    }
  }

  func setGID(_ gid: Int64, groupID: Int64) throws(AccountsError) {
    try statement(path) {
      try db.execute(
        sql: "UPDATE account_group SET gid = ? WHERE id = ?", arguments: [gid, groupID])
    }
  }

  func insertSSHKey(_ key: SSHKey, accountID: Int64, at date: Date) throws(AccountsError) -> Bool {
    try statement(path) {
      try db.execute(
        sql: """
          INSERT OR IGNORE INTO ssh_key
            (account_id, key_type, key_data, comment, fingerprint, added_at)
          VALUES (?, ?, ?, ?, ?, ?)
          """,
        arguments: [
          accountID, key.type, key.data, key.comment, key.fingerprint,
          Timestamp.string(from: date),
        ])
      return db.changesCount == 1
    }
  }

  func deleteSSHKey(accountID: Int64, fingerprint: String) throws(AccountsError) -> Bool {
    try statement(path) {
      try db.execute(
        sql: "DELETE FROM ssh_key WHERE account_id = ? AND fingerprint = ?",
        arguments: [accountID, fingerprint])
      return db.changesCount == 1
    }
  }
}
