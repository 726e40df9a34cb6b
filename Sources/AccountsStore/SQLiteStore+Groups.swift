import AccountsCore
import FoundationEssentials

// Groups and memberships: `account_group` and `group_member` (migration "v5").

extension SQLiteReading {
  func groups(accountID: Int64) throws(AccountsError) -> [String] {
    try statement(path) {
      try String.fetchAll(
        db,
        sql: """
          SELECT g.name FROM group_member AS m JOIN account_group AS g ON g.id = m.group_id
          WHERE m.account_id = ? ORDER BY g.name
          """, arguments: [accountID])
    }
  }

  func group(named name: String) throws(AccountsError) -> AccountGroup? {
    try statement(path) {
      try Row.fetchOne(
        db, sql: "SELECT id, name, created_at, gid FROM account_group WHERE name = ?",
        arguments: [name]
      ).map { row in try Self.group(row) }
    }
  }

  func group(id: Int64) throws(AccountsError) -> AccountGroup? {
    try statement(path) {
      try Row.fetchOne(
        db, sql: "SELECT id, name, created_at, gid FROM account_group WHERE id = ?",
        arguments: [id]
      ).map { row in try Self.group(row) }
    }
  }

  func forEachGroup(_ body: (GroupListing) throws(AccountsError) -> Void) throws(AccountsError) {
    try statement(path) {
      let rows = try Row.fetchCursor(
        db,
        sql: """
          SELECT g.id, g.name, g.created_at, g.gid,
                 (SELECT count(*) FROM group_member AS m WHERE m.group_id = g.id)
          FROM account_group AS g ORDER BY g.name
          """)
      while let row = try rows.next() {
        let listing = GroupListing(group: try Self.group(row), memberCount: try row[4])
        try SQLiteStore.passingThrough { () throws(AccountsError) in try body(listing) }
      }
    }
  }

  func members(groupID: Int64) throws(AccountsError) -> [String] {
    try statement(path) {
      try String.fetchAll(
        db,
        sql: """
          SELECT a.username FROM group_member AS m JOIN account AS a ON a.id = m.account_id
          WHERE m.group_id = ? ORDER BY a.username_key
          """, arguments: [groupID])
    }
  }

  /// A group from the columns `id`, `name`, `created_at`, `gid`.
  private static func group(_ row: Row) throws -> AccountGroup {
    let createdAt: String = try row[2]
    return AccountGroup(
      id: try row[0], name: try row[1],
      createdAt: Timestamp.date(from: createdAt) ?? .distantPast, gid: try row[3])
  }
}

extension EmptyAccountReader {
  func groups(accountID: Int64) -> [String] { [] }
  func group(named name: String) -> AccountGroup? { nil }
  func group(id: Int64) -> AccountGroup? { nil }
  func forEachGroup(_ body: (GroupListing) throws(AccountsError) -> Void) {}
  func members(groupID: Int64) -> [String] { [] }
}

extension SQLiteAccountWriter {
  func insertGroup(named name: String, at date: Date) throws(AccountsError) -> AccountGroup {
    let stamp = Timestamp.string(from: date)
    return try statement(path) {
      do {
        try db.execute(
          sql: "INSERT INTO account_group (name, created_at) VALUES (?, ?)",
          arguments: [name, stamp])
      } catch let error as DatabaseError
        where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE
      {
        throw AccountsError.groupNameTaken(name)
      }
      return AccountGroup(
        id: db.lastInsertedRowID, name: name, createdAt: Timestamp.date(from: stamp) ?? date)
    }
  }

  func deleteGroup(id: Int64) throws(AccountsError) {
    try statement(path) {
      try db.execute(sql: "DELETE FROM account_group WHERE id = ?", arguments: [id])
    }
  }

  func addMember(accountID: Int64, groupID: Int64) throws(AccountsError) -> Bool {
    try statement(path) {
      try db.execute(
        sql: "INSERT OR IGNORE INTO group_member (account_id, group_id) VALUES (?, ?)",
        arguments: [accountID, groupID])
      return db.changesCount == 1
    }
  }

  func removeMember(accountID: Int64, groupID: Int64) throws(AccountsError) -> Bool {
    try statement(path) {
      try db.execute(
        sql: "DELETE FROM group_member WHERE account_id = ? AND group_id = ?",
        arguments: [accountID, groupID])
      return db.changesCount == 1
    }
  }
}
