/// The SQL of PostgreSQL migration "v14" (SQLite's "v12": ranges above 65535, the store's
/// change counter and which accounts and groups each change touched); never edit it once
/// shipped.
let postgresSchemaV14 = """
  -- A store's range may lie anywhere from 1000 to 2147483647 (the core refuses the ranges
  -- systemd and Debian reserve).
  ALTER TABLE accounts.posix_id DROP CONSTRAINT posix_id_number_check,
    ADD CONSTRAINT posix_id_number_check CHECK (number BETWEEN 1000 AND 2147483647);
  ALTER TABLE accounts.userdb_setting DROP CONSTRAINT userdb_setting_check,
    ADD CONSTRAINT userdb_setting_check
      CHECK (1000 <= first_uid AND first_uid <= last_uid AND last_uid <= 2147483647);

  -- The store's change counter: one more for every row change a user record reads (accounts,
  -- groups, memberships, SSH keys), in the same transaction (its row's lock orders the
  -- commits). A records folder keeps the value it last applied, so a host knows what it is
  -- behind by one read.
  CREATE TABLE accounts.userdb_generation (
    id integer PRIMARY KEY CHECK (id = 1),
    generation bigint NOT NULL CHECK (generation >= 0)
  );
  INSERT INTO accounts.userdb_generation (id, generation) VALUES (1, 0);

  -- Which account ('user', its id) or group ('group', its id) changed last at which value of
  -- the counter: one row each (kept after a removal, so that a host behind removes its files).
  CREATE TABLE accounts.userdb_change (
    kind text NOT NULL CHECK (kind IN ('user', 'group')),
    entity_id bigint NOT NULL,
    generation bigint NOT NULL,
    PRIMARY KEY (kind, entity_id)
  );
  CREATE INDEX userdb_change_by_generation ON accounts.userdb_change (generation);

  -- Counts a change and notes whose it is: the row's own id (accounts, groups) or its
  -- account's (memberships, SSH keys); a group renamed or numbered notes its members too. Runs
  -- as the schema's owner: whoever may change a row changes the counter with it, and no role
  -- writes the counter itself.
  CREATE FUNCTION accounts.userdb_note_change() RETURNS trigger
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $note$
  DECLARE
    g bigint;
    changed record;
    whose text := TG_ARGV[0];
    entity bigint;
  BEGIN
    IF TG_OP = 'DELETE' THEN changed := OLD; ELSE changed := NEW; END IF;
    UPDATE accounts.userdb_generation SET generation = generation + 1 WHERE id = 1
    RETURNING generation INTO g;
    IF TG_TABLE_NAME IN ('account', 'account_group') THEN
      entity := changed.id;
    ELSE
      entity := changed.account_id;
    END IF;
    INSERT INTO accounts.userdb_change (kind, entity_id, generation) VALUES (whose, entity, g)
    ON CONFLICT (kind, entity_id) DO UPDATE SET generation = excluded.generation;
    IF TG_TABLE_NAME = 'account_group' AND TG_OP = 'UPDATE' THEN
      INSERT INTO accounts.userdb_change (kind, entity_id, generation)
      SELECT 'user', m.account_id, g FROM accounts.group_member AS m WHERE m.group_id = entity
      ON CONFLICT (kind, entity_id) DO UPDATE SET generation = excluded.generation;
    END IF;
    RETURN NULL;
  END
  $note$;
  REVOKE ALL ON FUNCTION accounts.userdb_note_change() FROM PUBLIC;

  CREATE TRIGGER userdb_account_added AFTER INSERT OR DELETE ON accounts.account
  FOR EACH ROW EXECUTE FUNCTION accounts.userdb_note_change('user');
  CREATE TRIGGER userdb_account_changed
  AFTER UPDATE OF username, full_name, disabled_at, expires_at, uid, home, shell
  ON accounts.account FOR EACH ROW EXECUTE FUNCTION accounts.userdb_note_change('user');
  CREATE TRIGGER userdb_group_added AFTER INSERT OR DELETE ON accounts.account_group
  FOR EACH ROW EXECUTE FUNCTION accounts.userdb_note_change('group');
  CREATE TRIGGER userdb_group_changed AFTER UPDATE OF name, gid ON accounts.account_group
  FOR EACH ROW EXECUTE FUNCTION accounts.userdb_note_change('group');
  CREATE TRIGGER userdb_member_changed AFTER INSERT OR DELETE ON accounts.group_member
  FOR EACH ROW EXECUTE FUNCTION accounts.userdb_note_change('user');
  CREATE TRIGGER userdb_key_changed AFTER INSERT OR DELETE ON accounts.ssh_key
  FOR EACH ROW EXECUTE FUNCTION accounts.userdb_note_change('user');
  """
