/// The SQL of PostgreSQL migration "v11" (SQLite's "v9"): the log an administrator reads.
///
/// New kinds of events (PAM's refusals, the user records' changes), and the two steps a host
/// role takes to write them: like every host step, `SECURITY DEFINER` with its `search_path`
/// pinned, revoked from PUBLIC (`accounts store roles` grants them to the host role), and each
/// writes only the kinds it names, so that a host role cannot write any other event through
/// them. Never edit it once shipped.
let postgresSchemaV11 = """
  INSERT INTO accounts.audit_kind (name) VALUES
    ('access_refused'), ('userdb_enabled'), ('userdb_disabled'), ('userdb_synced');

  -- What PAM's stages decided about the account p_key (id p_expected_id): 'login_success' (a
  -- session opened without this module's auth, a key login) also stamps the account's last
  -- login, refused (false) for an account disabled or expired at p_now; 'access_refused' (the
  -- account stage's refusal) is only logged. False when that account is gone.
  CREATE FUNCTION accounts.pam_account_event(
    p_kind text, p_key text, p_expected_id bigint, p_now timestamptz, p_wait_ms integer,
    p_detail text, p_host text)
  RETURNS boolean
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  DECLARE
    acct accounts.account%ROWTYPE;
  BEGIN
    IF p_kind IS NULL OR p_kind NOT IN ('login_success', 'access_refused') THEN
      RAISE EXCEPTION 'accounts.pam_account_event writes no event of kind %', p_kind
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    p_now := accounts.step_time(p_now);
    PERFORM accounts.take_write_turn(p_wait_ms);
    SELECT * INTO acct FROM accounts.account AS a
    WHERE a.username_key = p_key AND a.id = p_expected_id;
    IF acct.id IS NULL THEN
      RETURN false;
    END IF;
    IF p_kind = 'login_success' THEN
      IF acct.disabled_at IS NOT NULL OR acct.expires_at <= p_now THEN
        RETURN false;
      END IF;
      UPDATE accounts.account AS a SET last_login_at = p_now WHERE a.id = acct.id;
    END IF;
    INSERT INTO accounts.audit_event (occurred_at, kind, username, username_key, detail, host)
    VALUES (p_now, p_kind, acct.username, acct.username_key, p_detail, p_host);
    RETURN true;
  END $$;

  -- A host's user records turned on or off, or synced (p_detail: the folder and the counts).
  CREATE FUNCTION accounts.userdb_event(
    p_kind text, p_now timestamptz, p_wait_ms integer, p_detail text, p_host text)
  RETURNS void
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  BEGIN
    IF p_kind IS NULL
       OR p_kind NOT IN ('userdb_enabled', 'userdb_disabled', 'userdb_synced') THEN
      RAISE EXCEPTION 'accounts.userdb_event writes no event of kind %', p_kind
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    p_now := accounts.step_time(p_now);
    PERFORM accounts.take_write_turn(p_wait_ms);
    INSERT INTO accounts.audit_event (occurred_at, kind, username, username_key, detail, host)
    VALUES (p_now, p_kind, NULL, NULL, p_detail, p_host);
  END $$;

  REVOKE ALL ON FUNCTION accounts.pam_account_event(text, text, bigint, timestamptz, integer,
    text, text) FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.userdb_event(text, timestamptz, integer, text, text)
    FROM PUBLIC;
  """
