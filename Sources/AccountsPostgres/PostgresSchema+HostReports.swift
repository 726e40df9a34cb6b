/// The SQL of PostgreSQL migration "v19": each host's report of its last contact and sync, for
/// `accounts store health`; never edit it once shipped.
///
/// Expand-only: a new table and a new function, nothing an earlier release reads changed. A
/// host writes no table: it reports through a step (`SECURITY DEFINER`, its `search_path`
/// pinned, revoked from PUBLIC; `accounts store roles` grants it to the host role), stamped
/// with the caller's host (`caller_host`), so that a host with a role of its own reports for
/// itself alone. The times are the server's, not the host's.
let postgresSchemaV19 = """
  -- Each host's last report: when it was last heard from, when its last sync that worked was
  -- reported and which change counter its records then held, the release it runs, and how
  -- many syncs failed in a row since (the last failure's one-line reason kept after a sync
  -- that worked).
  CREATE TABLE accounts.host_report (
    host text COLLATE "C" PRIMARY KEY CHECK (char_length(host) BETWEEN 1 AND 253),
    contact_at timestamptz NOT NULL,
    synced_at timestamptz,
    applied_generation bigint CHECK (applied_generation >= 0),
    release text NOT NULL CHECK (char_length(release) BETWEEN 1 AND 64),
    failures integer NOT NULL DEFAULT 0 CHECK (failures >= 0),
    last_failure text CHECK (char_length(last_failure) <= 1024),
    last_failure_at timestamptz
  );

  -- `userdb sync`'s report: p_generation the counter its records hold after a sync that worked
  -- (p_failure null), or p_failure the reason of one that failed. A report that changes
  -- nothing but the time of contact is written only when that is a minute old, so that a sync
  -- with nothing behind writes nothing. No write turn: no decision reads this table. True when
  -- written.
  CREATE FUNCTION accounts.host_report_sync(
    p_host text, p_generation bigint, p_release text, p_failure text)
  RETURNS boolean
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  DECLARE
    v_now timestamptz := pg_catalog.date_trunc('milliseconds', pg_catalog.now());
    v_last accounts.host_report;
  BEGIN
    p_host := accounts.caller_host(p_host);
    p_failure := pg_catalog.left(p_failure, 1024);
    SELECT * INTO v_last FROM accounts.host_report AS r WHERE r.host = p_host;
    IF FOUND AND p_failure IS NULL AND v_last.failures = 0
       AND v_last.applied_generation IS NOT DISTINCT FROM p_generation
       AND v_last.release = p_release AND v_last.contact_at > v_now - interval '1 minute' THEN
      RETURN false;
    END IF;
    INSERT INTO accounts.host_report AS r
      (host, contact_at, synced_at, applied_generation, release, failures, last_failure,
       last_failure_at)
    VALUES (p_host, v_now, CASE WHEN p_failure IS NULL THEN v_now END,
      CASE WHEN p_failure IS NULL THEN p_generation END, p_release,
      CASE WHEN p_failure IS NULL THEN 0 ELSE 1 END, p_failure,
      CASE WHEN p_failure IS NOT NULL THEN v_now END)
    ON CONFLICT (host) DO UPDATE SET
      contact_at = EXCLUDED.contact_at,
      synced_at = coalesce(EXCLUDED.synced_at, r.synced_at),
      applied_generation = coalesce(EXCLUDED.applied_generation, r.applied_generation),
      release = EXCLUDED.release,
      failures = CASE WHEN p_failure IS NULL THEN 0 ELSE r.failures + 1 END,
      last_failure = coalesce(EXCLUDED.last_failure, r.last_failure),
      last_failure_at = coalesce(EXCLUDED.last_failure_at, r.last_failure_at);
    RETURN true;
  END $$;

  REVOKE ALL ON accounts.host_report FROM PUBLIC;
  REVOKE ALL ON FUNCTION accounts.host_report_sync(text, bigint, text, text) FROM PUBLIC;

  -- A fleet whose roles `store roles --apply` recorded: both may report at once, and its
  -- administrator role reads the reports (`store health`), before the roles are applied again.
  DO $grant$
  DECLARE
    recorded record;
  BEGIN
    FOR recorded IN SELECT r.rolname FROM accounts.fleet_role AS f
                    JOIN pg_catalog.pg_roles AS r ON r.rolname IN (f.admin_role, f.host_role)
    LOOP
      EXECUTE pg_catalog.format(
        'GRANT EXECUTE ON FUNCTION accounts.host_report_sync(text, bigint, text, text) TO %I',
        recorded.rolname);
    END LOOP;
    FOR recorded IN SELECT r.rolname FROM accounts.fleet_role AS f
                    JOIN pg_catalog.pg_roles AS r ON r.rolname = f.admin_role
    LOOP
      EXECUTE pg_catalog.format('GRANT SELECT ON accounts.host_report TO %I', recorded.rolname);
    END LOOP;
  END $grant$;
  """
