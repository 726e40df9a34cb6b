/// The SQL of PostgreSQL migration "v9": a host role cannot keep the write turn.
///
/// Every step takes the write turn (the `activation` row, `FOR UPDATE`) until its transaction
/// ends. A host's own steps are each one statement, so a host holds the turn for the
/// milliseconds a step runs; but a host role may call a step inside a transaction of its own
/// and never end it (or run a long statement after the step in the same transaction), and every
/// other host's login then waited out its wait and failed as busy. Now a step that waits for
/// the turn looks at who holds it: a session of a role that does not administer
/// (`accounts.caller_administers`' test) that held it for a whole second while the step
/// waited is ended (`pg_terminate_backend`: its transaction rolls back), and the step takes the
/// turn. An administrator's transaction is waited for, as before. Ending another role's
/// session takes the privileges of that role: the schema's owner is a superuser, or a member of
/// the host role (`accounts store roles` makes it one), or of `pg_signal_backend`; without
/// them the step waits as before.
let postgresSchemaV9 = """
  -- Takes the write turn, waiting at most p_wait_ms; a wait that runs out fails as busy
  -- (lock_not_available). A holder that does not administer and keeps the turn for a second
  -- (a host's step holds it for milliseconds) is ended.
  CREATE OR REPLACE FUNCTION accounts.take_write_turn(p_wait_ms integer) RETURNS void
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  DECLARE
    longest_hold constant interval := interval '1 second';
    wait_ms constant integer := greatest(p_wait_ms, 1);
    deadline timestamptz;
    seen_xid xid;
    seen_at timestamptz;
    holder_pid integer;
    holder_role oid;
  BEGIN
    PERFORM set_config('lock_timeout', wait_ms::text || 'ms', true);
    PERFORM 1 FROM accounts.activation WHERE id = 1 FOR UPDATE SKIP LOCKED;
    IF FOUND THEN
      RETURN;
    END IF;
    deadline := clock_timestamp() + make_interval(secs => wait_ms / 1000.0);
    LOOP
      -- The transaction that holds the row now (its locker), and since when at the latest.
      SELECT a.xmax, clock_timestamp() INTO seen_xid, seen_at
      FROM accounts.activation AS a WHERE a.id = 1;
      BEGIN
        PERFORM set_config('lock_timeout', greatest(1, ceil(1000 * extract(epoch FROM
          least(deadline, seen_at + longest_hold) - clock_timestamp())))::bigint::text || 'ms',
          true);
        PERFORM 1 FROM accounts.activation WHERE id = 1 FOR UPDATE;
        PERFORM set_config('lock_timeout', wait_ms::text || 'ms', true);
        RETURN;
      EXCEPTION WHEN lock_not_available THEN
        holder_pid := NULL;
        holder_role := NULL;
        IF clock_timestamp() >= seen_at + longest_hold THEN
          -- Still the same transaction, live, holding the row lock: the session running it.
          SELECT l.pid INTO holder_pid FROM pg_locks AS l
          WHERE l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock' AND l.granted
            AND l.transactionid = seen_xid
            AND seen_xid = (SELECT a.xmax FROM accounts.activation AS a WHERE a.id = 1)
            AND EXISTS (SELECT 1 FROM pg_locks AS t
                        WHERE t.pid = l.pid AND t.locktype = 'relation' AND t.granted
                          AND t.relation = 'accounts.activation'::regclass
                          AND t.mode = 'RowShareLock');
          SELECT s.usesysid INTO holder_role FROM pg_stat_activity AS s
          WHERE s.pid = holder_pid;
        END IF;
        IF holder_role IS NOT NULL
           AND NOT has_table_privilege(holder_role, 'accounts.account', 'UPDATE')
           AND (pg_has_role(holder_role, 'USAGE')
                OR pg_has_role('pg_signal_backend', 'USAGE')) THEN
          -- A host's step holds the turn for milliseconds: this one is kept by its caller.
          PERFORM pg_terminate_backend(holder_pid, 1000);
        ELSIF clock_timestamp() >= deadline THEN
          RAISE;
        END IF;
      END;
    END LOOP;
  END $$;
  """
