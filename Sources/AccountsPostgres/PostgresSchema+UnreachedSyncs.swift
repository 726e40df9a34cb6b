/// The SQL of PostgreSQL migration "v23" (no SQLite migration): the syncs a host could not
/// bring to the server, reported by its next sync that reaches it, for `accounts store health`;
/// never edit it once shipped.
///
/// Expand-only: nullable columns of `host_report` (which the release before never reads) and
/// a new overload of `host_report_sync` with more parameters; the one of "v19" stays as it is
/// for the hosts of 1.1.0's successors that do not send them. The overload is a step as the
/// first is (`SECURITY DEFINER`, its `search_path` pinned, revoked from PUBLIC, granted to the
/// host role), stamped with the caller's host. The times of the syncs are the host's (the
/// server never heard them), bounded by the server's now; when they were reported is the
/// server's.
let postgresSchemaV23 = """
  -- The syncs that could not reach the server, as the host's last report of them said: how
  -- many, the first and the last (the host's clock), the last reason (one line), and when the
  -- server was told. A later report of others replaces them.
  ALTER TABLE accounts.host_report
    ADD COLUMN unreached integer CHECK (unreached BETWEEN 1 AND 1000000),
    ADD COLUMN unreached_first timestamptz,
    ADD COLUMN unreached_last timestamptz,
    ADD COLUMN unreached_reason text CHECK (char_length(unreached_reason) <= 1024),
    ADD COLUMN unreached_reported_at timestamptz;

  -- `userdb sync`'s report (the "v19" step's), with the syncs before it that could not reach
  -- the server when p_unreached is not null: their count, first and last time and last
  -- reason. True when written.
  CREATE FUNCTION accounts.host_report_sync(
    p_host text, p_generation bigint, p_release text, p_failure text, p_unreached integer,
    p_unreached_first timestamptz, p_unreached_last timestamptz, p_unreached_reason text)
  RETURNS boolean
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  DECLARE
    v_now timestamptz := pg_catalog.date_trunc('milliseconds', pg_catalog.now());
    v_written boolean;
  BEGIN
    v_written := accounts.host_report_sync(p_host, p_generation, p_release, p_failure);
    IF p_unreached IS NULL THEN
      RETURN v_written;
    END IF;
    p_unreached_last := pg_catalog.date_trunc('milliseconds',
      least(coalesce(p_unreached_last, v_now), v_now));
    p_unreached_first := pg_catalog.date_trunc('milliseconds',
      least(coalesce(p_unreached_first, p_unreached_last), p_unreached_last));
    UPDATE accounts.host_report AS r SET
      unreached = least(greatest(p_unreached, 1), 1000000),
      unreached_first = p_unreached_first,
      unreached_last = p_unreached_last,
      unreached_reason = pg_catalog.left(coalesce(p_unreached_reason, ''), 1024),
      unreached_reported_at = v_now
    WHERE r.host = accounts.caller_host(p_host);
    RETURN true;
  END $$;

  REVOKE ALL ON FUNCTION accounts.host_report_sync(
    text, bigint, text, text, integer, timestamptz, timestamptz, text) FROM PUBLIC;

  -- A fleet whose roles `store roles --apply` recorded: both may report at once.
  DO $grant$
  DECLARE
    recorded record;
  BEGIN
    FOR recorded IN SELECT r.rolname FROM accounts.fleet_role AS f
                    JOIN pg_catalog.pg_roles AS r ON r.rolname IN (f.admin_role, f.host_role)
    LOOP
      EXECUTE pg_catalog.format(
        'GRANT EXECUTE ON FUNCTION accounts.host_report_sync(text, bigint, text, text, '
        || 'integer, timestamptz, timestamptz, text) TO %I', recorded.rolname);
    END LOOP;
  END $grant$;
  """
