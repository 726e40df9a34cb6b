/// The step of migration "v17" that turns a pending secret on with a typed code:
/// `2fa enable --confirm` on a host that never holds the secret.
///
/// As `accounts.second_factor_confirm` (migration "v12"), but the server checks `p_code`
/// against the pending secret it keeps encrypted, as far as enrolment looks (20 steps, 10
/// minutes, either way): a code further than one step from the server's clock is told as a
/// clock that is off ('clock_off', with the seconds), none at all as 'code_wrong'; the pending
/// secret stays for another try either way.
let postgresSchemaV17Confirm = """
  -- `2fa enable --begin` as before, a secret that replaces a pending one replacing it whole,
  -- whichever column keeps it.
  CREATE OR REPLACE FUNCTION accounts.second_factor_begin(
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
      server_secret = EXCLUDED.server_secret, expires_at = EXCLUDED.expires_at;
    RETURN QUERY SELECT 'stored'::text, accounts.stamp(v_until);
  END $$;

  CREATE FUNCTION accounts.second_factor_confirm_code(
    p_key text, p_expected_id bigint, p_expected_changed text, p_now timestamptz,
    p_wait_ms integer, p_code text, p_code_hashes bytea[], p_keeping bytea, p_host text,
    p_proof text)
  RETURNS TABLE (r_outcome text, r_seconds bigint)
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  DECLARE
    acct accounts.account%ROWTYPE;
    pend accounts.pending_second_factor%ROWTYPE;
    matched bigint;
    current_step bigint;
  BEGIN
    IF NOT accounts.caller_administers()
       AND NOT accounts.password_proven(p_key, p_wait_ms, p_proof) THEN
      RETURN QUERY SELECT 'gone'::text, NULL::bigint;
      RETURN;
    END IF;
    p_now := accounts.step_time(p_now);
    PERFORM accounts.take_write_turn(p_wait_ms);
    SELECT * INTO acct FROM accounts.account AS a WHERE a.username_key = p_key;
    IF acct.id IS NULL OR acct.id <> p_expected_id
       OR accounts.stamp(acct.password_changed_at) <> p_expected_changed
       OR acct.disabled_at IS NOT NULL OR acct.expires_at <= p_now THEN
      RETURN QUERY SELECT 'gone'::text, NULL::bigint;
      RETURN;
    END IF;
    SELECT * INTO pend FROM accounts.pending_second_factor AS p WHERE p.account_id = acct.id;
    IF pend.account_id IS NULL THEN
      RETURN QUERY SELECT 'no_pending'::text, NULL::bigint;
      RETURN;
    END IF;
    IF pend.expires_at <= p_now THEN
      DELETE FROM accounts.pending_second_factor AS p WHERE p.account_id = acct.id;
      RETURN QUERY SELECT 'expired'::text, NULL::bigint;
      RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM accounts.second_factor AS f WHERE f.account_id = acct.id) THEN
      RETURN QUERY SELECT 'already_on'::text, NULL::bigint;
      RETURN;
    END IF;
    IF pend.server_secret IS NOT NULL THEN
      matched := accounts.totp_step(accounts.server_open(pend.server_secret), p_code, p_now, 20);
    END IF;
    IF matched IS NULL THEN
      RETURN QUERY SELECT 'code_wrong'::text, NULL::bigint;
      RETURN;
    END IF;
    current_step := floor(extract(epoch FROM p_now) / 30)::bigint;
    IF abs(matched - current_step) > 1 THEN
      RETURN QUERY SELECT 'clock_off'::text, (matched - current_step) * 30;
      RETURN;
    END IF;
    INSERT INTO accounts.second_factor (account_id, server_secret, last_step, enabled_at)
    VALUES (acct.id, pend.server_secret, matched, p_now);
    INSERT INTO accounts.recovery_code (account_id, code_hash)
    SELECT acct.id, h FROM unnest(p_code_hashes) AS h;
    DELETE FROM accounts.pending_second_factor AS p WHERE p.account_id = acct.id;
    INSERT INTO accounts.audit_event (occurred_at, kind, username, username_key, detail, host)
    VALUES (p_now, 'second_factor_enabled', acct.username, acct.username_key, NULL, p_host);
    DELETE FROM accounts.session AS s
    WHERE s.account_id = acct.id AND s.token_hash IS DISTINCT FROM p_keeping;
    RETURN QUERY SELECT 'changed'::text, NULL::bigint;
  END $$;

  -- Every second factor as `store copy` carries it to another store: a secret the server
  -- encrypted in the clear, under the key id 'server-encrypted' (the target encrypts or seals
  -- it again), one sealed under a key file as it is. For a caller that administers only.
  CREATE FUNCTION accounts.second_factor_copy()
  RETURNS TABLE (account_id bigint, sealed_secret bytea, key_id text, last_step bigint,
                 enabled_at timestamptz)
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  BEGIN
    IF NOT accounts.caller_administers() THEN
      RAISE EXCEPTION 'permission denied for the second factors'' secrets'
        USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN QUERY
    SELECT f.account_id, coalesce(f.sealed_secret, accounts.server_open(f.server_secret)),
      coalesce(f.key_id, 'server-encrypted'), f.last_step, f.enabled_at
    FROM accounts.second_factor AS f ORDER BY f.account_id;
  END $$;

  REVOKE ALL ON FUNCTION accounts.second_factor_copy() FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.second_factor_confirm_code(text, bigint, text, timestamptz,
    integer, text, bytea[], bytea, text, text) FROM PUBLIC;
  """
