import AccountsCore
import FoundationEssentials

// MARK: - Entries

extension LoginCacheFile {
  public func entry(key: String) throws(AccountsError) -> CachedLogin? {
    try read { db in
      guard
        let row = try Row.fetchOne(
          db,
          sql: """
            SELECT account_id, username, username_key, full_name, uid, groups, disabled,
                   expires_at, must_change, iterations, salt, verifier, sealed_secret,
                   last_step, refreshed_at, mark
            FROM cached_login WHERE username_key = ?
            """, arguments: [key])
      else { return nil }
      let codes = try [UInt8].fetchAll(
        db, sql: "SELECT hash FROM cached_recovery_code WHERE username_key = ? ORDER BY hash",
        arguments: [key])
      let groups: String = try row[5]
      let expires: String? = try row[7]
      let step: Int64? = try row[13]
      let refreshed: String = try row[14]
      guard let refreshedAt = Timestamp.date(from: refreshed) else {
        throw UnreadableValue(reason: "refreshed_at is not a time")
      }
      return CachedLogin(
        accountID: try row[0], username: try row[1], usernameKey: try row[2],
        fullName: try row[3], uid: try row[4],
        groups: groups.isEmpty ? [] : groups.split(separator: "\n").map(String.init),
        isDisabled: try row[6], expiresAt: expires.flatMap(Timestamp.date(from:)),
        mustChangePassword: try row[8], iterations: try row[9], salt: try row[10],
        verifier: try row[11], mark: try row[15], sealedSecret: try row[12],
        lastStep: step.map { UInt64(max($0, 0)) }, recoveryCodeHashes: codes,
        refreshedAt: refreshedAt)
    }
  }

  public func refresh(_ entry: CachedLogin) throws(AccountsError) {
    let at = Timestamp.string(from: entry.refreshedAt)
    try write { db in
      try db.execute(
        sql: "DELETE FROM cached_login WHERE username_key = ?", arguments: [entry.usernameKey])
      try db.execute(
        sql: """
          INSERT INTO cached_login (account_id, username, username_key, full_name, uid, groups,
            disabled, expires_at, must_change, iterations, salt, verifier, sealed_secret,
            last_step, refreshed_at, mark)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
          """,
        arguments: [
          entry.accountID, entry.username, entry.usernameKey, entry.fullName, entry.uid,
          entry.groups.joined(separator: "\n"), entry.isDisabled,
          entry.expiresAt.map(Timestamp.string(from:)), entry.mustChangePassword,
          entry.iterations, entry.salt, entry.verifier, entry.sealedSecret,
          entry.lastStep.map { Int64(clamping: $0) }, at, entry.mark,
        ])
      for hash in entry.recoveryCodeHashes {
        try db.execute(
          sql: "INSERT OR IGNORE INTO cached_recovery_code (username_key, hash) VALUES (?, ?)",
          arguments: [entry.usernameKey, hash])
      }
      try db.execute(
        sql: "DELETE FROM cached_tally WHERE username_key = ?", arguments: [entry.usernameKey])
      try db.execute(
        sql: "UPDATE cache_setting SET last_contact = ?, unreachable_until = NULL WHERE id = 1",
        arguments: [at])
    }
  }

  public func forget(key: String) throws(AccountsError) -> Bool {
    try write { db in
      try db.execute(sql: "DELETE FROM cached_login WHERE username_key = ?", arguments: [key])
      return db.changesCount > 0
    }
  }
}
