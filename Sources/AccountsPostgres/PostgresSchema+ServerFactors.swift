/// The SQL of PostgreSQL migration "v17": the server keeps and checks the second factors; never
/// edit it once shipped.
///
/// Before it, every host held one key file that sealed every TOTP secret, and the host role
/// read every sealed secret and every recovery code's hash: one stolen host could compute
/// everyone's codes. Now a secret a host hands over (marked with the key id `server-encrypted`)
/// is encrypted by the server (pgcrypto's OpenPGP symmetric encryption, AES-256) under a key
/// kept in `accounts.second_factor_key`, which only the schema's owner reads, and the steps
/// check the typed code (or recovery code) themselves, at the server's clock, in the
/// transaction that records its step. The host role reads no secret, sealed or not, and no
/// recovery code's hash (`store roles` grants it only the other columns). Secrets sealed under a
/// key file before stay until `accounts store second-factors import-key` moves them.
let postgresSchemaV17 = """
  DO $crypto$
  BEGIN
    IF EXISTS (SELECT FROM pg_catalog.pg_extension AS e
               WHERE e.extname = 'pgcrypto' AND e.extnamespace <> 'accounts'::regnamespace) THEN
      RAISE EXCEPTION 'pgcrypto is installed in another schema of this database: the accounts '
        'store needs it in its schema "accounts"' USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
  END $crypto$;
  CREATE EXTENSION IF NOT EXISTS pgcrypto WITH SCHEMA accounts;

  -- The key the server encrypts second factors' secrets under: 256 random bits, one row, read
  -- by the schema's owner alone (its steps run as the owner).
  CREATE TABLE accounts.second_factor_key (
    id integer PRIMARY KEY CHECK (id = 1),
    key bytea NOT NULL CHECK (length(key) = 32),
    made_at timestamptz NOT NULL
  );

  INSERT INTO accounts.second_factor_key (id, key, made_at)
  VALUES (1, accounts.gen_random_bytes(32), date_trunc('milliseconds', now()));

  REVOKE ALL ON accounts.second_factor_key FROM PUBLIC;

  -- A secret is sealed under a key file (sealed_secret, key_id: from before, until moved) or
  -- encrypted by the server (server_secret), never both.
  ALTER TABLE accounts.second_factor
    ALTER COLUMN sealed_secret DROP NOT NULL, ALTER COLUMN key_id DROP NOT NULL,
    ADD COLUMN server_secret bytea,
    ADD CONSTRAINT second_factor_one_keeper CHECK (
      (sealed_secret IS NULL) = (key_id IS NULL)
      AND (sealed_secret IS NULL) <> (server_secret IS NULL));
  ALTER TABLE accounts.pending_second_factor
    ALTER COLUMN sealed_secret DROP NOT NULL, ALTER COLUMN key_id DROP NOT NULL,
    ADD COLUMN server_secret bytea,
    ADD CONSTRAINT pending_second_factor_one_keeper CHECK (
      (sealed_secret IS NULL) = (key_id IS NULL)
      AND (sealed_secret IS NULL) <> (server_secret IS NULL));

  -- p_secret encrypted under the server's key.
  CREATE FUNCTION accounts.server_seal(p_secret bytea) RETURNS bytea
  LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
  RETURN accounts.pgp_sym_encrypt_bytea(p_secret,
    (SELECT encode(k.key, 'hex') FROM accounts.second_factor_key AS k WHERE k.id = 1),
    'cipher-algo=aes256, s2k-mode=1');

  -- A secret server_seal encrypted, decrypted.
  CREATE FUNCTION accounts.server_open(p_sealed bytea) RETURNS bytea
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
  RETURN accounts.pgp_sym_decrypt_bytea(p_sealed,
    (SELECT encode(k.key, 'hex') FROM accounts.second_factor_key AS k WHERE k.id = 1));

  -- A secret written with the key id 'server-encrypted' is the plain secret a host hands over:
  -- encrypted here, before any check or write, and nothing of it kept in the other columns.
  CREATE FUNCTION accounts.second_factor_to_server() RETURNS trigger
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  BEGIN
    IF NEW.key_id = 'server-encrypted' THEN
      NEW.server_secret := accounts.server_seal(NEW.sealed_secret);
      NEW.sealed_secret := NULL;
      NEW.key_id := NULL;
    END IF;
    RETURN NEW;
  END $$;

  CREATE TRIGGER second_factor_to_server
  BEFORE INSERT OR UPDATE ON accounts.second_factor
  FOR EACH ROW EXECUTE FUNCTION accounts.second_factor_to_server();
  CREATE TRIGGER pending_second_factor_to_server
  BEFORE INSERT OR UPDATE ON accounts.pending_second_factor
  FOR EACH ROW EXECUTE FUNCTION accounts.second_factor_to_server();

  -- The time step p_code (6 digits, spaces ignored) is the TOTP code of under p_secret
  -- (RFC 6238: HMAC-SHA1, 30-second steps), within p_reach steps of p_now, the closest
  -- winning; NULL when it is none. Every step of the window is computed, whatever matched.
  CREATE FUNCTION accounts.totp_step(
    p_secret bytea, p_code text, p_now timestamptz, p_reach bigint)
  RETURNS bigint
  LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
  DECLARE
    code text := replace(p_code, ' ', '');
    current_step bigint := floor(extract(epoch FROM p_now) / 30)::bigint;
    candidate bigint;
    mac bytea;
    o integer;
    value bigint;
    matched bigint;
  BEGIN
    IF p_secret IS NULL OR code !~ '^[0-9]{6}$' THEN
      RETURN NULL;
    END IF;
    FOR candidate IN greatest(current_step - p_reach, 0) .. current_step + p_reach LOOP
      mac := accounts.hmac(int8send(candidate), p_secret, 'sha1');
      o := get_byte(mac, 19) & 15;
      value := (((get_byte(mac, o) & 127)::bigint << 24) | (get_byte(mac, o + 1)::bigint << 16)
                | (get_byte(mac, o + 2)::bigint << 8) | get_byte(mac, o + 3)::bigint) % 1000000;
      IF lpad(value::text, 6, '0') = code
         AND (matched IS NULL OR abs(candidate - current_step) < abs(matched - current_step)) THEN
        matched := candidate;
      END IF;
    END LOOP;
    RETURN matched;
  END $$;

  -- The second step a step of p_key is asked to accept, checked here: r_ok when p_code is a
  -- code of its server-encrypted secret at p_now (r_step its time step, r_secret the secret),
  -- or p_recovery_hash one of its unused recovery codes, or, with neither, when it has no
  -- second factor or p_required is false. The step is accepted (or the code used) by the
  -- step that calls this, in its transaction.
  CREATE FUNCTION accounts.second_step_check(
    p_key text, p_code text, p_recovery_hash bytea, p_now timestamptz, p_required boolean)
  RETURNS TABLE (r_ok boolean, r_step bigint, r_secret bytea)
  LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
  DECLARE
    factor accounts.second_factor%ROWTYPE;
    secret bytea;
    matched bigint;
  BEGIN
    SELECT f.* INTO factor FROM accounts.second_factor AS f
    JOIN accounts.account AS a ON a.id = f.account_id WHERE a.username_key = p_key;
    IF factor.account_id IS NULL THEN
      RETURN QUERY SELECT p_code IS NULL AND p_recovery_hash IS NULL, NULL::bigint, NULL::bytea;
    ELSIF p_code IS NOT NULL THEN
      IF factor.server_secret IS NOT NULL THEN
        secret := accounts.server_open(factor.server_secret);
      END IF;
      matched := accounts.totp_step(secret, p_code, p_now, 1);
      RETURN QUERY SELECT matched IS NOT NULL, matched, CASE WHEN matched IS NOT NULL
                                                             THEN secret END;
    ELSIF p_recovery_hash IS NOT NULL THEN
      RETURN QUERY SELECT EXISTS (
        SELECT 1 FROM accounts.recovery_code AS c
        WHERE c.account_id = factor.account_id AND c.code_hash = p_recovery_hash
          AND c.used_at IS NULL), NULL::bigint, NULL::bytea;
    ELSE
      RETURN QUERY SELECT NOT p_required, NULL::bigint, NULL::bytea;
    END IF;
  END $$;
  \(postgresSchemaV17Steps)
  \(postgresSchemaV17Confirm)
  \(postgresSchemaV17Grants)
  """
