/// The SQL of PostgreSQL migration "v12": a new second factor's secret waiting for its first
/// code (SQLite's "v10"); never edit it once shipped.
///
/// `2fa enable --begin` keeps the secret pending, `2fa enable --confirm` turns it on with a
/// code of it. A host role writes no table: both steps are functions it may call, each one
/// whole step in the write turn, refused ('gone') to a caller that does not administer unless
/// it proves the password (the whole stored hash, as `accounts.second_factor_change` takes it).
/// Such a caller does not choose the time (the server's clock) nor a longer wait than the
/// standard 10 minutes.
let postgresSchemaV12 = """
  -- A new TOTP secret waiting for its first code, sealed as a second factor's is, but never a
  -- second factor. It goes with its account.
  CREATE TABLE accounts.pending_second_factor (
    account_id bigint PRIMARY KEY REFERENCES accounts.account (id) ON DELETE CASCADE,
    sealed_secret bytea NOT NULL CHECK (length(sealed_secret) > 28),
    key_id text NOT NULL CHECK (char_length(key_id) = 16),
    expires_at timestamptz NOT NULL
  );

  -- `2fa enable --begin` after the password was checked: p_sealed (under p_key_id) kept
  -- pending for p_lifetime seconds, replacing any pending one. Refused ('gone') when the
  -- account is gone, disabled, expired or had its password changed since p_expected_changed,
  -- and ('already_on') when it has a second factor. Returns 'stored' and the expiry, or why not.
  CREATE FUNCTION accounts.second_factor_begin(
    p_key text, p_expected_id bigint, p_expected_changed text, p_now timestamptz,
    p_wait_ms integer, p_sealed bytea, p_key_id text, p_lifetime double precision,
    p_proof text)
  RETURNS TABLE (r_outcome text, r_until text)
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  DECLARE
    acct accounts.account%ROWTYPE;
    v_until timestamptz;
  BEGIN
    IF NOT accounts.caller_administers() THEN
      p_lifetime := least(p_lifetime, 600);
      IF NOT accounts.password_proven(p_key, p_wait_ms, p_proof) THEN
        RETURN QUERY SELECT 'gone'::text, NULL::text;
        RETURN;
      END IF;
    END IF;
    p_now := accounts.step_time(p_now);
    PERFORM accounts.take_write_turn(p_wait_ms);
    SELECT * INTO acct FROM accounts.account AS a WHERE a.username_key = p_key;
    IF acct.id IS NULL OR acct.id <> p_expected_id
       OR accounts.stamp(acct.password_changed_at) <> p_expected_changed
       OR acct.disabled_at IS NOT NULL OR acct.expires_at <= p_now THEN
      RETURN QUERY SELECT 'gone'::text, NULL::text;
      RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM accounts.second_factor AS f WHERE f.account_id = acct.id) THEN
      RETURN QUERY SELECT 'already_on'::text, NULL::text;
      RETURN;
    END IF;
    v_until := p_now + make_interval(secs => greatest(p_lifetime, 0));
    INSERT INTO accounts.pending_second_factor (account_id, sealed_secret, key_id, expires_at)
    VALUES (acct.id, p_sealed, p_key_id, v_until)
    ON CONFLICT (account_id) DO UPDATE
    SET sealed_secret = EXCLUDED.sealed_secret, key_id = EXCLUDED.key_id,
      expires_at = EXCLUDED.expires_at;
    RETURN QUERY SELECT 'stored'::text, accounts.stamp(v_until);
  END $$;

  -- `2fa enable --confirm` after the password and a code of the pending secret p_sealed were
  -- checked: the pending secret becomes the second factor at p_last_step with the recovery
  -- codes p_code_hashes, is deleted, the change logged and every other session of the account
  -- ended (the one whose token hash is p_keeping stays). A pending secret that expired is
  -- deleted ('expired'); with p_sealed NULL only that is done ('pending' when it has not).
  -- Returns 'changed', or 'gone', 'no_pending', 'expired', 'replaced' (another pending secret
  -- than p_sealed), 'already_on', 'pending'.
  CREATE FUNCTION accounts.second_factor_confirm(
    p_key text, p_expected_id bigint, p_expected_changed text, p_now timestamptz,
    p_wait_ms integer, p_sealed bytea, p_last_step bigint, p_code_hashes bytea[],
    p_keeping bytea, p_host text, p_proof text)
  RETURNS text
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  DECLARE
    acct accounts.account%ROWTYPE;
    pend accounts.pending_second_factor%ROWTYPE;
  BEGIN
    IF NOT accounts.caller_administers()
       AND NOT accounts.password_proven(p_key, p_wait_ms, p_proof) THEN
      RETURN 'gone';
    END IF;
    p_now := accounts.step_time(p_now);
    PERFORM accounts.take_write_turn(p_wait_ms);
    SELECT * INTO acct FROM accounts.account AS a WHERE a.username_key = p_key;
    IF acct.id IS NULL OR acct.id <> p_expected_id
       OR accounts.stamp(acct.password_changed_at) <> p_expected_changed
       OR acct.disabled_at IS NOT NULL OR acct.expires_at <= p_now THEN
      RETURN 'gone';
    END IF;
    SELECT * INTO pend FROM accounts.pending_second_factor AS p WHERE p.account_id = acct.id;
    IF pend.account_id IS NULL THEN
      RETURN 'no_pending';
    END IF;
    IF pend.expires_at <= p_now THEN
      DELETE FROM accounts.pending_second_factor AS p WHERE p.account_id = acct.id;
      RETURN 'expired';
    END IF;
    IF p_sealed IS NULL THEN
      RETURN 'pending';
    END IF;
    IF pend.sealed_secret <> p_sealed THEN
      RETURN 'replaced';
    END IF;
    IF EXISTS (SELECT 1 FROM accounts.second_factor AS f WHERE f.account_id = acct.id) THEN
      RETURN 'already_on';
    END IF;
    INSERT INTO accounts.second_factor (account_id, sealed_secret, key_id, last_step,
      enabled_at)
    VALUES (acct.id, pend.sealed_secret, pend.key_id, p_last_step, p_now);
    INSERT INTO accounts.recovery_code (account_id, code_hash)
    SELECT acct.id, h FROM unnest(p_code_hashes) AS h;
    DELETE FROM accounts.pending_second_factor AS p WHERE p.account_id = acct.id;
    INSERT INTO accounts.audit_event (occurred_at, kind, username, username_key, detail, host)
    VALUES (p_now, 'second_factor_enabled', acct.username, acct.username_key, NULL, p_host);
    DELETE FROM accounts.session AS s
    WHERE s.account_id = acct.id AND s.token_hash IS DISTINCT FROM p_keeping;
    RETURN 'changed';
  END $$;

  REVOKE ALL ON FUNCTION accounts.second_factor_begin(text, bigint, text, timestamptz, integer,
    bytea, text, double precision, text) FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.second_factor_confirm(text, bigint, text, timestamptz,
    integer, bytea, bigint, bytea[], bytea, text, text) FROM PUBLIC;
  """
