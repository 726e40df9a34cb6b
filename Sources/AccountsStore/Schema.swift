/// The SQL of migration "v1" (the first release: one user).
///
/// Never edit a shipped migration: add a new one. `schema.sql` at the top of the repository is
/// the picture of the schema after every migration; a test compares it with a migrated file.
let schemaV1 = """
  -- The one user of an activated device. `id` is always 1: a device has one user at most.
  CREATE TABLE user (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    username TEXT NOT NULL CHECK (length(username) BETWEEN 1 AND 64),
    username_key TEXT NOT NULL UNIQUE CHECK (length(username_key) BETWEEN 1 AND 64),
    full_name TEXT NOT NULL CHECK (length(trim(full_name)) BETWEEN 1 AND 256),
    email TEXT NOT NULL CHECK (length(email) BETWEEN 3 AND 254 AND email LIKE '_%@_%'),
    password_hash TEXT NOT NULL CHECK (password_hash LIKE 'pbkdf2_sha256$%$%$%'),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    last_login_at TEXT
  ) STRICT;

  -- The device's state: one row. Activated if and only if it names its user.
  CREATE TABLE activation (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    state TEXT NOT NULL CHECK (state IN ('Public', 'Activated')),
    user_id INTEGER UNIQUE REFERENCES user (id) DEFERRABLE INITIALLY DEFERRED,
    changed_at TEXT NOT NULL,
    CHECK ((state = 'Activated') = (user_id IS NOT NULL))
  ) STRICT;

  -- A Public device keeps no user.
  CREATE TRIGGER activation_public_keeps_no_user
  AFTER UPDATE OF state ON activation
  WHEN NEW.state = 'Public' AND EXISTS (SELECT 1 FROM user)
  BEGIN
    SELECT RAISE(ABORT, 'a Public device keeps no user');
  END;

  -- Failed logins per user name (known or not), and the lock they earn.
  CREATE TABLE login_throttle (
    username_key TEXT NOT NULL PRIMARY KEY,
    failures INTEGER NOT NULL DEFAULT 0 CHECK (failures >= 0),
    lockouts INTEGER NOT NULL DEFAULT 0 CHECK (lockouts >= 0),
    locked_until TEXT,
    updated_at TEXT NOT NULL
  ) STRICT, WITHOUT ROWID;

  -- What happened, oldest first. Never a password or a hash. Survives reset.
  CREATE TABLE audit_event (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    occurred_at TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (
      kind IN ('activation', 'login_success', 'login_failure', 'lockout', 'unlock', 'reset')),
    username TEXT,
    username_key TEXT,
    detail TEXT
  ) STRICT;

  CREATE INDEX audit_event_by_user ON audit_event (username_key, id);
  """

