extension LoginCacheFile {
  /// The cache's own schema steps, written once and never edited, as the store's are.
  ///
  /// Its file is not the store's: a step here is no store migration.
  static var migrator: DatabaseMigrator {
    var migrator = DatabaseMigrator()
    migrator.registerMigration("cache1") { db in
      try db.execute(
        sql: """
          CREATE TABLE cache_setting (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            days INTEGER NOT NULL CHECK (days BETWEEN 1 AND 365),
            enabled_at TEXT NOT NULL,
            last_contact TEXT,
            unreachable_until TEXT
          ) STRICT;
          CREATE TABLE cached_login (
            username_key TEXT PRIMARY KEY,
            username TEXT NOT NULL,
            full_name TEXT NOT NULL,
            account_id INTEGER NOT NULL,
            uid INTEGER,
            groups TEXT NOT NULL,
            disabled INTEGER NOT NULL CHECK (disabled IN (0, 1)),
            expires_at TEXT,
            must_change INTEGER NOT NULL CHECK (must_change IN (0, 1)),
            iterations INTEGER NOT NULL CHECK (iterations >= 1),
            salt BLOB NOT NULL CHECK (length(salt) = 16),
            verifier BLOB NOT NULL CHECK (length(verifier) = 32),
            mark BLOB NOT NULL CHECK (length(mark) = 32),
            sealed_secret BLOB,
            last_step INTEGER,
            refreshed_at TEXT NOT NULL
          ) STRICT;
          CREATE TABLE cached_recovery_code (
            username_key TEXT NOT NULL REFERENCES cached_login ON DELETE CASCADE,
            hash BLOB NOT NULL,
            PRIMARY KEY (username_key, hash)
          ) STRICT;
          CREATE TABLE cached_tally (
            username_key TEXT PRIMARY KEY,
            failures INTEGER NOT NULL CHECK (failures >= 0),
            lockouts INTEGER NOT NULL CHECK (lockouts >= 0),
            locked_until TEXT
          ) STRICT;
          CREATE TABLE queued_event (
            offline_id TEXT PRIMARY KEY,
            at TEXT NOT NULL,
            kind TEXT NOT NULL,
            username TEXT,
            username_key TEXT,
            detail TEXT,
            host TEXT
          ) STRICT;
          """)
    }
    return migrator
  }
}
