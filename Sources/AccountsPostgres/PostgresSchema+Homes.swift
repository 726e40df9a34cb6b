/// The SQL of PostgreSQL migration "v10": every home folder given, never given twice (SQLite's
/// "v8"); never edit it once shipped.
let postgresSchemaV10 = """
  -- Every home folder ever given to an account with a uid, so that no path is given twice: a
  -- renamed or removed account's files at its home never become a new account's (its planted
  -- `.profile` would run as the newcomer). Never deleted, not even by reset.
  CREATE TABLE accounts.home_path (
    path text PRIMARY KEY CHECK (
      substr(path, 1, 1) = '/' AND char_length(path) <= 1024 AND strpos(path, ':') = 0),
    uid bigint NOT NULL REFERENCES accounts.posix_id (number),
    given_at timestamptz NOT NULL
  );

  -- The accounts that have a uid already have their home: each one's is recorded (the oldest
  -- uid's first, should two share one) and pinned, so that a rename no longer moves it.
  INSERT INTO accounts.home_path (path, uid, given_at)
  SELECT coalesce(a.home, '/home/' || a.username), a.uid, date_trunc('milliseconds', now())
  FROM accounts.account AS a WHERE a.uid IS NOT NULL ORDER BY a.uid
  ON CONFLICT DO NOTHING;
  UPDATE accounts.account SET home = '/home/' || username WHERE uid IS NOT NULL AND home IS NULL;
  """
