/// The SQL of PostgreSQL migration "v6": what a fleet host does, as functions a host role may
/// call (`accounts store roles`).
///
/// A host role may not write a table: everything a host writes goes through these functions
/// and the login steps of "v5" (`SECURITY DEFINER`, their `search_path` pinned, revoked from
/// PUBLIC), each one whole step that checks its own preconditions. A caller that may not
/// update `accounts.account` itself (a host role, not the owner or an administrator role) does
/// not choose the time or the rules: the steps then take the server's clock, a lockout policy
/// no looser than the standard one, and sessions no longer than the standard ones. The login
/// steps of "v5" keep their work under new names (`…_step`); the names a caller uses are the
/// wrappers that make those checks.
///
/// Sessions are found by the SHA-256 of their token, which a host role may not read: it can
/// touch or end only a session whose token it holds.
let postgresSchemaV6 = """
  -- Whether the role that connected may update accounts itself (the owner, an administrator
  -- role): only such a caller's clock and rules are taken.
  CREATE FUNCTION accounts.caller_administers() RETURNS boolean
  LANGUAGE sql STABLE SET search_path = pg_catalog
  RETURN has_table_privilege(session_user, 'accounts.account', 'UPDATE');

  -- The time a step records: the caller's when it administers, otherwise the server's.
  CREATE FUNCTION accounts.step_time(p_now timestamptz) RETURNS timestamptz
  LANGUAGE sql STABLE SET search_path = pg_catalog
  RETURN CASE WHEN accounts.caller_administers() THEN p_now
              ELSE date_trunc('milliseconds', statement_timestamp()) END;

  ALTER FUNCTION accounts.login_refusal(text, text, timestamptz, integer, text, text)
    RENAME TO login_refusal_step;
  ALTER FUNCTION accounts.login_failure(text, text, timestamptz, integer, bigint,
    double precision, double precision, double precision, text, text, text, text)
    RENAME TO login_failure_step;
  ALTER FUNCTION accounts.login_success(text, text, timestamptz, integer, bigint, text, text,
    boolean, bigint, bytea, bytea, double precision, bigint, bytea, text, text, text, text,
    text[], text[], text) RENAME TO login_success_step;

  -- accounts.login_refusal_step at the step's time.
  CREATE FUNCTION accounts.login_refusal(
    p_username text, p_key text, p_now timestamptz, p_wait_ms integer, p_detail text,
    p_host text)
  RETURNS timestamptz
  LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog
  RETURN accounts.login_refusal_step(p_username, p_key, accounts.step_time(p_now), p_wait_ms,
    p_detail, p_host);

  -- accounts.login_failure_step at the step's time; a host's policy no looser than the
  -- standard one (5 failures, a lock of a minute doubling up to an hour, forgotten after a day).
  CREATE FUNCTION accounts.login_failure(
    p_username text, p_key text, p_now timestamptz, p_wait_ms integer, p_threshold bigint,
    p_first_lock double precision, p_longest_lock double precision,
    p_forget_after double precision, p_detail text, p_refusal_detail text,
    p_lockout_detail text, p_host text)
  RETURNS TABLE (r_outcome text, r_failures bigint, r_until text)
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
  BEGIN
    IF NOT accounts.caller_administers() THEN
      p_threshold := least(greatest(p_threshold, 1), 5);
      p_first_lock := greatest(p_first_lock, 60);
      p_longest_lock := greatest(p_longest_lock, 3600);
      p_forget_after := greatest(p_forget_after, 86400);
    END IF;
    RETURN QUERY SELECT * FROM accounts.login_failure_step(p_username, p_key,
      accounts.step_time(p_now), p_wait_ms, p_threshold, p_first_lock, p_longest_lock,
      p_forget_after, p_detail, p_refusal_detail, p_lockout_detail, p_host);
  END $$;

  -- accounts.login_success_step at the step's time; a host's sessions no longer than the
  -- standard ones (a day, idle an hour).
  CREATE FUNCTION accounts.login_success(
    p_username text, p_key text, p_now timestamptz, p_wait_ms integer,
    p_expected_id bigint, p_expected_changed text, p_new_hash text, p_required_change boolean,
    p_step bigint, p_recovery_hash bytea, p_token_hash bytea,
    p_lifetime double precision, p_idle bigint, p_replacing bytea, p_origin text,
    p_gone_detail text, p_refusal_detail text, p_required_detail text,
    p_codes_left_details text[], p_reset_kinds text[], p_host text)
  RETURNS TABLE (r_outcome text, r_until text, r_full_name text, r_previous text,
                 r_failures_since bigint)
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
  BEGIN
    IF NOT accounts.caller_administers() THEN
      p_lifetime := least(p_lifetime, 86400);
      p_idle := least(p_idle, 3600);
    END IF;
    RETURN QUERY SELECT * FROM accounts.login_success_step(p_username, p_key,
      accounts.step_time(p_now), p_wait_ms, p_expected_id, p_expected_changed, p_new_hash,
      p_required_change, p_step, p_recovery_hash, p_token_hash, p_lifetime, p_idle,
      p_replacing, p_origin, p_gone_detail, p_refusal_detail, p_required_detail,
      p_codes_left_details, p_reset_kinds, p_host);
  END $$;

  -- The session whose token has the SHA-256 p_hash, as PostgresAccess reads one.
  CREATE FUNCTION accounts.session_by_token(p_hash bytea)
  RETURNS TABLE (id bigint, account_id bigint, created_at text, last_seen_at text,
                 expires_at text, idle_seconds bigint, idle_until text, second_factor boolean,
                 host text)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog
  AS $$
    SELECT s.id, s.account_id, accounts.stamp(s.created_at), accounts.stamp(s.last_seen_at),
      accounts.stamp(s.expires_at), s.idle_seconds, accounts.stamp(s.idle_until),
      s.second_factor, s.host
    FROM accounts.session AS s WHERE s.token_hash = p_hash
  $$;

  -- A use of the live session p_hash recorded: its last use and its idle limit moved on.
  -- Returns whether there was one.
  CREATE FUNCTION accounts.session_touch(p_hash bytea, p_now timestamptz, p_wait_ms integer)
  RETURNS boolean
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
  BEGIN
    p_now := accounts.step_time(p_now);
    PERFORM accounts.take_write_turn(p_wait_ms);
    UPDATE accounts.session AS s
    SET last_seen_at = p_now, idle_until = p_now + make_interval(secs => s.idle_seconds)
    WHERE s.token_hash = p_hash AND s.expires_at > p_now AND s.idle_until > p_now
      AND s.last_seen_at <= p_now;
    RETURN FOUND;
  END $$;

  -- Ends the session p_hash (with p_all, every session of its account), logging a logout
  -- unless p_quiet, with p_details[1] ('{id}' standing for the session's id), or with p_all
  -- p_details[2] for one session and p_details[3] ('{count}' for how many) for more. Returns
  -- how many ended.
  CREATE FUNCTION accounts.session_end(
    p_hash bytea, p_all boolean, p_now timestamptz, p_wait_ms integer, p_quiet boolean,
    p_details text[], p_host text)
  RETURNS bigint
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
  DECLARE
    found_session accounts.session%ROWTYPE;
    acct accounts.account%ROWTYPE;
    ended bigint;
  BEGIN
    p_now := accounts.step_time(p_now);
    PERFORM accounts.take_write_turn(p_wait_ms);
    SELECT * INTO found_session FROM accounts.session AS s WHERE s.token_hash = p_hash;
    IF found_session.id IS NULL THEN
      RETURN 0;
    END IF;
    SELECT * INTO acct FROM accounts.account AS a WHERE a.id = found_session.account_id;
    IF p_all THEN
      DELETE FROM accounts.session AS s WHERE s.account_id = found_session.account_id;
    ELSE
      DELETE FROM accounts.session AS s WHERE s.id = found_session.id;
    END IF;
    GET DIAGNOSTICS ended = ROW_COUNT;
    IF NOT p_quiet THEN
      INSERT INTO accounts.audit_event (occurred_at, kind, username, username_key, detail,
        host)
      VALUES (p_now, 'logout', acct.username, acct.username_key,
              CASE WHEN NOT p_all THEN replace(p_details[1], '{id}', found_session.id::text)
                   WHEN ended = 1 THEN p_details[2]
                   ELSE replace(p_details[3], '{count}', ended::text) END, p_host);
    END IF;
    RETURN ended;
  END $$;

  -- A change's second step accepted once, for the account p_account_id: the code's step p_step
  -- stored if later than the last one, or the recovery code p_recovery_hash marked used and
  -- logged (p_codes_left_details[n + 1] with n codes left); false when another process took
  -- it first. With neither: true. Called by the steps below, as their owner.
  CREATE FUNCTION accounts.accept_second_step(
    p_account_id bigint, p_step bigint, p_recovery_hash bytea, p_now timestamptz,
    p_codes_left_details text[], p_host text)
  RETURNS boolean
  LANGUAGE plpgsql SET search_path = pg_catalog AS $$
  DECLARE
    codes_left bigint;
  BEGIN
    IF p_step IS NOT NULL THEN
      UPDATE accounts.second_factor AS f SET last_step = p_step
      WHERE f.account_id = p_account_id AND f.last_step < p_step;
      RETURN FOUND;
    END IF;
    IF p_recovery_hash IS NULL THEN
      RETURN true;
    END IF;
    UPDATE accounts.recovery_code AS c SET used_at = p_now
    WHERE c.account_id = p_account_id AND c.code_hash = p_recovery_hash AND c.used_at IS NULL;
    IF NOT FOUND THEN
      RETURN false;
    END IF;
    SELECT count(*) INTO codes_left FROM accounts.recovery_code AS c
    WHERE c.account_id = p_account_id AND c.used_at IS NULL;
    INSERT INTO accounts.audit_event (occurred_at, kind, username, username_key, detail, host)
    SELECT p_now, 'recovery_code_used', a.username, a.username_key,
      coalesce(p_codes_left_details[codes_left + 1],
               p_codes_left_details[cardinality(p_codes_left_details)]), p_host
    FROM accounts.account AS a WHERE a.id = p_account_id;
    RETURN true;
  END $$;

  -- A person's own new password (`passwd`, PAM's password stage), after the current one was
  -- checked: refused ('gone') when the account is gone, disabled, expired or had its password
  -- changed since p_expected_changed; the second factor's step or recovery code accepted once
  -- ('code_used' when taken first); then the hash stored, must-change cleared, the tally
  -- cleared, logged (p_detail), and every other session of the account ended (the one whose
  -- token hash is p_keeping stays). Returns 'changed' or why not.
  CREATE FUNCTION accounts.change_password(
    p_key text, p_now timestamptz, p_wait_ms integer, p_expected_id bigint,
    p_expected_changed text, p_new_hash text, p_step bigint, p_recovery_hash bytea,
    p_codes_left_details text[], p_keeping bytea, p_detail text, p_host text)
  RETURNS text
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
  DECLARE
    acct accounts.account%ROWTYPE;
  BEGIN
    p_now := accounts.step_time(p_now);
    PERFORM accounts.take_write_turn(p_wait_ms);
    SELECT * INTO acct FROM accounts.account AS a WHERE a.username_key = p_key;
    IF acct.id IS NULL OR acct.id <> p_expected_id
       OR accounts.stamp(acct.password_changed_at) <> p_expected_changed
       OR acct.disabled_at IS NOT NULL OR acct.expires_at <= p_now THEN
      RETURN 'gone';
    END IF;
    IF NOT accounts.accept_second_step(acct.id, p_step, p_recovery_hash, p_now,
                                       p_codes_left_details, p_host) THEN
      RETURN 'code_used';
    END IF;
    UPDATE accounts.account AS a SET password_hash = p_new_hash,
      must_change_password = false, updated_at = p_now, password_changed_at = p_now
    WHERE a.id = acct.id;
    DELETE FROM accounts.login_throttle AS t WHERE t.username_key = p_key;
    INSERT INTO accounts.audit_event (occurred_at, kind, username, username_key, detail, host)
    VALUES (p_now, 'password_changed', acct.username, acct.username_key, p_detail, p_host);
    DELETE FROM accounts.session AS s
    WHERE s.account_id = acct.id AND s.token_hash IS DISTINCT FROM p_keeping;
    RETURN 'changed';
  END $$;

  -- An OS login or logout of the account p_key (id p_expected_id) logged by PAM's session
  -- stage; false when that account is gone.
  CREATE FUNCTION accounts.pam_session_event(
    p_key text, p_expected_id bigint, p_opened boolean, p_now timestamptz, p_wait_ms integer,
    p_detail text, p_host text)
  RETURNS boolean
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
  DECLARE
    acct accounts.account%ROWTYPE;
  BEGIN
    p_now := accounts.step_time(p_now);
    PERFORM accounts.take_write_turn(p_wait_ms);
    SELECT * INTO acct FROM accounts.account AS a
    WHERE a.username_key = p_key AND a.id = p_expected_id;
    IF acct.id IS NULL THEN
      RETURN false;
    END IF;
    INSERT INTO accounts.audit_event (occurred_at, kind, username, username_key, detail, host)
    VALUES (p_now, CASE WHEN p_opened THEN 'pam_session_opened' ELSE 'pam_session_closed' END,
            acct.username, acct.username_key, p_detail, p_host);
    RETURN true;
  END $$;

  -- A person's own second factor changed after their password (and, but to enable, a code
  -- p_step or p_recovery_hash, accepted once) was checked: 'enable' stores p_sealed under
  -- p_key_id at p_last_step with the recovery codes p_code_hashes; 'disable' deletes it;
  -- 'new_codes' replaces the recovery codes with p_code_hashes. Enabling and disabling end
  -- every other session of the account (the one whose token hash is p_keeping stays). Returns
  -- 'changed', or 'gone', 'already_on', 'not_on', 'code_used'.
  CREATE FUNCTION accounts.second_factor_change(
    p_kind text, p_key text, p_expected_id bigint, p_expected_changed text, p_now timestamptz,
    p_wait_ms integer, p_sealed bytea, p_key_id text, p_last_step bigint, p_code_hashes bytea[],
    p_step bigint, p_recovery_hash bytea, p_codes_left_details text[], p_keeping bytea,
    p_host text)
  RETURNS text
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
  DECLARE
    acct accounts.account%ROWTYPE;
    has_factor boolean;
  BEGIN
    IF p_kind NOT IN ('enable', 'disable', 'new_codes') THEN
      RAISE EXCEPTION 'no such change: %', p_kind USING ERRCODE = 'invalid_parameter_value';
    END IF;
    p_now := accounts.step_time(p_now);
    PERFORM accounts.take_write_turn(p_wait_ms);
    SELECT * INTO acct FROM accounts.account AS a WHERE a.username_key = p_key;
    IF acct.id IS NULL OR acct.id <> p_expected_id
       OR accounts.stamp(acct.password_changed_at) <> p_expected_changed
       OR acct.disabled_at IS NOT NULL OR acct.expires_at <= p_now THEN
      RETURN 'gone';
    END IF;
    has_factor := EXISTS (SELECT 1 FROM accounts.second_factor AS f
                          WHERE f.account_id = acct.id);
    IF p_kind = 'enable' THEN
      IF has_factor THEN
        RETURN 'already_on';
      END IF;
      INSERT INTO accounts.second_factor (account_id, sealed_secret, key_id, last_step,
        enabled_at)
      VALUES (acct.id, p_sealed, p_key_id, p_last_step, p_now);
      INSERT INTO accounts.recovery_code (account_id, code_hash)
      SELECT acct.id, h FROM unnest(p_code_hashes) AS h;
      INSERT INTO accounts.audit_event (occurred_at, kind, username, username_key, detail,
        host)
      VALUES (p_now, 'second_factor_enabled', acct.username, acct.username_key, NULL, p_host);
    ELSE
      IF NOT has_factor THEN
        RETURN 'not_on';
      END IF;
      IF NOT accounts.accept_second_step(acct.id, p_step, p_recovery_hash, p_now,
                                         p_codes_left_details, p_host) THEN
        RETURN 'code_used';
      END IF;
      IF p_kind = 'new_codes' THEN
        DELETE FROM accounts.recovery_code AS c WHERE c.account_id = acct.id;
        INSERT INTO accounts.recovery_code (account_id, code_hash)
        SELECT acct.id, h FROM unnest(p_code_hashes) AS h;
        INSERT INTO accounts.audit_event (occurred_at, kind, username, username_key, detail,
          host)
        VALUES (p_now, 'recovery_codes_made', acct.username, acct.username_key, NULL, p_host);
        RETURN 'changed';
      END IF;
      DELETE FROM accounts.second_factor AS f WHERE f.account_id = acct.id;
      INSERT INTO accounts.audit_event (occurred_at, kind, username, username_key, detail,
        host)
      VALUES (p_now, 'second_factor_disabled', acct.username, acct.username_key, NULL, p_host);
    END IF;
    DELETE FROM accounts.session AS s
    WHERE s.account_id = acct.id AND s.token_hash IS DISTINCT FROM p_keeping;
    RETURN 'changed';
  END $$;

  -- How many p_kind events p_key has had since its latest event of one of p_after_kinds (the
  -- failures Home tells of), without reading the audit log.
  CREATE FUNCTION accounts.event_count(p_key text, p_kind text, p_after_kinds text[])
  RETURNS bigint
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog
  AS $$
    SELECT count(*) FROM accounts.audit_event AS e
    WHERE e.username_key = p_key AND e.kind = p_kind
      AND e.id > (SELECT coalesce(max(r.id), 0) FROM accounts.audit_event AS r
                  WHERE r.username_key = p_key AND r.kind = ANY (p_after_kinds))
  $$;

  REVOKE ALL ON FUNCTION accounts.caller_administers() FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.step_time(timestamptz) FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.login_refusal(text, text, timestamptz, integer, text, text)
    FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.login_failure(text, text, timestamptz, integer, bigint,
    double precision, double precision, double precision, text, text, text, text) FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.login_success(text, text, timestamptz, integer, bigint, text,
    text, boolean, bigint, bytea, bytea, double precision, bigint, bytea, text, text, text,
    text, text[], text[], text) FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.session_by_token(bytea) FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.session_touch(bytea, timestamptz, integer) FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.session_end(bytea, boolean, timestamptz, integer, boolean,
    text[], text) FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.accept_second_step(bigint, bigint, bytea, timestamptz,
    text[], text) FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.change_password(text, timestamptz, integer, bigint, text,
    text, bigint, bytea, text[], bytea, text, text) FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.pam_session_event(text, bigint, boolean, timestamptz,
    integer, text, text) FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.second_factor_change(text, text, bigint, text, timestamptz,
    integer, bytea, text, bigint, bytea[], bigint, bytea, text[], bytea, text) FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.event_count(text, text, text[]) FROM PUBLIC;
  """
