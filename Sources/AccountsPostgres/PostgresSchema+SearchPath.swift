/// The SQL of PostgreSQL migration "v8": every function of the schema pins
/// `search_path = pg_catalog, pg_temp`.
///
/// Until now they pinned `pg_catalog` alone, and PostgreSQL then searches the caller's own
/// temporary schema first for tables and types: a caller that made a temporary type named
/// `text`, with a cast to it, had a `SECURITY DEFINER` step (a host role's) run that cast's
/// function as the schema's owner (through `p_wait_ms::text` in `take_write_turn`). With
/// `pg_temp` named last, a name the catalog has is always the catalog's, as PostgreSQL's
/// "Writing SECURITY DEFINER Functions Safely" advises; every name of ours in the bodies is
/// written with its schema. The functions that are not `SECURITY DEFINER` (triggers, the
/// helpers the steps call, and `stamp` and `sealed_hash`, which any role may call) pin the same
/// path, so that no body depends on who calls it. `accounts store roles` also takes the right to
/// make temporary objects away from the host role (`PostgresRoles`).
let postgresSchemaV8 = """
  DO $pin$
  DECLARE
    f regprocedure;
  BEGIN
    FOR f IN SELECT p.oid::regprocedure FROM pg_catalog.pg_proc AS p
             WHERE p.pronamespace = 'accounts'::regnamespace ORDER BY p.oid LOOP
      EXECUTE pg_catalog.format('ALTER FUNCTION %s SET search_path = pg_catalog, pg_temp', f);
    END LOOP;
  END $pin$;
  """
