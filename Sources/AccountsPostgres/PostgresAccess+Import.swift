import AccountsCore
import FoundationEssentials

extension PostgresAccess {
  /// Inserts `accounts` in one statement: one round trip for the whole batch.
  ///
  /// The accounts go in as one array a column, numbered in their order (`WITH ORDINALITY`).
  /// Those whose key is stored already, or was given earlier in the batch, are left out before
  /// any id is drawn (writers take turns, so nothing can take a name in between); the others
  /// draw their ids in their order, so that the ids of one import grow by one, as it relies on
  /// to name a duplicate's first line. `ON CONFLICT DO NOTHING` stays as the constraint's
  /// backstop. The statement is prepared once a transaction: its text never changes. The
  /// batch's names are sorted bytewise to find the first of each (the keys are equal only when
  /// their bytes are, and the locale's order costs more).
  func insert(_ accounts: [NewAccount], at date: Date) throws(AccountsError) -> [Int64?] {
    guard !accounts.isEmpty else { return [] }
    let rows = try query(
      """
      WITH given AS (
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
            $6::boolean[], $7::boolean[], $8::timestamptz[], $9::text[], $10::text[])
          WITH ORDINALITY AS g (username, username_key, full_name, email, password_hash,
            must_change_password, disabled, expires_at, home, shell, n)
      ), fresh AS (
        SELECT DISTINCT ON (username_key COLLATE "C") * FROM given
        WHERE NOT EXISTS (
          SELECT 1 FROM accounts.account AS a WHERE a.username_key = given.username_key)
        ORDER BY username_key COLLATE "C", n
      ), stored AS (
        INSERT INTO accounts.account (id, username, username_key, full_name, email,
          password_hash, must_change_password, disabled_at, created_at, updated_at,
          password_changed_at, expires_at, home, shell)
        SELECT nextval('accounts.account_id_seq'), username, username_key, full_name, email,
          password_hash, must_change_password, CASE WHEN disabled THEN $11::timestamptz END,
          $11::timestamptz, $11::timestamptz, $11::timestamptz, expires_at, home, shell
        FROM (SELECT * FROM fresh ORDER BY n) AS f
        ON CONFLICT (username_key) DO NOTHING
        RETURNING id, username_key
      )
      SELECT id, username_key FROM stored
      """,
      [
        Self.array(accounts.map(\.username)), Self.array(accounts.map(\.usernameKey)),
        Self.array(accounts.map(\.fullName)), Self.array(accounts.map(\.email)),
        Self.array(accounts.map(\.passwordHash)),
        Self.array(accounts.map { $0.mustChangePassword ? "t" : "f" }),
        Self.array(accounts.map { $0.disabled ? "t" : "f" }),
        Self.array(accounts.map { $0.expiresAt.map(Timestamp.string(from:)) }),
        Self.array(accounts.map(\.home)), Self.array(accounts.map(\.shell)), PGValue(date),
      ], prepared: true)
    // Each key stored goes back to the first account of the batch that has it, joined here (the
    // server's planner cannot know the batch's size, and joined it row by row), by its bytes as
    // the unique key compares them (Swift's `==` would also match other normal forms).
    var stored: [[UInt8]: Int64] = [:]
    try decoded { () throws(PGUnreadableValue) in
      for row in 0..<rows.count {
        stored[Array(try rows.decode(String.self, row, 1).utf8)] = try rows.decode(
          Int64.self, row, 0)
      }
    }
    return accounts.map { stored.removeValue(forKey: Array($0.usernameKey.utf8)) }
  }

  /// A text array parameter (`{"a","b\"c",NULL}`) of any values, each quoted and escaped.
  static func array(_ values: [String?]) -> PGValue {
    var literal = "{"
    literal.reserveCapacity(values.count * 32)
    for (index, value) in values.enumerated() {
      if index > 0 { literal.append(",") }
      guard let value else {
        literal.append("NULL")
        continue
      }
      literal.append("\"")
      for character in value.unicodeScalars {
        if character == "\"" || character == "\\" { literal.append("\\") }
        literal.unicodeScalars.append(character)
      }
      literal.append("\"")
    }
    literal.append("}")
    return .text(literal)
  }
}