/// The SQL of migration "v2" (several accounts); never edit it once shipped.
let schemaV2 = """
  -- Migration "v2": several accounts. The v1 `user` and `activation` tables are rebuilt into
  -- `account` and a new `activation` naming the owner; audit kinds move to a table of their own, so
  -- that a new kind is a row, not a rebuilt table. Every row is copied; `login_throttle` is kept.
  CREATE TABLE account (
    id INTEGER PRIMARY KEY,
    username TEXT NOT NULL CHECK (length(username) BETWEEN 1 AND 64),
    username_key TEXT NOT NULL UNIQUE CHECK (length(username_key) BETWEEN 1 AND 64),
    full_name TEXT NOT NULL CHECK (length(trim(full_name)) BETWEEN 1 AND 256),
    email TEXT NOT NULL CHECK (length(email) BETWEEN 3 AND 254 AND email LIKE '_%@_%'),
    password_hash TEXT NOT NULL CHECK (password_hash LIKE 'pbkdf2_sha256$%$%$%'),
    must_change_password INTEGER NOT NULL DEFAULT 0 CHECK (must_change_password IN (0, 1)),
    disabled_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    password_changed_at TEXT NOT NULL,
    last_login_at TEXT
  ) STRICT;

  INSERT INTO account (id, username, username_key, full_name, email, password_hash,
                       must_change_password, disabled_at, created_at, updated_at,
                       password_changed_at, last_login_at)
  SELECT id, username, username_key, full_name, email, password_hash, 0, NULL, created_at,
         updated_at, created_at, last_login_at
  FROM user;

  CREATE TABLE activation_v2 (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    state TEXT NOT NULL CHECK (state IN ('Public', 'Activated')),
    owner_id INTEGER UNIQUE REFERENCES account (id) DEFERRABLE INITIALLY DEFERRED,
    changed_at TEXT NOT NULL,
    CHECK ((state = 'Activated') = (owner_id IS NOT NULL))
  ) STRICT;

  INSERT INTO activation_v2 (id, state, owner_id, changed_at)
  SELECT id, state, user_id, changed_at FROM activation;

  DROP TRIGGER activation_public_keeps_no_user;
  DROP TABLE activation;
  DROP TABLE user;
  ALTER TABLE activation_v2 RENAME TO activation;

  CREATE TABLE audit_kind (
    name TEXT NOT NULL PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 64)
  ) STRICT, WITHOUT ROWID;

  INSERT INTO audit_kind (name) VALUES
    ('activation'), ('login_success'), ('login_failure'), ('lockout'), ('unlock'), ('reset'),
    ('account_added'), ('account_edited'), ('account_disabled'), ('account_enabled'),
    ('account_removed'), ('password_changed'), ('password_set'), ('ownership_moved');

  CREATE TABLE audit_event_v2 (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    occurred_at TEXT NOT NULL,
    kind TEXT NOT NULL REFERENCES audit_kind (name),
    username TEXT,
    username_key TEXT,
    detail TEXT
  ) STRICT;

  INSERT INTO audit_event_v2 (id, occurred_at, kind, username, username_key, detail)
  SELECT id, occurred_at, kind, username, username_key, detail FROM audit_event ORDER BY id;

  -- Event numbers are never reused: the copy continues from where the old table's sequence was.
  UPDATE sqlite_sequence
  SET seq = max(seq, coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'audit_event'), 0))
  WHERE name = 'audit_event_v2';

  DROP INDEX audit_event_by_user;
  DROP TABLE audit_event;
  ALTER TABLE audit_event_v2 RENAME TO audit_event;

  CREATE INDEX audit_event_by_user ON audit_event (username_key, id);
  CREATE INDEX audit_event_by_kind ON audit_event (kind, id);

  -- A Public device keeps no account.
  CREATE TRIGGER activation_public_keeps_no_account
  AFTER UPDATE OF state ON activation
  WHEN NEW.state = 'Public' AND EXISTS (SELECT 1 FROM account)
  BEGIN
    SELECT RAISE(ABORT, 'a Public device keeps no account');
  END;

  -- Accounts are added to an Activated device only.
  CREATE TRIGGER account_needs_activated_device
  BEFORE INSERT ON account
  WHEN (SELECT state FROM activation WHERE id = 1) IS NOT 'Activated'
  BEGIN
    SELECT RAISE(ABORT, 'accounts are added to an Activated device only');
  END;
  """

/// The SQL of migration "v3" (sessions and a TOTP second factor); never edit it once shipped.
let schemaV3 = """
  -- Migration "v3": logins that last until logout, and a second factor. New tables only: every
  -- row of v2 stays as it is. An account's sessions, second factor and recovery codes go with it.

  -- A login that lasts: the client keeps a random 256-bit token, the store only its SHA-256.
  -- Live while the time is before both `expires_at` (the absolute limit) and `idle_until`
  -- (`last_seen_at` + `idle_seconds`). Ids are never reused, so `session revoke ID` taken from
  -- an older list cannot end a newer session.
  CREATE TABLE session (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    token_hash BLOB NOT NULL UNIQUE CHECK (typeof(token_hash) = 'blob' AND length(token_hash) = 32),
    account_id INTEGER NOT NULL REFERENCES account (id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    last_seen_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    idle_seconds INTEGER NOT NULL CHECK (idle_seconds > 0),
    idle_until TEXT NOT NULL,
    second_factor INTEGER NOT NULL DEFAULT 0 CHECK (second_factor IN (0, 1)),
    CHECK (created_at <= last_seen_at AND last_seen_at < idle_until AND created_at < expires_at)
  ) STRICT;

  CREATE INDEX session_by_account ON session (account_id);

  -- An account's TOTP secret, sealed with AES-256-GCM under the key file beside the database
  -- (`key_id` names that key), and the last time step accepted: a code is accepted only for a
  -- later step.
  CREATE TABLE second_factor (
    account_id INTEGER PRIMARY KEY REFERENCES account (id) ON DELETE CASCADE,
    sealed_secret BLOB NOT NULL CHECK (typeof(sealed_secret) = 'blob' AND length(sealed_secret) > 28),
    key_id TEXT NOT NULL CHECK (length(key_id) = 16),
    last_step INTEGER NOT NULL CHECK (last_step >= 0),
    enabled_at TEXT NOT NULL
  ) STRICT;

  -- Recovery codes: SHA-256 of each code's 80 random bits, each usable once.
  CREATE TABLE recovery_code (
    account_id INTEGER NOT NULL REFERENCES second_factor (account_id) ON DELETE CASCADE,
    code_hash BLOB NOT NULL CHECK (typeof(code_hash) = 'blob' AND length(code_hash) = 32),
    used_at TEXT,
    PRIMARY KEY (account_id, code_hash)
  ) STRICT, WITHOUT ROWID;

  INSERT INTO audit_kind (name) VALUES
    ('logout'), ('session_revoked'), ('second_factor_enabled'), ('second_factor_disabled'),
    ('second_factor_reset'), ('recovery_codes_made'), ('recovery_code_used');
  """

