/// The SQL of migration "v1", identical to `schema.sql` at the top of the repository.
///
/// A test compares the two. Never edit a shipped migration: add a new one.
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
