/// The SQL of migration "v12" (ranges above 65535; the store's change counter and which
/// accounts and groups each change touched); never edit it once shipped.
let schemaV12 = """
  -- Migration "v12": a store's range may lie anywhere from 1000 to 2147483647 (the core refuses
  -- the ranges systemd and Debian reserve), so `posix_id` and `userdb_setting` are rebuilt with
  -- the wider CHECK, every row copied.
  CREATE TABLE posix_id_v12 (
    number INTEGER PRIMARY KEY CHECK (number BETWEEN 1000 AND 2147483647),
    kind TEXT NOT NULL CHECK (kind IN ('user', 'group')),
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
    given_at TEXT NOT NULL
  ) STRICT;
  INSERT INTO posix_id_v12 (number, kind, name, given_at)
  SELECT number, kind, name, given_at FROM posix_id;
  DROP TABLE posix_id;
  ALTER TABLE posix_id_v12 RENAME TO posix_id;

  CREATE TABLE userdb_setting_v12 (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    store_id TEXT NOT NULL CHECK (length(store_id) = 32 AND store_id NOT GLOB '*[^0-9a-f]*'),
    first_uid INTEGER NOT NULL,
    last_uid INTEGER NOT NULL,
    CHECK (1000 <= first_uid AND first_uid <= last_uid AND last_uid <= 2147483647)
  ) STRICT;
  INSERT INTO userdb_setting_v12 (id, store_id, first_uid, last_uid)
  SELECT id, store_id, first_uid, last_uid FROM userdb_setting;
  DROP TABLE userdb_setting;
  ALTER TABLE userdb_setting_v12 RENAME TO userdb_setting;

  -- The store's change counter: one more for every row change a user record reads (accounts,
  -- groups, memberships, SSH keys), in the same transaction. A records folder keeps the value
  -- it last applied, so a host knows what it is behind by one read.
  CREATE TABLE userdb_generation (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    generation INTEGER NOT NULL CHECK (generation >= 0)
  ) STRICT;
  INSERT INTO userdb_generation (id, generation) VALUES (1, 0);

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
  """