/// The SQL of migration "v4" (imported crypt(3) hashes); never edit it once shipped.
let schemaV4 = """
  -- Migration "v4": accounts imported from /etc/shadow or htpasswd keep their crypt(3) hash until
  -- their first login replaces it with a PBKDF2 one. SQLite cannot change a CHECK in place, so
  -- `account` is rebuilt (SQLite's own procedure: new table, copy, drop, rename), every row and id
  -- kept; the tables that refer to it refer to the new one by name.
  DROP TRIGGER activation_public_keeps_no_account;
  DROP TRIGGER account_needs_activated_device;

  CREATE TABLE account_v4 (
    id INTEGER PRIMARY KEY,
    username TEXT NOT NULL CHECK (length(username) BETWEEN 1 AND 64),
    username_key TEXT NOT NULL UNIQUE CHECK (length(username_key) BETWEEN 1 AND 64),
    full_name TEXT NOT NULL CHECK (length(trim(full_name)) BETWEEN 1 AND 256),
    email TEXT NOT NULL CHECK (length(email) BETWEEN 3 AND 254 AND email LIKE '_%@_%'),
    -- Django's PBKDF2 format, or a crypt(3) hash of a kept scheme: yescrypt, SHA-crypt, bcrypt.
    password_hash TEXT NOT NULL CHECK (
      password_hash LIKE 'pbkdf2_sha256$%$%$%'
      OR (length(password_hash) BETWEEN 20 AND 512
          AND (substr(password_hash, 1, 3) IN ('$y$', '$6$', '$5$')
               OR substr(password_hash, 1, 4) IN ('$2b$', '$2y$', '$2a$')))),
    must_change_password INTEGER NOT NULL DEFAULT 0 CHECK (must_change_password IN (0, 1)),
    disabled_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    password_changed_at TEXT NOT NULL,
    last_login_at TEXT
  ) STRICT;

  INSERT INTO account_v4 (id, username, username_key, full_name, email, password_hash,
                          must_change_password, disabled_at, created_at, updated_at,
                          password_changed_at, last_login_at)
  SELECT id, username, username_key, full_name, email, password_hash, must_change_password,
         disabled_at, created_at, updated_at, password_changed_at, last_login_at
  FROM account ORDER BY id;

  DROP TABLE account;
  ALTER TABLE account_v4 RENAME TO account;

  -- Accounts are added to an Activated device only.
  CREATE TRIGGER account_needs_activated_device
  BEFORE INSERT ON account
  WHEN (SELECT state FROM activation WHERE id = 1) IS NOT 'Activated'
  BEGIN
    SELECT RAISE(ABORT, 'accounts are added to an Activated device only');
  END;

  -- A Public device keeps no account.
  CREATE TRIGGER activation_public_keeps_no_account
  AFTER UPDATE OF state ON activation
  WHEN NEW.state = 'Public' AND EXISTS (SELECT 1 FROM account)
  BEGIN
    SELECT RAISE(ABORT, 'a Public device keeps no account');
  END;

  INSERT INTO audit_kind (name) VALUES ('accounts_imported'), ('accounts_exported');
  """

