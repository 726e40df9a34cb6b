import AccountsCore
import FoundationEssentials

// Groups and memberships: `accounts.account_group` and `accounts.group_member` (migration "v2").

extension PostgresAccess {
  func groups(accountID: Int64) throws(AccountsError) -> [String] {
    try names(
      query(
        """
        SELECT g.name FROM accounts.group_member AS m
        JOIN accounts.account_group AS g ON g.id = m.group_id
        WHERE m.account_id = $1 ORDER BY g.name
        """, [PGValue(accountID)]))
  }

  func group(named name: String) throws(AccountsError) -> AccountGroup? {
    let rows = try query(
      """
      SELECT id, name, accounts.stamp(created_at), gid FROM accounts.account_group
      WHERE name = $1
      """,
      [.text(name)])
    guard rows.count == 1 else { return nil }
    return try group(rows, 0)
  }

  func group(id: Int64) throws(AccountsError) -> AccountGroup? {
    let rows = try query(
      """
      SELECT id, name, accounts.stamp(created_at), gid FROM accounts.account_group
      WHERE id = $1
      """,
      [PGValue(id)])
    guard rows.count == 1 else { return nil }
    return try group(rows, 0)
  }

  func forEachGroup(_ body: (GroupListing) throws(AccountsError) -> Void) throws(AccountsError) {
    try forEach(
      """
      SELECT g.id, g.name, accounts.stamp(g.created_at), g.gid,
             (SELECT count(*) FROM accounts.group_member AS m WHERE m.group_id = g.id)
      FROM accounts.account_group AS g ORDER BY g.name
      """
    ) { rows, row throws(AccountsError) in
      let count = try decoded { () throws(PGUnreadableValue) in
        try rows.decode(Int.self, row, 4)
      }
      try body(GroupListing(group: group(rows, row), memberCount: count))
    }
  }

  func members(groupID: Int64) throws(AccountsError) -> [String] {
    try names(
      query(
        """
        SELECT a.username FROM accounts.group_member AS m
        JOIN accounts.account AS a ON a.id = m.account_id
        WHERE m.group_id = $1 ORDER BY a.username_key
        """, [PGValue(groupID)]))
  }

  func insertGroup(named name: String, at date: Date) throws(AccountsError) -> AccountGroup {
    // Writers take turns (the activation row's lock), so a name found free stays free.
    let rows = try query(
      """
      INSERT INTO accounts.account_group (name, created_at) VALUES ($1, $2::timestamptz)
      ON CONFLICT (name) DO NOTHING
      RETURNING id, name, accounts.stamp(created_at), gid
      """, [.text(name), PGValue(date)])
    guard rows.count == 1 else { throw .groupNameTaken(name) }
    return try group(rows, 0)
  }

  func deleteGroup(id: Int64) throws(AccountsError) {
    try query("DELETE FROM accounts.account_group WHERE id = $1", [PGValue(id)])
  }

  func addMember(accountID: Int64, groupID: Int64) throws(AccountsError) -> Bool {
    try query(
      """
      INSERT INTO accounts.group_member (account_id, group_id) VALUES ($1, $2)
      ON CONFLICT DO NOTHING
      """, [PGValue(accountID), PGValue(groupID)]
    ).changed == 1
  }

  func removeMember(accountID: Int64, groupID: Int64) throws(AccountsError) -> Bool {
    try query(
      "DELETE FROM accounts.group_member WHERE account_id = $1 AND group_id = $2",
      [PGValue(accountID), PGValue(groupID)]
    ).changed == 1
  }

  /// The group in columns `id`, `name`, `created_at`, `gid` of row `row`.
  private func group(_ rows: PGRows, _ row: Int) throws(AccountsError) -> AccountGroup {
    try decoded { () throws(PGUnreadableValue) in
      AccountGroup(
        id: try rows.decode(Int64.self, row, 0), name: try rows.decode(String.self, row, 1),
        createdAt: try rows.decode(Date.self, row, 2), gid: try rows.decode(Int64?.self, row, 3))
    }
  }

  /// The first column of every row, as text.
  private func names(_ rows: PGRows) throws(AccountsError) -> [String] {
    try decoded { () throws(PGUnreadableValue) in
      try (0..<rows.count).map { row throws(PGUnreadableValue) in
        try rows.decode(String.self, row, 0)
      }
    }
  }
}
