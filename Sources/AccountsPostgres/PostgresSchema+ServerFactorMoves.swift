/// The SQL of PostgreSQL migration "v20": a login moves its own secret still sealed under a key
/// file into the server's keeping, and hands a host's login cache the recovery codes' hashes;
/// never edit it once shipped.
///
/// Only adds (an expansion): a host of the release before it keeps calling what it called.
/// `accounts.second_factor_sealed` gives a caller that proves the password (or administers)
/// that person's secret while it is still sealed under a key file, sealed as it is: a host
/// that holds the key file opens it, and hands it over in the clear through the new overload of
/// `accounts.login_success` (two arguments more), which fills it in only where the server keeps
/// no secret yet (the trigger of migration "v17" encrypts it), then checks the typed code
/// against it as every login's code is checked; a login refused after all puts the sealed
/// secret back as it was. The same overload, asked to (`p_recovery_codes`: the host keeps a
/// login cache), returns the person's unused recovery codes' hashes, hex and comma-separated,
/// with a login that passed the password's proof and a code or recovery code the server took:
/// a host role, which reads no hash, can then keep them for offline logins. A login let in also
/// returns the store's identity (`userdb_setting.store_id`), which the session file records so
/// that another URI of the same store keeps the session, at no cost of its own.
let postgresSchemaV20 = """
  CREATE FUNCTION accounts.second_factor_sealed(p_key text, p_wait_ms integer, p_proof text)
  RETURNS TABLE (r_sealed bytea, r_key_id text)
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  BEGIN
    IF NOT accounts.caller_administers()
       AND NOT accounts.password_proven(p_key, p_wait_ms, p_proof) THEN
      RETURN;
    END IF;
    RETURN QUERY SELECT f.sealed_secret, f.key_id FROM accounts.second_factor AS f
    JOIN accounts.account AS a ON a.id = f.account_id
    WHERE a.username_key = p_key AND f.sealed_secret IS NOT NULL;
  END $$;

  CREATE FUNCTION accounts.login_success(
    p_username text, p_key text, p_now timestamptz, p_wait_ms integer,
    p_expected_id bigint, p_expected_changed text, p_new_hash text, p_required_change boolean,
    p_step bigint, p_recovery_hash bytea, p_token_hash bytea,
    p_lifetime double precision, p_idle bigint, p_replacing bytea, p_origin text,
    p_gone_detail text, p_refusal_detail text, p_required_detail text,
    p_codes_left_details text[], p_reset_kinds text[], p_host text, p_proof text, p_code text,
    p_moved_secret bytea, p_recovery_codes boolean)
  RETURNS TABLE (r_outcome text, r_until text, r_full_name text, r_previous text,
                 r_failures_since bigint, r_secret text, r_step bigint, r_codes text,
                 r_store text)
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  DECLARE
    administers boolean := accounts.caller_administers();
    sealed accounts.second_factor%ROWTYPE;
    done record;
  BEGIN
    IF p_moved_secret IS NOT NULL AND p_code IS NOT NULL
       AND (administers OR accounts.password_proven(p_key, p_wait_ms, p_proof)) THEN
      SELECT f.* INTO sealed FROM accounts.second_factor AS f
      JOIN accounts.account AS a ON a.id = f.account_id
      WHERE a.username_key = p_key AND f.server_secret IS NULL
      FOR UPDATE OF f;
      IF sealed.account_id IS NOT NULL THEN
        UPDATE accounts.second_factor AS f
        SET sealed_secret = p_moved_secret, key_id = 'server-encrypted'
        WHERE f.account_id = sealed.account_id;
      END IF;
    END IF;
    SELECT * INTO done FROM accounts.login_success(p_username, p_key, p_now, p_wait_ms,
      p_expected_id, p_expected_changed, p_new_hash, p_required_change, p_step,
      p_recovery_hash, p_token_hash, p_lifetime, p_idle, p_replacing, p_origin, p_gone_detail,
      p_refusal_detail, p_required_detail, p_codes_left_details, p_reset_kinds, p_host,
      p_proof, p_code) AS s;
    IF sealed.account_id IS NOT NULL AND done.r_outcome IS DISTINCT FROM 'logged_in' THEN
      UPDATE accounts.second_factor AS f
      SET sealed_secret = sealed.sealed_secret, key_id = sealed.key_id, server_secret = NULL
      WHERE f.account_id = sealed.account_id;
    END IF;
    RETURN QUERY SELECT done.r_outcome, done.r_until, done.r_full_name, done.r_previous,
      done.r_failures_since, done.r_secret, done.r_step,
      CASE WHEN p_recovery_codes AND done.r_outcome = 'logged_in'
                AND (administers OR p_code IS NOT NULL OR p_recovery_hash IS NOT NULL)
           THEN coalesce((SELECT string_agg(encode(c.code_hash, 'hex'), ','
                                            ORDER BY c.code_hash)
                          FROM accounts.recovery_code AS c
                          JOIN accounts.account AS a ON a.id = c.account_id
                          WHERE a.username_key = p_key AND c.used_at IS NULL), '') END,
      CASE WHEN done.r_outcome = 'logged_in'
           THEN (SELECT u.store_id FROM accounts.userdb_setting AS u WHERE u.id = 1) END;
  END $$;

  REVOKE ALL ON FUNCTION accounts.second_factor_sealed(text, integer, text) FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.login_success(text, text, timestamptz, integer, bigint, text,
    text, boolean, bigint, bytea, bytea, double precision, bigint, bytea, text, text, text,
    text, text[], text[], text, text, text, bytea, boolean) FROM PUBLIC;

  -- Whoever may call the login's steps (a host role, an administrator role) may call these.
  DO $grant$
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
      EXECUTE 'GRANT EXECUTE ON FUNCTION accounts.second_factor_sealed(text, integer, text), '
        || 'accounts.login_success(text, text, timestamptz, integer, bigint, text, text, '
        || 'boolean, bigint, bytea, bytea, double precision, bigint, bytea, text, text, text, '
        || 'text, text[], text[], text, text, text, bytea, boolean) TO ' || grantee_name;
    END LOOP;
  END $grant$;
  """