/// The SQL of migration "v5" (groups and account expiry); never edit it once shipped.
let schemaV5 = """
  -- Migration "v5": groups of accounts, and accounts that expire. A new nullable column and new
  -- tables: every row of v4 stays as it is. A membership goes with its account or its group.
  ALTER TABLE account ADD COLUMN expires_at TEXT;

  -- A named set of accounts. Names follow Linux's rules (Debian's NAME_REGEX,
  -- ^[a-z_][a-z0-9_-]*$, 1 to 32 characters), so that each can become a Linux group.
  CREATE TABLE account_group (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE CHECK (
      length(name) BETWEEN 1 AND 32 AND substr(name, 1, 1) GLOB '[a-z_]'
      AND name NOT GLOB '*[^a-z0-9_-]*'),
    created_at TEXT NOT NULL
  ) STRICT;

  -- Which accounts belong to which groups.
  CREATE TABLE group_member (
    account_id INTEGER NOT NULL REFERENCES account (id) ON DELETE CASCADE,
    group_id INTEGER NOT NULL REFERENCES account_group (id) ON DELETE CASCADE,
    PRIMARY KEY (account_id, group_id)
  ) STRICT, WITHOUT ROWID;

  CREATE INDEX group_member_by_group ON group_member (group_id, account_id);

  INSERT INTO audit_kind (name) VALUES
    ('group_added'), ('group_removed'), ('group_member_added'), ('group_member_removed'),
    ('pam_session_opened'), ('pam_session_closed');
  """

/// The SQL of migration "v6" (accounts as Linux users, SSH keys); never edit it once shipped.
let schemaV6 = """
  -- Migration "v6": every account can be a Linux user (systemd user records), with SSH keys.
  -- New nullable columns and new tables: every row of v5 stays as it is. Existing accounts and
  -- groups get their numbers when user records are first made for them (`userdb`).

  -- Every number ever handed out as a uid (with its per-user group's gid, the same number) or
  -- as a group's gid. Never deleted, not even by reset: a removed person's files never become
  -- another person's. Inside the regular users' range of Debian's policy (1000 to 59999).
  CREATE TABLE posix_id (
    number INTEGER PRIMARY KEY CHECK (number BETWEEN 1000 AND 59999),
    kind TEXT NOT NULL CHECK (kind IN ('user', 'group')),
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
    given_at TEXT NOT NULL
  ) STRICT;

  -- An account's uid (nil until its first user record), home folder and login shell (nil: the
  -- defaults, /home/NAME and /bin/bash): absolute paths without ':' (the core also refuses
  -- control characters).
  ALTER TABLE account ADD COLUMN uid INTEGER REFERENCES posix_id (number);
  ALTER TABLE account ADD COLUMN home TEXT CHECK (
    home IS NULL OR (substr(home, 1, 1) = '/' AND length(home) <= 1024 AND home NOT GLOB '*:*'));
  ALTER TABLE account ADD COLUMN shell TEXT CHECK (
    shell IS NULL
    OR (substr(shell, 1, 1) = '/' AND length(shell) <= 1024 AND shell NOT GLOB '*:*'));
  CREATE UNIQUE INDEX account_by_uid ON account (uid);

  -- A group's gid (nil until its first group record).
  ALTER TABLE account_group ADD COLUMN gid INTEGER REFERENCES posix_id (number);
  CREATE UNIQUE INDEX account_group_by_gid ON account_group (gid);

  -- The store's user record settings: its identity (which names its records' manifest in each
  -- host's folder) and the range uids and gids are handed out from. One row.
  CREATE TABLE userdb_setting (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    store_id TEXT NOT NULL CHECK (length(store_id) = 32 AND store_id NOT GLOB '*[^0-9a-f]*'),
    first_uid INTEGER NOT NULL,
    last_uid INTEGER NOT NULL,
    CHECK (1000 <= first_uid AND first_uid <= last_uid AND last_uid <= 59999)
  ) STRICT;

  INSERT INTO userdb_setting (id, store_id, first_uid, last_uid)
  VALUES (1, lower(hex(randomblob(16))), 20000, 29999);

  -- The hosts that keep user records of this store, by host name, and in which folder.
  CREATE TABLE userdb_host (
    host TEXT NOT NULL PRIMARY KEY CHECK (length(host) BETWEEN 1 AND 255),
    folder TEXT NOT NULL CHECK (substr(folder, 1, 1) = '/' AND length(folder) <= 1024),
    enabled_at TEXT NOT NULL
  ) STRICT, WITHOUT ROWID;

  -- An account's SSH public keys, as authorized_keys lines without options: the type, the
  -- base64 key blob, the comment, and the blob's SHA-256 fingerprint as ssh-keygen prints it.
  CREATE TABLE ssh_key (
    id INTEGER PRIMARY KEY,
    account_id INTEGER NOT NULL REFERENCES account (id) ON DELETE CASCADE,
    key_type TEXT NOT NULL CHECK (length(key_type) BETWEEN 1 AND 64),
    key_data TEXT NOT NULL CHECK (length(key_data) BETWEEN 1 AND 16384),
    comment TEXT NOT NULL CHECK (length(comment) <= 1024),
    fingerprint TEXT NOT NULL CHECK (substr(fingerprint, 1, 7) = 'SHA256:'),
    added_at TEXT NOT NULL,
    UNIQUE (account_id, fingerprint)
  ) STRICT;

  INSERT INTO audit_kind (name) VALUES ('ssh_key_added'), ('ssh_key_removed');
  """

