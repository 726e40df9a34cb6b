/// The SQL of PostgreSQL migration "v5": a login's steps as functions in the database.
///
/// Each does one whole step of a login in one call, so that a login costs one statement before
/// the password is checked and one after it, and each checks its own preconditions, so that a
/// role allowed to call them (a fleet host's) need not write a table any other way. They are
/// `SECURITY DEFINER` (they run as the schema's owner), pin their own `search_path`, and are
/// revoked from PUBLIC: only the owner, and roles granted them, may call them.
///
/// The rules are the core's (`LoginRecorder`, `LockoutPolicy`, `SessionBook`), stated once
/// more in SQL: the repository contract tests run the same steps on both stores and compare.
/// Every word written to the audit log comes from the caller (the core's messages).
let postgresSchemaV5 = """
  -- What a login of p_key is decided on, in one row: the account (as PostgresAccess reads it),
  -- the name's tally, the hash a failure's cost must match (the owner's, or the account's when
  -- it is the owner), the account's second factor, and the device's state and its time. With
  -- no key: only the hash and the state.
  CREATE FUNCTION accounts.login_facts(p_key text)
  RETURNS TABLE (
    id bigint, username text, username_key text, full_name text, email text,
    password_hash text, must_change_password boolean, disabled_at text, created_at text,
    updated_at text, password_changed_at text, last_login_at text, is_owner boolean,
    expires_at text, uid bigint, home text, shell text, failures bigint, lockouts bigint,
    locked_until text, reference_hash text, sealed_secret text, key_id text, last_step bigint,
    enabled_at text, state text, changed_at text)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog
  AS $$
    SELECT a.id, a.username, a.username_key, a.full_name, a.email, a.password_hash,
      a.must_change_password, accounts.stamp(a.disabled_at), accounts.stamp(a.created_at),
      accounts.stamp(a.updated_at), accounts.stamp(a.password_changed_at),
      accounts.stamp(a.last_login_at), a.id IS NOT DISTINCT FROM v.owner_id,
      accounts.stamp(a.expires_at), a.uid, a.home, a.shell,
      t.failures, t.lockouts, accounts.stamp(t.locked_until),
      CASE WHEN a.id IS NOT DISTINCT FROM v.owner_id AND a.id IS NOT NULL THEN a.password_hash
           ELSE (SELECT o.password_hash FROM accounts.account AS o WHERE o.id = v.owner_id) END,
      encode(f.sealed_secret, 'hex'), f.key_id, f.last_step, accounts.stamp(f.enabled_at),
      v.state, accounts.stamp(v.changed_at)
    FROM accounts.activation AS v
    LEFT JOIN accounts.account AS a ON a.username_key = p_key
    LEFT JOIN accounts.login_throttle AS t ON t.username_key = p_key
    LEFT JOIN accounts.second_factor AS f ON f.account_id = a.id
    WHERE v.id = 1
  $$;

  -- Writers take turns on the activation row, as every write transaction does; a wait longer
  -- than p_wait_ms fails as busy (lock_not_available).
  CREATE FUNCTION accounts.take_write_turn(p_wait_ms integer) RETURNS void
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
  BEGIN
    PERFORM set_config('lock_timeout', p_wait_ms::text || 'ms', true);
    PERFORM 1 FROM accounts.activation WHERE id = 1 FOR UPDATE;
  END $$;

  -- A refused attempt: logged (p_detail) when p_key is locked at p_now; returns the lock's end.
  CREATE FUNCTION accounts.login_refusal(
    p_username text, p_key text, p_now timestamptz, p_wait_ms integer, p_detail text,
    p_host text)
  RETURNS timestamptz
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
  DECLARE
    lock_end timestamptz;
  BEGIN
    PERFORM accounts.take_write_turn(p_wait_ms);
    SELECT t.locked_until INTO lock_end FROM accounts.login_throttle AS t
    WHERE t.username_key = p_key;
    IF lock_end IS NULL OR lock_end <= p_now THEN
      RETURN NULL;
    END IF;
    INSERT INTO accounts.audit_event (occurred_at, kind, username, username_key, detail,
      host)
    VALUES (p_now, 'login_failure', p_username, p_key, p_detail, p_host);
    RETURN lock_end;
  END $$;

  -- A failed login (LoginRecorder.failure): old tallies forgotten, a locked name's attempt
  -- refused, otherwise counted by the lockout policy's arithmetic (LockoutPolicy.tally), the
  -- threshold earning a lock that doubles up to the longest. Returns the outcome
  -- ('counted', 'locked_now', 'already_locked'), the failures in a row, the lock's end.
  CREATE FUNCTION accounts.login_failure(
    p_username text, p_key text, p_now timestamptz, p_wait_ms integer, p_threshold bigint,
    p_first_lock double precision, p_longest_lock double precision,
    p_forget_after double precision, p_detail text, p_refusal_detail text,
    p_lockout_detail text, p_host text)
  RETURNS TABLE (r_outcome text, r_failures bigint, r_until text)
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
  DECLARE
    largest constant bigint := 9223372036854775807;
    refused timestamptz;
    old accounts.login_throttle%ROWTYPE;
    next_failures bigint;
    next_lockouts bigint;
    lock_end timestamptz;
    locking boolean := false;
  BEGIN
    PERFORM accounts.take_write_turn(p_wait_ms);
    DELETE FROM accounts.login_throttle AS t
    WHERE t.updated_at < p_now - make_interval(secs => p_forget_after)
      AND (t.locked_until IS NULL OR t.locked_until <= p_now);
    refused := accounts.login_refusal(p_username, p_key, p_now, p_wait_ms, p_refusal_detail,
      p_host);
    IF refused IS NOT NULL THEN
      RETURN QUERY SELECT 'already_locked'::text, NULL::bigint, accounts.stamp(refused);
      RETURN;
    END IF;
    SELECT * INTO old FROM accounts.login_throttle AS t WHERE t.username_key = p_key;
    next_lockouts := greatest(coalesce(old.lockouts, 0), 0);
    next_failures := greatest(coalesce(old.failures, 0), 0);
    next_failures := CASE WHEN next_failures = largest THEN largest ELSE next_failures + 1 END;
    lock_end := old.locked_until;
    IF next_failures >= p_threshold THEN
      locking := true;
      next_lockouts := CASE WHEN next_lockouts = largest THEN largest ELSE next_lockouts + 1 END;
      next_failures := 0;
      lock_end := p_now + make_interval(secs => least(
        p_first_lock * (CASE WHEN next_lockouts <= 1 THEN 1
                             ELSE 1::bigint << least(next_lockouts - 1, 30)::integer END),
        p_longest_lock));
    END IF;
    INSERT INTO accounts.audit_event (occurred_at, kind, username, username_key, detail,
      host)
    VALUES (p_now, 'login_failure', p_username, p_key, p_detail, p_host);
    IF locking THEN
      INSERT INTO accounts.audit_event (occurred_at, kind, username, username_key, detail,
      host)
      VALUES (p_now, 'lockout', p_username, p_key,
              replace(p_lockout_detail, '{until}', accounts.stamp(lock_end)), p_host);
    END IF;
    INSERT INTO accounts.login_throttle AS t
      (username_key, failures, lockouts, locked_until, updated_at)
    VALUES (p_key, next_failures, next_lockouts, lock_end, p_now)
    ON CONFLICT (username_key) DO UPDATE
    SET failures = EXCLUDED.failures, lockouts = EXCLUDED.lockouts,
      locked_until = EXCLUDED.locked_until, updated_at = EXCLUDED.updated_at;
    IF locking THEN
      RETURN QUERY SELECT 'locked_now'::text, next_failures, accounts.stamp(lock_end);
    ELSE
      RETURN QUERY SELECT 'counted'::text, next_failures, NULL::text;
    END IF;
  END $$;

  -- A successful password check recorded (LoginRecorder.success): refused when the name is
  -- locked ('locked'), or when the account is gone, disabled, expired or has another password
  -- than the one checked ('gone', logged with p_gone_detail); the second factor's step or
  -- recovery code accepted once ('code_used' when another login took it first); then the
  -- last login stamped, a new hash stored, the tally cleared, logged, and a session started
  -- (sessions no longer live deleted, the client's previous one ended). Returns the outcome,
  -- the lock's end, and Home's facts: full name, previous login, failures since.
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
  DECLARE
    refused timestamptz;
    acct accounts.account%ROWTYPE;
    codes_left bigint;
    since bigint;
  BEGIN
    PERFORM accounts.take_write_turn(p_wait_ms);
    refused := accounts.login_refusal(p_username, p_key, p_now, p_wait_ms, p_refusal_detail,
      p_host);
    IF refused IS NOT NULL THEN
      RETURN QUERY SELECT 'locked'::text, accounts.stamp(refused), NULL::text, NULL::text,
        NULL::bigint;
      RETURN;
    END IF;
    SELECT * INTO acct FROM accounts.account AS a WHERE a.username_key = p_key;
    IF acct.id IS NULL OR acct.disabled_at IS NOT NULL OR acct.expires_at <= p_now
       OR (p_expected_id IS NOT NULL
           AND (acct.id <> p_expected_id
                OR accounts.stamp(acct.password_changed_at) <> p_expected_changed)) THEN
      INSERT INTO accounts.audit_event (occurred_at, kind, username, username_key, detail,
      host)
      VALUES (p_now, 'login_failure', p_username, p_key, p_gone_detail, p_host);
      RETURN QUERY SELECT 'gone'::text, NULL::text, NULL::text, NULL::text, NULL::bigint;
      RETURN;
    END IF;
    IF p_step IS NOT NULL THEN
      UPDATE accounts.second_factor AS f SET last_step = p_step
      WHERE f.account_id = acct.id AND f.last_step < p_step;
      IF NOT FOUND THEN
        RETURN QUERY SELECT 'code_used'::text, NULL::text, NULL::text, NULL::text,
          NULL::bigint;
        RETURN;
      END IF;
    ELSIF p_recovery_hash IS NOT NULL THEN
      UPDATE accounts.recovery_code AS c SET used_at = p_now
      WHERE c.account_id = acct.id AND c.code_hash = p_recovery_hash AND c.used_at IS NULL;
      IF NOT FOUND THEN
        RETURN QUERY SELECT 'code_used'::text, NULL::text, NULL::text, NULL::text,
          NULL::bigint;
        RETURN;
      END IF;
      SELECT count(*) INTO codes_left FROM accounts.recovery_code AS c
      WHERE c.account_id = acct.id AND c.used_at IS NULL;
      INSERT INTO accounts.audit_event (occurred_at, kind, username, username_key, detail,
      host)
      VALUES (p_now, 'recovery_code_used', acct.username, acct.username_key,
              coalesce(p_codes_left_details[codes_left + 1],
                       p_codes_left_details[cardinality(p_codes_left_details)]), p_host);
    END IF;
    SELECT count(*) INTO since FROM accounts.audit_event AS e
    WHERE e.username_key = p_key AND e.kind = 'login_failure'
      AND e.id > (SELECT coalesce(max(r.id), 0) FROM accounts.audit_event AS r
                  WHERE r.username_key = p_key AND r.kind = ANY (p_reset_kinds));
    IF p_required_change THEN
      INSERT INTO accounts.audit_event (occurred_at, kind, username, username_key, detail,
      host)
      VALUES (p_now, 'password_changed', acct.username, p_key, p_required_detail, p_host);
    END IF;
    UPDATE accounts.account AS a SET
      last_login_at = p_now,
      password_hash = coalesce(p_new_hash, a.password_hash),
      updated_at = CASE WHEN p_new_hash IS NULL THEN a.updated_at ELSE p_now END,
      must_change_password = a.must_change_password AND NOT p_required_change,
      password_changed_at = CASE WHEN p_required_change THEN p_now
                                 ELSE a.password_changed_at END
    WHERE a.id = acct.id;
    DELETE FROM accounts.login_throttle AS t WHERE t.username_key = p_key;
    INSERT INTO accounts.audit_event (occurred_at, kind, username, username_key, detail,
      host)
    VALUES (p_now, 'login_success', p_username, p_key, p_origin, p_host);
    IF p_token_hash IS NOT NULL THEN
      DELETE FROM accounts.session AS s WHERE s.expires_at <= p_now OR s.idle_until <= p_now;
      IF p_replacing IS NOT NULL THEN
        DELETE FROM accounts.session AS s WHERE s.token_hash = p_replacing;
      END IF;
    END IF;
    IF p_required_change THEN
      DELETE FROM accounts.session AS s WHERE s.account_id = acct.id;
    END IF;
    IF p_token_hash IS NOT NULL THEN
      INSERT INTO accounts.session (token_hash, account_id, created_at, last_seen_at,
        expires_at, idle_seconds, idle_until, second_factor, host)
      VALUES (p_token_hash, acct.id, p_now, p_now, p_now + make_interval(secs => p_lifetime),
        p_idle, p_now + make_interval(secs => p_idle),
        p_step IS NOT NULL OR p_recovery_hash IS NOT NULL, p_host);
    END IF;
    RETURN QUERY SELECT 'logged_in'::text, NULL::text, acct.full_name,
      accounts.stamp(acct.last_login_at), since;
  END $$;

  REVOKE ALL ON FUNCTION accounts.login_facts(text) FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.take_write_turn(integer) FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.login_refusal(text, text, timestamptz, integer, text, text)
    FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.login_failure(text, text, timestamptz, integer, bigint,
    double precision, double precision, double precision, text, text, text, text) FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.login_success(text, text, timestamptz, integer, bigint, text,
    text, boolean, bigint, bytea, bytea, double precision, bigint, bytea, text, text, text,
    text, text[], text[], text) FROM PUBLIC;
  """
