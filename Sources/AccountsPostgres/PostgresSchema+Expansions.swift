/// The SQL of PostgreSQL migration "v18" (no SQLite migration), the first expansion: where
/// expansions are recorded, and the release beside each contract step.
///
/// `schema_expansion` is read by this release and later ones only; the release before (1.1.0)
/// reads `schema_migration` alone, finds every step it knows there, and keeps logging people in
/// on the expanded store. `schema_migration.release` names the release of each contract step
/// recorded from now on, so that a program too old for one says which release it needs. The
/// fleet's roles recorded by `store roles --apply` read the new table at once (a host of this
/// release reads it at each login), before the owner runs `store roles --apply` again. Never
/// edit it once shipped.
let postgresSchemaV18 = """
  -- The expansions that have run (migrations that only add: the release before keeps working).
  CREATE TABLE accounts.schema_expansion (
    identifier text PRIMARY KEY,
    release text NOT NULL CHECK (char_length(release) BETWEEN 1 AND 32),
    applied_at timestamptz NOT NULL DEFAULT now()
  );

  -- The release that brought each contract step recorded from now on.
  ALTER TABLE accounts.schema_migration ADD COLUMN release text
    CHECK (release IS NULL OR char_length(release) BETWEEN 1 AND 32);

  DO $grant$
  DECLARE
    recorded record;
  BEGIN
    FOR recorded IN SELECT r.rolname FROM accounts.fleet_role AS f
                    JOIN pg_catalog.pg_roles AS r ON r.rolname IN (f.admin_role, f.host_role)
    LOOP
      EXECUTE pg_catalog.format('GRANT SELECT ON accounts.schema_expansion TO %I',
                                recorded.rolname);
    END LOOP;
  END $grant$;
  """