/// The SQL of migration "v7" (the host that wrote each event and started each session); never
/// edit it once shipped.
let schemaV7 = """
  -- Migration "v7": the host that wrote each audit event and started each session (its node
  -- name, or the name the administrator gave it). New nullable columns: every row of v6 stays as
  -- it is, the events and sessions from before with no host.
  ALTER TABLE audit_event ADD COLUMN host TEXT CHECK (
    host IS NULL OR length(host) BETWEEN 1 AND 253);
  ALTER TABLE session ADD COLUMN host TEXT CHECK (
    host IS NULL OR length(host) BETWEEN 1 AND 253);
  CREATE INDEX audit_event_by_host ON audit_event (host, id);
  """

/// The SQL of migration "v8" (every home folder given, never given twice); never edit it once
/// shipped.
let schemaV8 = """
  -- Migration "v8": every home folder ever given to an account with a uid, so that no path is
  -- given twice: a renamed or removed account's files at its home never become a new account's
  -- (its planted `.profile` would run as the newcomer). Never deleted, not even by reset.
  CREATE TABLE home_path (
    path TEXT PRIMARY KEY CHECK (
      substr(path, 1, 1) = '/' AND length(path) <= 1024 AND path NOT GLOB '*:*'),
    uid INTEGER NOT NULL REFERENCES posix_id (number),
    given_at TEXT NOT NULL
  ) STRICT, WITHOUT ROWID;

  -- The accounts that have a uid already have their home: each one's is recorded (the oldest
  -- uid's first, should two share one) and pinned, so that a rename no longer moves it.
  INSERT OR IGNORE INTO home_path (path, uid, given_at)
  SELECT coalesce(home, '/home/' || username), uid, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
  FROM account WHERE uid IS NOT NULL ORDER BY uid;
  UPDATE account SET home = '/home/' || username WHERE uid IS NOT NULL AND home IS NULL;
  """

/// The SQL of migration "v9" (the log an administrator reads: PAM's refusals and the user
/// records' changes); never edit it once shipped.
let schemaV9 = """
  -- Migration "v9": new kinds of events only; every row of v8 stays as it is.
  INSERT INTO audit_kind (name) VALUES
    ('access_refused'), ('userdb_enabled'), ('userdb_disabled'), ('userdb_synced');
  """

/// The SQL of migration "v10" (a new second factor's secret waiting for its first code); never
/// edit it once shipped.
let schemaV10 = """
  -- Migration "v10": `2fa enable --begin` keeps a new TOTP secret pending until
  -- `2fa enable --confirm` gives a code of it (or `expires_at` passes): sealed as a second
  -- factor's is, but never a second factor. A new table only; it goes with its account.
  CREATE TABLE pending_second_factor (
    account_id INTEGER PRIMARY KEY REFERENCES account (id) ON DELETE CASCADE,
    sealed_secret BLOB NOT NULL CHECK (typeof(sealed_secret) = 'blob' AND length(sealed_secret) > 28),
    key_id TEXT NOT NULL CHECK (length(key_id) = 16),
    expires_at TEXT NOT NULL
  ) STRICT;
  """
