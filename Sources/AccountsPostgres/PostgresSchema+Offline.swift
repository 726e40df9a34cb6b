/// The SQL of PostgreSQL migration "v16" (no SQLite migration: a host's login cache belongs to
/// a PostgreSQL store): the events of logins a host's login cache answered while the server was
/// away, delivered later, each exactly once.
///
/// `offline_id` is the random id the host gave the event when it queued it: the mark that it
/// happened offline, and unique, so that an event delivered again (the host stopped after the
/// server committed it and before its cache forgot it) is not written twice. A host role
/// delivers through `accounts.audit_offline_event`, `SECURITY DEFINER` with its `search_path`
/// pinned like every host step, which writes only the kinds an offline login writes, at the
/// time the host gives (never in the future). Never edit it once shipped.
let postgresSchemaV16 = """
  ALTER TABLE accounts.audit_event ADD COLUMN offline_id text
    CONSTRAINT audit_event_offline_id_key UNIQUE
    CHECK (offline_id IS NULL OR offline_id ~ '^[0-9a-f]{32}$');

  -- One offline event of a host's login cache: true when written, false when an event of that
  -- id is already in the log.
  CREATE FUNCTION accounts.audit_offline_event(
    p_offline_id text, p_at timestamptz, p_kind text, p_username text, p_key text,
    p_detail text, p_host text, p_wait_ms integer)
  RETURNS boolean
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  DECLARE
    written integer;
  BEGIN
    IF p_kind IS NULL
       OR p_kind NOT IN ('login_success', 'login_failure', 'lockout', 'recovery_code_used') THEN
      RAISE EXCEPTION 'accounts.audit_offline_event writes no event of kind %', p_kind
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_at IS NULL OR p_at > pg_catalog.now() + interval '5 minutes' THEN
      RAISE EXCEPTION 'accounts.audit_offline_event takes no event of a time to come'
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM accounts.take_write_turn(p_wait_ms);
    INSERT INTO accounts.audit_event
      (occurred_at, kind, username, username_key, detail, host, offline_id)
    VALUES (p_at, p_kind, p_username, p_key, p_detail, p_host, p_offline_id)
    ON CONFLICT (offline_id) DO NOTHING;
    GET DIAGNOSTICS written = ROW_COUNT;
    RETURN written = 1;
  END $$;

  REVOKE ALL ON FUNCTION accounts.audit_offline_event(text, timestamptz, text, text, text, text,
    text, integer) FROM PUBLIC;
  """
