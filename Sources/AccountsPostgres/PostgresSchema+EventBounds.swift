/// The SQL of PostgreSQL migration "v22" (no SQLite migration): an event's text is bounded,
/// whoever writes it.
///
/// A host role writes events through its steps with a user name and a detail it sends (a PAM
/// request's service, remote host and terminal, which the program caps at 255 bytes each): a
/// host taken over could send a gigabyte with every failed login. Every row of `audit_event` now
/// keeps at most 4,096 characters of detail and 256 of user name (and its key), the rest cut
/// and marked `…`; the program writes less than that in every event. A trigger, so that no step
/// or statement can go around it. Rows already written stay as they are. Never edit it once
/// shipped.
let postgresSchemaV22 = """
  -- An event's user name and detail are cut to their bounds (the cut marked), whichever step or
  -- statement writes it.
  CREATE FUNCTION accounts.audit_event_bounded() RETURNS trigger
  LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
  BEGIN
    IF pg_catalog.char_length(NEW.detail) > 4096 THEN
      NEW.detail := pg_catalog.left(NEW.detail, 4095) || '…';
    END IF;
    IF pg_catalog.char_length(NEW.username) > 256 THEN
      NEW.username := pg_catalog.left(NEW.username, 255) || '…';
    END IF;
    IF pg_catalog.char_length(NEW.username_key) > 256 THEN
      NEW.username_key := pg_catalog.left(NEW.username_key, 255) || '…';
    END IF;
    RETURN NEW;
  END $$;

  REVOKE ALL ON FUNCTION accounts.audit_event_bounded() FROM PUBLIC;

  CREATE TRIGGER audit_event_bounded BEFORE INSERT ON accounts.audit_event
  FOR EACH ROW EXECUTE FUNCTION accounts.audit_event_bounded();

  -- The fleet's administrator role runs every function of the schema (`store roles --apply`).
  DO $grant$
  DECLARE
    recorded record;
  BEGIN
    FOR recorded IN SELECT r.rolname FROM accounts.fleet_role AS f
                    JOIN pg_catalog.pg_roles AS r ON r.rolname = f.admin_role
    LOOP
      EXECUTE pg_catalog.format(
        'GRANT EXECUTE ON FUNCTION accounts.audit_event_bounded() TO %I', recorded.rolname);
    END LOOP;
  END $grant$;
  """
