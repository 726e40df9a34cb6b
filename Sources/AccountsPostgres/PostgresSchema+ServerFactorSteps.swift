/// The steps of migration "v17" that take a typed code: `login_success`, `change_password` and
/// `second_factor_change` with one argument more, `p_code`, checked by the server.
///
/// A caller that does not administer (a host role) has its code (or recovery code) checked by
/// `accounts.second_step_check` at the server's clock and cannot name a step itself: a login,
/// or turning a second factor off or making new recovery codes, of an account with a second
/// factor is refused ('code_wrong') without a right one; a password change checks the code it is
/// given (PAM's forced change after a login that passed the code is given none). The step it matched is
/// accepted once by the step the function calls (`…_step`), in the same transaction
/// ('code_used' for a step or recovery code already used). A login whose code was accepted
/// returns the plain secret and that step to its caller, for the host's offline-login cache.
let postgresSchemaV17Steps = """
  -- What a login is decided on, as before, but no secret: a second factor reads as
  -- 'server-encrypted', with its last step and when it was turned on.
  CREATE OR REPLACE FUNCTION accounts.login_facts(p_key text)
  RETURNS TABLE (
    id bigint, username text, username_key text, full_name text, email text,
    password_hash text, must_change_password boolean, disabled_at text, created_at text,
    updated_at text, password_changed_at text, last_login_at text, is_owner boolean,
    expires_at text, uid bigint, home text, shell text, failures bigint, lockouts bigint,
    locked_until text, reference_hash text, sealed_secret text, key_id text, last_step bigint,
    enabled_at text, state text, changed_at text)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
  AS $$
    SELECT a.id, a.username, a.username_key, a.full_name, a.email,
      accounts.seen_hash(a.password_hash),
      a.must_change_password, accounts.stamp(a.disabled_at), accounts.stamp(a.created_at),
      accounts.stamp(a.updated_at), accounts.stamp(a.password_changed_at),
      accounts.stamp(a.last_login_at), a.id IS NOT DISTINCT FROM v.owner_id,
      accounts.stamp(a.expires_at), a.uid, a.home, a.shell,
      t.failures, t.lockouts, accounts.stamp(t.locked_until),
      accounts.seen_hash(
        CASE WHEN a.id IS NOT DISTINCT FROM v.owner_id AND a.id IS NOT NULL THEN a.password_hash
             ELSE (SELECT o.password_hash FROM accounts.account AS o WHERE o.id = v.owner_id)
        END),
      NULL::text, CASE WHEN f.account_id IS NOT NULL THEN 'server-encrypted' END, f.last_step,
      accounts.stamp(f.enabled_at), v.state, accounts.stamp(v.changed_at)
    FROM accounts.activation AS v
    LEFT JOIN accounts.account AS a ON a.username_key = p_key
    LEFT JOIN accounts.login_throttle AS t ON t.username_key = p_key
    LEFT JOIN accounts.second_factor AS f ON f.account_id = a.id
    WHERE v.id = 1
  $$;

  CREATE FUNCTION accounts.login_success(
    p_username text, p_key text, p_now timestamptz, p_wait_ms integer,
    p_expected_id bigint, p_expected_changed text, p_new_hash text, p_required_change boolean,
    p_step bigint, p_recovery_hash bytea, p_token_hash bytea,
    p_lifetime double precision, p_idle bigint, p_replacing bytea, p_origin text,
    p_gone_detail text, p_refusal_detail text, p_required_detail text,
    p_codes_left_details text[], p_reset_kinds text[], p_host text, p_proof text, p_code text)
  RETURNS TABLE (r_outcome text, r_until text, r_full_name text, r_previous text,
                 r_failures_since bigint, r_secret text, r_step bigint)
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  DECLARE
    administers boolean := accounts.caller_administers();
    checked boolean;
    matched bigint;
    secret bytea;
  BEGIN
    IF NOT administers THEN
      p_lifetime := least(p_lifetime, 86400);
      p_idle := least(p_idle, 3600);
      IF NOT accounts.password_proven(p_key, p_wait_ms, p_proof) THEN
        INSERT INTO accounts.audit_event (occurred_at, kind, username, username_key, detail,
          host)
        VALUES (accounts.step_time(p_now), 'login_failure', p_username, p_key, p_gone_detail,
          p_host);
        RETURN QUERY SELECT 'gone'::text, NULL::text, NULL::text, NULL::text, NULL::bigint,
          NULL::text, NULL::bigint;
        RETURN;
      END IF;
    END IF;
    IF p_code IS NOT NULL OR p_recovery_hash IS NOT NULL OR NOT administers THEN
      SELECT c.r_ok, c.r_step, c.r_secret INTO checked, matched, secret
      FROM accounts.second_step_check(p_key, p_code, p_recovery_hash,
        accounts.step_time(p_now), NOT administers) AS c;
      IF NOT checked THEN
        RETURN QUERY SELECT 'code_wrong'::text, NULL::text, NULL::text, NULL::text,
          NULL::bigint, NULL::text, NULL::bigint;
        RETURN;
      END IF;
      IF p_code IS NOT NULL OR NOT administers THEN
        p_step := matched;
      END IF;
    END IF;
    RETURN QUERY SELECT s.r_outcome, s.r_until, s.r_full_name, s.r_previous,
      s.r_failures_since, CASE WHEN s.r_outcome = 'logged_in' THEN encode(secret, 'hex') END,
      CASE WHEN s.r_outcome = 'logged_in' AND secret IS NOT NULL THEN matched END
    FROM accounts.login_success_step(p_username, p_key,
      accounts.step_time(p_now), p_wait_ms, p_expected_id, p_expected_changed, p_new_hash,
      p_required_change, p_step, p_recovery_hash, p_token_hash, p_lifetime, p_idle,
      p_replacing, p_origin, p_gone_detail, p_refusal_detail, p_required_detail,
      p_codes_left_details, p_reset_kinds, p_host) AS s;
  END $$;

  CREATE FUNCTION accounts.change_password(
    p_key text, p_now timestamptz, p_wait_ms integer, p_expected_id bigint,
    p_expected_changed text, p_new_hash text, p_step bigint, p_recovery_hash bytea,
    p_codes_left_details text[], p_keeping bytea, p_detail text, p_host text, p_proof text,
    p_code text)
  RETURNS text
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  DECLARE
    administers boolean := accounts.caller_administers();
    checked boolean;
    matched bigint;
  BEGIN
    IF NOT administers AND NOT accounts.password_proven(p_key, p_wait_ms, p_proof) THEN
      RETURN 'gone';
    END IF;
    -- A host names no step itself. A code is checked when one is given: PAM's forced change
    -- right after a login that passed the code asks none (it was used), and a new password
    -- lets no one in without the code.
    IF NOT administers THEN
      p_step := NULL;
    END IF;
    IF p_code IS NOT NULL OR p_recovery_hash IS NOT NULL THEN
      SELECT c.r_ok, c.r_step INTO checked, matched
      FROM accounts.second_step_check(p_key, p_code, p_recovery_hash,
        accounts.step_time(p_now), false) AS c;
      IF NOT checked THEN
        RETURN 'code_wrong';
      END IF;
      IF p_code IS NOT NULL THEN
        p_step := matched;
      END IF;
    END IF;
    RETURN accounts.change_password_step(p_key, p_now, p_wait_ms, p_expected_id,
      p_expected_changed, p_new_hash, p_step, p_recovery_hash, p_codes_left_details,
      p_keeping, p_detail, p_host);
  END $$;

  CREATE FUNCTION accounts.second_factor_change(
    p_kind text, p_key text, p_expected_id bigint, p_expected_changed text, p_now timestamptz,
    p_wait_ms integer, p_sealed bytea, p_key_id text, p_last_step bigint, p_code_hashes bytea[],
    p_step bigint, p_recovery_hash bytea, p_codes_left_details text[], p_keeping bytea,
    p_host text, p_proof text, p_code text)
  RETURNS text
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  DECLARE
    administers boolean := accounts.caller_administers();
    checked boolean;
    matched bigint;
  BEGIN
    IF NOT administers AND NOT accounts.password_proven(p_key, p_wait_ms, p_proof) THEN
      RETURN 'gone';
    END IF;
    IF p_kind <> 'enable'
       AND (p_code IS NOT NULL OR p_recovery_hash IS NOT NULL OR NOT administers) THEN
      SELECT c.r_ok, c.r_step INTO checked, matched
      FROM accounts.second_step_check(p_key, p_code, p_recovery_hash,
        accounts.step_time(p_now), NOT administers) AS c;
      IF NOT checked THEN
        RETURN 'code_wrong';
      END IF;
      IF p_code IS NOT NULL OR NOT administers THEN
        p_step := matched;
      END IF;
    END IF;
    RETURN accounts.second_factor_change_step(p_kind, p_key, p_expected_id,
      p_expected_changed, p_now, p_wait_ms, p_sealed, p_key_id, p_last_step, p_code_hashes,
      p_step, p_recovery_hash, p_codes_left_details, p_keeping, p_host);
  END $$;
  """

