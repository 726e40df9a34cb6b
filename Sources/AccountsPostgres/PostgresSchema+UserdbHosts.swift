/// The SQL of PostgreSQL migration "v13": a host's own user record settings as host steps;
/// never edit it once shipped.
///
/// A fleet host's `userdb enable` (without `--uids`) and `disable` write only that host's entry
/// in `userdb_host`; a host role writes no table, so both are functions it may call, like every
/// host step `SECURITY DEFINER` with its `search_path` pinned, revoked from PUBLIC (`accounts
/// store roles` grants them to the host role), each in the write turn. Neither writes the range
/// nor any number: those stay the administrator's. One host role serves the whole fleet, so a
/// step names its host as every host step does (the host stamped on its events).
let postgresSchemaV13 = """
  -- `userdb enable` without --uids: the host p_host keeps user records in p_folder, its entry
  -- renewed at p_now (the server's clock for a caller that does not administer), unless it
  -- keeps them in another folder already. Returns the folder its entry names.
  CREATE FUNCTION accounts.userdb_host_keep(
    p_host text, p_folder text, p_now timestamptz, p_wait_ms integer)
  RETURNS text
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  DECLARE
    v_folder text;
  BEGIN
    p_now := accounts.step_time(p_now);
    PERFORM accounts.take_write_turn(p_wait_ms);
    INSERT INTO accounts.userdb_host AS h (host, folder, enabled_at)
    VALUES (p_host, p_folder, p_now)
    ON CONFLICT (host) DO UPDATE SET enabled_at = EXCLUDED.enabled_at
    WHERE h.folder = EXCLUDED.folder;
    SELECT h.folder INTO v_folder FROM accounts.userdb_host AS h WHERE h.host = p_host;
    RETURN v_folder;
  END $$;

  -- `userdb disable`: the host p_host forgotten; false when it kept no records. Its caller
  -- removes the host's files before it commits.
  CREATE FUNCTION accounts.userdb_host_forget(p_host text, p_wait_ms integer)
  RETURNS boolean
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  BEGIN
    PERFORM accounts.take_write_turn(p_wait_ms);
    DELETE FROM accounts.userdb_host AS h WHERE h.host = p_host;
    RETURN FOUND;
  END $$;

  REVOKE ALL ON FUNCTION accounts.userdb_host_keep(text, text, timestamptz, integer)
    FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.userdb_host_forget(text, integer) FROM PUBLIC;
  """
