/// The SQL of PostgreSQL migration "v7": a host proves the password it checked.
///
/// Before it, the steps that act on a checked password (recording a login, changing one's own
/// password, turning one's second factor on or off) took the account's id and the time of its
/// last password change as the sign that the password had been checked, and a host role could
/// read both: a stolen one could change anyone's password. Now a caller that does not
/// administer (`accounts.caller_administers`) reads each hash sealed (`accounts.sealed_hash`,
/// through `login_facts` and the view `accounts.account_view`): enough to check a typed
/// password, not the hash itself. Those steps take the whole hash as proof, which only whoever
/// typed the password can recompute, and refuse ('gone') such a caller without it. The
/// unproven steps keep their work under new names (`…_step`), callable by the owner only.
let postgresSchemaV7 = """
  -- A stored hash sealed (SealedPasswordHash): 'sealed$', the hex SHA-256 of the whole hash,
  -- '$', then the hash with its digest masked (bcrypt's after its 29-character setting, the
  -- others' after their last '$'): PBKDF2's Base64 letters become 'A', crypt(3)'s become '.'.
  CREATE FUNCTION accounts.sealed_hash(p_hash text) RETURNS text
  LANGUAGE sql STABLE PARALLEL SAFE
  RETURN 'sealed$' || encode(sha256(convert_to(p_hash, 'UTF8')), 'hex') || '$'
    || CASE WHEN substr(p_hash, 1, 2) = '$2'
            THEN substr(p_hash, 1, 29) || regexp_replace(substr(p_hash, 30), '.', '.', 'g')
            WHEN p_hash LIKE 'pbkdf2_sha256$%'
            THEN substring(p_hash FROM '^(.*[$])')
              || regexp_replace(substring(p_hash FROM '[^$]*$'), '[A-Za-z0-9+/]', 'A', 'g')
            ELSE coalesce(substring(p_hash FROM '^(.*[$])'), '')
              || regexp_replace(substring(p_hash FROM '[^$]*$'), '.', '.', 'g') END;

  -- A stored hash as the caller may read it: whole for one that administers, else sealed.
  CREATE FUNCTION accounts.seen_hash(p_hash text) RETURNS text
  LANGUAGE sql STABLE SET search_path = pg_catalog
  RETURN CASE WHEN accounts.caller_administers() THEN p_hash
              ELSE accounts.sealed_hash(p_hash) END;

  -- The accounts as the caller may read them: a host role reads this, not the table's hashes.
  CREATE VIEW accounts.account_view AS
  SELECT a.id, a.username, a.username_key, a.full_name, a.email,
    CASE WHEN (SELECT accounts.caller_administers()) THEN a.password_hash
         ELSE accounts.sealed_hash(a.password_hash) END AS password_hash,
    a.must_change_password, a.disabled_at, a.created_at, a.updated_at, a.password_changed_at,
    a.last_login_at, a.expires_at, a.uid, a.home, a.shell
  FROM accounts.account AS a;

  CREATE OR REPLACE FUNCTION accounts.login_facts(p_key text)
  RETURNS TABLE (
    id bigint, username text, username_key text, full_name text, email text,
    password_hash text, must_change_password boolean, disabled_at text, created_at text,
    updated_at text, password_changed_at text, last_login_at text, is_owner boolean,
    expires_at text, uid bigint, home text, shell text, failures bigint, lockouts bigint,
    locked_until text, reference_hash text, sealed_secret text, key_id text, last_step bigint,
    enabled_at text, state text, changed_at text)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog
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
      encode(f.sealed_secret, 'hex'), f.key_id, f.last_step, accounts.stamp(f.enabled_at),
      v.state, accounts.stamp(v.changed_at)
    FROM accounts.activation AS v
    LEFT JOIN accounts.account AS a ON a.username_key = p_key
    LEFT JOIN accounts.login_throttle AS t ON t.username_key = p_key
    LEFT JOIN accounts.second_factor AS f ON f.account_id = a.id
    WHERE v.id = 1
  $$;

  -- Whether p_proof is the stored hash of p_key, read in the write turn (taken here).
  CREATE FUNCTION accounts.password_proven(p_key text, p_wait_ms integer, p_proof text)
  RETURNS boolean
  LANGUAGE plpgsql SET search_path = pg_catalog AS $$
  BEGIN
    PERFORM accounts.take_write_turn(p_wait_ms);
    RETURN EXISTS (SELECT 1 FROM accounts.account AS a
                   WHERE a.username_key = p_key AND a.password_hash = p_proof);
  END $$;

  ALTER FUNCTION accounts.change_password(text, timestamptz, integer, bigint, text, text, bigint,
    bytea, text[], bytea, text, text) RENAME TO change_password_step;
  ALTER FUNCTION accounts.second_factor_change(text, text, bigint, text, timestamptz, integer,
    bytea, text, bigint, bytea[], bigint, bytea, text[], bytea, text)
    RENAME TO second_factor_change_step;
  DROP FUNCTION accounts.login_success(text, text, timestamptz, integer, bigint, text, text,
    boolean, bigint, bytea, bytea, double precision, bigint, bytea, text, text, text, text,
    text[], text[], text);

  -- What any role was granted on the renamed steps is taken back: only the owner calls them.
  DO $revoke$
  DECLARE
    grantee_name text;
  BEGIN
    FOR grantee_name IN
      SELECT DISTINCT quote_ident(r.rolname)
      FROM pg_catalog.pg_proc AS p
      CROSS JOIN LATERAL pg_catalog.aclexplode(p.proacl) AS x
      JOIN pg_catalog.pg_roles AS r ON r.oid = x.grantee
      WHERE p.pronamespace = 'accounts'::regnamespace AND x.grantee <> p.proowner
        AND p.proname IN ('change_password_step', 'second_factor_change_step')
    LOOP
      EXECUTE 'REVOKE ALL ON FUNCTION accounts.change_password_step(text, timestamptz, '
        || 'integer, bigint, text, text, bigint, bytea, text[], bytea, text, text), '
        || 'accounts.second_factor_change_step(text, text, bigint, text, timestamptz, '
        || 'integer, bytea, text, bigint, bytea[], bigint, bytea, text[], bytea, text) FROM '
        || grantee_name;
    END LOOP;
  END $revoke$;

  -- accounts.login_success_step at the step's time; a host's sessions no longer than the
  -- standard ones (a day, idle an hour), and its login refused ('gone', logged as the step
  -- logs one) unless p_proof is the account's stored hash.
  CREATE FUNCTION accounts.login_success(
    p_username text, p_key text, p_now timestamptz, p_wait_ms integer,
    p_expected_id bigint, p_expected_changed text, p_new_hash text, p_required_change boolean,
    p_step bigint, p_recovery_hash bytea, p_token_hash bytea,
    p_lifetime double precision, p_idle bigint, p_replacing bytea, p_origin text,
    p_gone_detail text, p_refusal_detail text, p_required_detail text,
    p_codes_left_details text[], p_reset_kinds text[], p_host text, p_proof text)
  RETURNS TABLE (r_outcome text, r_until text, r_full_name text, r_previous text,
                 r_failures_since bigint)
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
  BEGIN
    IF NOT accounts.caller_administers() THEN
      p_lifetime := least(p_lifetime, 86400);
      p_idle := least(p_idle, 3600);
      IF NOT accounts.password_proven(p_key, p_wait_ms, p_proof) THEN
        INSERT INTO accounts.audit_event (occurred_at, kind, username, username_key, detail,
          host)
        VALUES (accounts.step_time(p_now), 'login_failure', p_username, p_key, p_gone_detail,
          p_host);
        RETURN QUERY SELECT 'gone'::text, NULL::text, NULL::text, NULL::text, NULL::bigint;
        RETURN;
      END IF;
    END IF;
    RETURN QUERY SELECT * FROM accounts.login_success_step(p_username, p_key,
      accounts.step_time(p_now), p_wait_ms, p_expected_id, p_expected_changed, p_new_hash,
      p_required_change, p_step, p_recovery_hash, p_token_hash, p_lifetime, p_idle,
      p_replacing, p_origin, p_gone_detail, p_refusal_detail, p_required_detail,
      p_codes_left_details, p_reset_kinds, p_host);
  END $$;

  -- accounts.change_password_step, refused ('gone') to a caller that does not administer
  -- unless p_proof is the account's stored hash.
  CREATE FUNCTION accounts.change_password(
    p_key text, p_now timestamptz, p_wait_ms integer, p_expected_id bigint,
    p_expected_changed text, p_new_hash text, p_step bigint, p_recovery_hash bytea,
    p_codes_left_details text[], p_keeping bytea, p_detail text, p_host text, p_proof text)
  RETURNS text
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
  BEGIN
    IF NOT accounts.caller_administers()
       AND NOT accounts.password_proven(p_key, p_wait_ms, p_proof) THEN
      RETURN 'gone';
    END IF;
    RETURN accounts.change_password_step(p_key, p_now, p_wait_ms, p_expected_id,
      p_expected_changed, p_new_hash, p_step, p_recovery_hash, p_codes_left_details,
      p_keeping, p_detail, p_host);
  END $$;

  -- accounts.second_factor_change_step, refused ('gone') to a caller that does not
  -- administer unless p_proof is the account's stored hash.
  CREATE FUNCTION accounts.second_factor_change(
    p_kind text, p_key text, p_expected_id bigint, p_expected_changed text, p_now timestamptz,
    p_wait_ms integer, p_sealed bytea, p_key_id text, p_last_step bigint, p_code_hashes bytea[],
    p_step bigint, p_recovery_hash bytea, p_codes_left_details text[], p_keeping bytea,
    p_host text, p_proof text)
  RETURNS text
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
  BEGIN
    IF NOT accounts.caller_administers()
       AND NOT accounts.password_proven(p_key, p_wait_ms, p_proof) THEN
      RETURN 'gone';
    END IF;
    RETURN accounts.second_factor_change_step(p_kind, p_key, p_expected_id,
      p_expected_changed, p_now, p_wait_ms, p_sealed, p_key_id, p_last_step, p_code_hashes,
      p_step, p_recovery_hash, p_codes_left_details, p_keeping, p_host);
  END $$;

  -- What the view calls with its reader's rights: any role that may read it may call them
  -- (neither reads a table; the one says whether the caller may update accounts).
  GRANT EXECUTE ON FUNCTION accounts.sealed_hash(text), accounts.caller_administers()
    TO PUBLIC;
  REVOKE ALL ON FUNCTION accounts.seen_hash(text) FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.password_proven(text, integer, text) FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.login_success(text, text, timestamptz, integer, bigint, text,
    text, boolean, bigint, bytea, bytea, double precision, bigint, bytea, text, text, text,
    text, text[], text[], text, text) FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.change_password(text, timestamptz, integer, bigint, text,
    text, bigint, bytea, text[], bytea, text, text, text) FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.second_factor_change(text, text, bigint, text, timestamptz,
    integer, bytea, text, bigint, bytea[], bigint, bytea, text[], bytea, text, text)
    FROM PUBLIC;
  """