/// The rights of migration "v17": the new steps granted to whoever could call the ones they
/// replace, which are dropped; the helpers revoked from PUBLIC; and a role that does not
/// administer loses the secret columns and the recovery codes' hashes, keeping the others.
let postgresSchemaV17Grants = """
  DO $regrant$
  DECLARE
    grantee_name text;
  BEGIN
    FOR grantee_name IN
      SELECT DISTINCT quote_ident(r.rolname)
      FROM pg_catalog.pg_proc AS p
      CROSS JOIN LATERAL pg_catalog.aclexplode(p.proacl) AS x
      JOIN pg_catalog.pg_roles AS r ON r.oid = x.grantee
      WHERE p.pronamespace = 'accounts'::regnamespace AND x.grantee <> p.proowner
        AND p.proname = 'login_facts' AND x.privilege_type = 'EXECUTE'
    LOOP
      EXECUTE 'GRANT EXECUTE ON FUNCTION accounts.login_success(text, text, timestamptz, '
        || 'integer, bigint, text, text, boolean, bigint, bytea, bytea, double precision, '
        || 'bigint, bytea, text, text, text, text, text[], text[], text, text, text), '
        || 'accounts.change_password(text, timestamptz, integer, bigint, text, text, bigint, '
        || 'bytea, text[], bytea, text, text, text, text), '
        || 'accounts.second_factor_change(text, text, bigint, text, timestamptz, integer, '
        || 'bytea, text, bigint, bytea[], bigint, bytea, text[], bytea, text, text, text), '
        || 'accounts.second_factor_confirm_code(text, bigint, text, timestamptz, integer, '
        || 'text, bytea[], bytea, text, text) TO ' || grantee_name;
    END LOOP;
    FOR grantee_name IN
      SELECT quote_ident(r.rolname) FROM pg_catalog.pg_roles AS r
      WHERE NOT r.rolsuper
        AND r.oid <> (SELECT n.nspowner FROM pg_catalog.pg_namespace AS n
                      WHERE n.nspname = 'accounts')
        AND NOT pg_catalog.has_table_privilege(r.oid, 'accounts.account', 'UPDATE')
        AND (pg_catalog.has_table_privilege(r.oid, 'accounts.second_factor', 'SELECT')
             OR pg_catalog.has_table_privilege(r.oid, 'accounts.recovery_code', 'SELECT')
             OR pg_catalog.has_table_privilege(r.oid, 'accounts.pending_second_factor',
                                               'SELECT'))
    LOOP
      EXECUTE 'REVOKE ALL ON accounts.second_factor, accounts.recovery_code, '
        || 'accounts.pending_second_factor FROM ' || grantee_name;
      EXECUTE 'GRANT SELECT (account_id, last_step, enabled_at) ON accounts.second_factor TO '
        || grantee_name;
      EXECUTE 'GRANT SELECT (account_id, used_at) ON accounts.recovery_code TO '
        || grantee_name;
      EXECUTE 'GRANT SELECT (account_id, expires_at) ON accounts.pending_second_factor TO '
        || grantee_name;
    END LOOP;
  END $regrant$;

  DROP FUNCTION accounts.login_success(text, text, timestamptz, integer, bigint, text, text,
    boolean, bigint, bytea, bytea, double precision, bigint, bytea, text, text, text, text,
    text[], text[], text, text);
  DROP FUNCTION accounts.change_password(text, timestamptz, integer, bigint, text, text, bigint,
    bytea, text[], bytea, text, text, text);
  DROP FUNCTION accounts.second_factor_change(text, text, bigint, text, timestamptz, integer,
    bytea, text, bigint, bytea[], bigint, bytea, text[], bytea, text, text);

  REVOKE ALL ON FUNCTION accounts.server_seal(bytea), accounts.server_open(bytea),
    accounts.second_factor_to_server(), accounts.totp_step(bytea, text, timestamptz, bigint),
    accounts.second_step_check(text, text, bytea, timestamptz, boolean) FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.login_success(text, text, timestamptz, integer, bigint, text,
    text, boolean, bigint, bytea, bytea, double precision, bigint, bytea, text, text, text,
    text, text[], text[], text, text, text) FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.change_password(text, timestamptz, integer, bigint, text,
    text, bigint, bytea, text[], bytea, text, text, text, text) FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.second_factor_change(text, text, bigint, text, timestamptz,
    integer, bytea, text, bigint, bytea[], bigint, bytea, text[], bytea, text, text, text)
    FROM PUBLIC;
  """
