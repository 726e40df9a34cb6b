-- The schema `accounts` works with: the picture of the database after every migration
-- (Sources/AccountsStore/Schema.swift: "v1" to "v7"). A test compares it with a migrated file.

-- Every account of an activated device. Which one owns the device, the activation row says.
-- `expires_at`: from when it cannot log in (NULL: never). Migration "v5" added it with ALTER
-- TABLE, and SQLite keeps the table's text as that statement left it.
CREATE TABLE account (
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
, expires_at TEXT, uid INTEGER REFERENCES posix_id (number), home TEXT CHECK (
  home IS NULL OR (substr(home, 1, 1) = '/' AND length(home) <= 1024 AND home NOT GLOB '*:*')), shell TEXT CHECK (
  shell IS NULL
  OR (substr(shell, 1, 1) = '/' AND length(shell) <= 1024 AND shell NOT GLOB '*:*'))) STRICT;

-- One account per uid (migration "v6": `uid` is NULL until its first user record; `home` and
-- `shell` NULL for the defaults, /home/NAME and /bin/bash).
CREATE UNIQUE INDEX account_by_uid ON account (uid);

-- The device's state: one row. Activated if and only if it names its owner, an account.
CREATE TABLE activation (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  state TEXT NOT NULL CHECK (state IN ('Public', 'Activated')),
  owner_id INTEGER UNIQUE REFERENCES account (id) DEFERRABLE INITIALLY DEFERRED,
  changed_at TEXT NOT NULL,
  CHECK ((state = 'Activated') = (owner_id IS NOT NULL))
) STRICT;

-- Failed logins per user name (known or not), and the lock they earn.
CREATE TABLE login_throttle (
  username_key TEXT NOT NULL PRIMARY KEY,
  failures INTEGER NOT NULL DEFAULT 0 CHECK (failures >= 0),
  lockouts INTEGER NOT NULL DEFAULT 0 CHECK (lockouts >= 0),
  locked_until TEXT,
  updated_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- The kinds of audit event. A new kind is a row (added by a migration), not a rebuilt table.
CREATE TABLE audit_kind (
  name TEXT NOT NULL PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 64)
) STRICT, WITHOUT ROWID;

-- What happened, oldest first. Never a password or a hash. Survives reset. `host`: the host
-- that wrote it (its node name, or ACCOUNTS_HOST_NAME); migration "v7" added it with ALTER
-- TABLE, and the events from before have none. `offline_id`: the id a host's login cache gave
-- an event of a login it answered while a PostgreSQL server was away (migration "v14", as the
-- server keeps it; unique where present), so that a store copied from the server and back
-- keeps which events were offline.
CREATE TABLE audit_event (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  occurred_at TEXT NOT NULL,
  kind TEXT NOT NULL REFERENCES audit_kind (name),
  username TEXT,
  username_key TEXT,
  detail TEXT
, host TEXT CHECK (
  host IS NULL OR length(host) BETWEEN 1 AND 253), offline_id TEXT CHECK (
  offline_id IS NULL OR (length(offline_id) = 32 AND offline_id NOT GLOB '*[^0-9a-f]*'))) STRICT;

CREATE INDEX audit_event_by_host ON audit_event (host, id);
CREATE INDEX audit_event_by_kind ON audit_event (kind, id);
CREATE UNIQUE INDEX audit_event_by_offline_id ON audit_event (offline_id)
  WHERE offline_id IS NOT NULL;
CREATE INDEX audit_event_by_user ON audit_event (username_key, id);

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

-- A login that lasts: the client keeps a random 256-bit token, the store only its SHA-256.
-- Live while the time is before both `expires_at` (the absolute limit) and `idle_until`
-- (`last_seen_at` + `idle_seconds`). Ids are never reused, so `session revoke ID` taken from
-- an older list cannot end a newer session. `host`: the host it was started on (migration "v7";
-- none for the sessions from before).
CREATE TABLE session (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  token_hash BLOB NOT NULL UNIQUE CHECK (typeof(token_hash) = 'blob' AND length(token_hash) = 32),
  account_id INTEGER NOT NULL REFERENCES account (id) ON DELETE CASCADE,
  created_at TEXT NOT NULL,
  last_seen_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  idle_seconds INTEGER NOT NULL CHECK (idle_seconds > 0),
  idle_until TEXT NOT NULL,
  second_factor INTEGER NOT NULL DEFAULT 0 CHECK (second_factor IN (0, 1)), host TEXT CHECK (
  host IS NULL OR length(host) BETWEEN 1 AND 253),
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

-- A new TOTP secret waiting for its first code (`2fa enable --begin`) until `expires_at`,
-- sealed as a second factor's is, but never a second factor (`2fa enable --confirm` turns it
-- into one).
CREATE TABLE pending_second_factor (
  account_id INTEGER PRIMARY KEY REFERENCES account (id) ON DELETE CASCADE,
  sealed_secret BLOB NOT NULL CHECK (typeof(sealed_secret) = 'blob' AND length(sealed_secret) > 28),
  key_id TEXT NOT NULL CHECK (length(key_id) = 16),
  expires_at TEXT NOT NULL
) STRICT;

-- A named set of accounts. Names follow Linux's rules (Debian's NAME_REGEX,
-- ^[a-z_][a-z0-9_-]*$, 1 to 32 characters), so that each can become a Linux group.
CREATE TABLE account_group (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE CHECK (
    length(name) BETWEEN 1 AND 32 AND substr(name, 1, 1) GLOB '[a-z_]'
    AND name NOT GLOB '*[^a-z0-9_-]*'),
  created_at TEXT NOT NULL
, gid INTEGER REFERENCES posix_id (number)) STRICT;

-- One group per gid (NULL until its first group record).
CREATE UNIQUE INDEX account_group_by_gid ON account_group (gid);

-- Which accounts belong to which groups; a membership goes with its account or its group.
CREATE TABLE group_member (
  account_id INTEGER NOT NULL REFERENCES account (id) ON DELETE CASCADE,
  group_id INTEGER NOT NULL REFERENCES account_group (id) ON DELETE CASCADE,
  PRIMARY KEY (account_id, group_id)
) STRICT, WITHOUT ROWID;

CREATE INDEX group_member_by_group ON group_member (group_id, account_id);

-- Every number ever handed out as a uid (with its per-user group's gid, the same number) or
-- as a group's gid. Never deleted, not even by reset.
CREATE TABLE posix_id (
  number INTEGER PRIMARY KEY CHECK (number BETWEEN 1000 AND 2147483647),
  kind TEXT NOT NULL CHECK (kind IN ('user', 'group')),
  name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
  given_at TEXT NOT NULL
) STRICT;

-- Every home folder ever given to an account with a uid (migration "v8"): never given twice,
-- never deleted, not even by reset.
CREATE TABLE home_path (
  path TEXT PRIMARY KEY CHECK (
    substr(path, 1, 1) = '/' AND length(path) <= 1024 AND path NOT GLOB '*:*'),
  uid INTEGER NOT NULL REFERENCES posix_id (number),
  given_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- The store's user record settings: its identity and the range uids and gids come from.
CREATE TABLE userdb_setting (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  store_id TEXT NOT NULL CHECK (length(store_id) = 32 AND store_id NOT GLOB '*[^0-9a-f]*'),
  first_uid INTEGER NOT NULL,
  last_uid INTEGER NOT NULL,
  CHECK (1000 <= first_uid AND first_uid <= last_uid AND last_uid <= 2147483647)
) STRICT;

-- The hosts that keep user records of this store, by host name, and in which folder.
CREATE TABLE userdb_host (
  host TEXT NOT NULL PRIMARY KEY CHECK (length(host) BETWEEN 1 AND 255),
  folder TEXT NOT NULL CHECK (substr(folder, 1, 1) = '/' AND length(folder) <= 1024),
  enabled_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- An account's SSH public keys (authorized_keys lines without options).
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

INSERT INTO audit_kind (name) VALUES
  ('activation'),
  ('login_success'),
  ('login_failure'),
  ('lockout'),
  ('unlock'),
  ('reset'),
  ('account_added'),
  ('account_edited'),
  ('account_disabled'),
  ('account_enabled'),
  ('account_removed'),
  ('password_changed'),
  ('password_set'),
  ('ownership_moved'),
  ('logout'),
  ('session_revoked'),
  ('second_factor_enabled'),
  ('second_factor_disabled'),
  ('second_factor_reset'),
  ('recovery_codes_made'),
  ('recovery_code_used'),
  ('accounts_imported'),
  ('accounts_exported'),
  ('group_added'),
  ('group_removed'),
  ('group_member_added'),
  ('group_member_removed'),
  ('pam_session_opened'),
  ('pam_session_closed'),
  ('ssh_key_added'),
  ('ssh_key_removed'),
  ('access_refused'),
  ('userdb_enabled'),
  ('userdb_disabled'),
  ('userdb_synced'),
  ('fleet_host_added'),
  ('fleet_host_removed'),
  ('store_upgraded');

-- Migration "v12": the change counter and the change of each account and group.
-- The store's change counter: one more for every row change a user record reads (accounts,
-- groups, memberships, SSH keys), in the same transaction. A records folder keeps the value
-- it last applied, so a host knows what it is behind by one read.
CREATE TABLE userdb_generation (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  generation INTEGER NOT NULL CHECK (generation >= 0)
) STRICT;

-- Which account ('user', its id) or group ('group', its id) changed last at which value of
-- the counter: one row each (kept after a removal, so that a host behind removes its files).
CREATE TABLE userdb_change (
  kind TEXT NOT NULL CHECK (kind IN ('user', 'group')),
  entity_id INTEGER NOT NULL,
  generation INTEGER NOT NULL,
  PRIMARY KEY (kind, entity_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX userdb_change_by_generation ON userdb_change (generation);

CREATE TRIGGER userdb_account_added AFTER INSERT ON account BEGIN
  UPDATE userdb_generation SET generation = generation + 1 WHERE id = 1;
  INSERT INTO userdb_change (kind, entity_id, generation)
  SELECT 'user', NEW.id, generation FROM userdb_generation WHERE id = 1
  ON CONFLICT (kind, entity_id) DO UPDATE SET generation = excluded.generation;
END;
CREATE TRIGGER userdb_account_changed
AFTER UPDATE OF username, full_name, disabled_at, expires_at, uid, home, shell ON account BEGIN
  UPDATE userdb_generation SET generation = generation + 1 WHERE id = 1;
  INSERT INTO userdb_change (kind, entity_id, generation)
  SELECT 'user', NEW.id, generation FROM userdb_generation WHERE id = 1
  ON CONFLICT (kind, entity_id) DO UPDATE SET generation = excluded.generation;
END;
CREATE TRIGGER userdb_account_removed AFTER DELETE ON account BEGIN
  UPDATE userdb_generation SET generation = generation + 1 WHERE id = 1;
  INSERT INTO userdb_change (kind, entity_id, generation)
  SELECT 'user', OLD.id, generation FROM userdb_generation WHERE id = 1
  ON CONFLICT (kind, entity_id) DO UPDATE SET generation = excluded.generation;
END;
CREATE TRIGGER userdb_group_added AFTER INSERT ON account_group BEGIN
  UPDATE userdb_generation SET generation = generation + 1 WHERE id = 1;
  INSERT INTO userdb_change (kind, entity_id, generation)
  SELECT 'group', NEW.id, generation FROM userdb_generation WHERE id = 1
  ON CONFLICT (kind, entity_id) DO UPDATE SET generation = excluded.generation;
END;
-- A group's name and number are in its members' records (memberOf, NAME:GROUP.membership).
CREATE TRIGGER userdb_group_changed AFTER UPDATE OF name, gid ON account_group BEGIN
  UPDATE userdb_generation SET generation = generation + 1 WHERE id = 1;
  INSERT INTO userdb_change (kind, entity_id, generation)
  SELECT 'group', NEW.id, generation FROM userdb_generation WHERE id = 1
  ON CONFLICT (kind, entity_id) DO UPDATE SET generation = excluded.generation;
  INSERT INTO userdb_change (kind, entity_id, generation)
  SELECT 'user', group_member.account_id, userdb_generation.generation
  FROM group_member, userdb_generation
  WHERE group_member.group_id = NEW.id AND userdb_generation.id = 1
  ON CONFLICT (kind, entity_id) DO UPDATE SET generation = excluded.generation;
END;
CREATE TRIGGER userdb_group_removed AFTER DELETE ON account_group BEGIN
  UPDATE userdb_generation SET generation = generation + 1 WHERE id = 1;
  INSERT INTO userdb_change (kind, entity_id, generation)
  SELECT 'group', OLD.id, generation FROM userdb_generation WHERE id = 1
  ON CONFLICT (kind, entity_id) DO UPDATE SET generation = excluded.generation;
END;
CREATE TRIGGER userdb_member_added AFTER INSERT ON group_member BEGIN
  UPDATE userdb_generation SET generation = generation + 1 WHERE id = 1;
  INSERT INTO userdb_change (kind, entity_id, generation)
  SELECT 'user', NEW.account_id, generation FROM userdb_generation WHERE id = 1
  ON CONFLICT (kind, entity_id) DO UPDATE SET generation = excluded.generation;
END;
CREATE TRIGGER userdb_member_removed AFTER DELETE ON group_member BEGIN
  UPDATE userdb_generation SET generation = generation + 1 WHERE id = 1;
  INSERT INTO userdb_change (kind, entity_id, generation)
  SELECT 'user', OLD.account_id, generation FROM userdb_generation WHERE id = 1
  ON CONFLICT (kind, entity_id) DO UPDATE SET generation = excluded.generation;
END;
CREATE TRIGGER userdb_key_added AFTER INSERT ON ssh_key BEGIN
  UPDATE userdb_generation SET generation = generation + 1 WHERE id = 1;
  INSERT INTO userdb_change (kind, entity_id, generation)
  SELECT 'user', NEW.account_id, generation FROM userdb_generation WHERE id = 1
  ON CONFLICT (kind, entity_id) DO UPDATE SET generation = excluded.generation;
END;
CREATE TRIGGER userdb_key_removed AFTER DELETE ON ssh_key BEGIN
  UPDATE userdb_generation SET generation = generation + 1 WHERE id = 1;
  INSERT INTO userdb_change (kind, entity_id, generation)
  SELECT 'user', OLD.account_id, generation FROM userdb_generation WHERE id = 1
  ON CONFLICT (kind, entity_id) DO UPDATE SET generation = excluded.generation;
END;
