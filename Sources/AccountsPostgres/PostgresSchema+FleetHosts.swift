/// The SQL of PostgreSQL migration "v15": each fleet host its own role; never edit it once
/// shipped.
///
/// `accounts store roles --apply` records the fleet's two roles (`fleet_role`), and
/// `accounts store hosts add` makes a login role for one host, a member of the host role, and
/// records which host it is (`fleet_host`). Whatever a step is sent as its host, the events and
/// sessions a host's own role writes name that host (`caller_host`, applied by triggers on the
/// audit log and the sessions, and by the user record steps to their host's entry): a stolen
/// host's credential writes in its own name only, and is withdrawn alone. A caller without a
/// role of its own (the shared host role, an administrator, the owner) names its host as before.
let postgresSchemaV15 = """
  -- The fleet's roles as `accounts store roles --apply` last gave them their rights: the
  -- administrator role and the host role every host's own role is made a member of. One row.
  CREATE TABLE accounts.fleet_role (
    id integer PRIMARY KEY CHECK (id = 1),
    admin_role text NOT NULL CHECK (char_length(admin_role) BETWEEN 1 AND 63),
    host_role text NOT NULL CHECK (char_length(host_role) BETWEEN 1 AND 63),
    applied_at timestamptz NOT NULL
  );

  -- The hosts that log in with a role of their own (`accounts store hosts add`): the host's
  -- name (a host name's label: lower-case letters, digits and inner '-'), its login role, and
  -- when it was made.
  CREATE TABLE accounts.fleet_host (
    name text COLLATE "C" PRIMARY KEY
      CHECK (char_length(name) BETWEEN 1 AND 63 AND name ~ '^[a-z0-9]([a-z0-9-]*[a-z0-9])?$'),
    role_name text COLLATE "C" NOT NULL UNIQUE CHECK (char_length(role_name) BETWEEN 1 AND 63),
    made_at timestamptz NOT NULL
  );

  -- The host the caller writes as: the host whose own role the session logged in with, else
  -- p_host (what the shared host role, an administrator or the owner sends). session_user, not
  -- current_user: a step runs as the schema's owner, and SET ROLE changes neither.
  CREATE FUNCTION accounts.caller_host(p_host text) RETURNS text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
  RETURN coalesce(
    (SELECT h.name FROM accounts.fleet_host AS h WHERE h.role_name = session_user), p_host);

  REVOKE ALL ON FUNCTION accounts.caller_host(text) FROM PUBLIC;

  -- Every event and session is stamped with the caller's host, whichever step or statement
  -- writes it.
  CREATE FUNCTION accounts.stamp_caller_host() RETURNS trigger
  LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
  BEGIN
    NEW.host := accounts.caller_host(NEW.host);
    RETURN NEW;
  END $$;

  REVOKE ALL ON FUNCTION accounts.stamp_caller_host() FROM PUBLIC;

  CREATE TRIGGER audit_event_caller_host BEFORE INSERT ON accounts.audit_event
  FOR EACH ROW EXECUTE FUNCTION accounts.stamp_caller_host();
  CREATE TRIGGER session_caller_host BEFORE INSERT ON accounts.session
  FOR EACH ROW EXECUTE FUNCTION accounts.stamp_caller_host();

  -- `userdb enable` without --uids: the caller's host keeps user records in p_folder, its entry
  -- renewed at p_now (the server's clock for a caller that does not administer), unless it
  -- keeps them in another folder already. Returns the folder its entry names.
  CREATE OR REPLACE FUNCTION accounts.userdb_host_keep(
    p_host text, p_folder text, p_now timestamptz, p_wait_ms integer)
  RETURNS text
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  DECLARE
    v_folder text;
  BEGIN
    p_host := accounts.caller_host(p_host);
    p_now := accounts.step_time(p_now);
    PERFORM accounts.take_write_turn(p_wait_ms);
    INSERT INTO accounts.userdb_host AS h (host, folder, enabled_at)
    VALUES (p_host, p_folder, p_now)
    ON CONFLICT (host) DO UPDATE SET enabled_at = EXCLUDED.enabled_at
    WHERE h.folder = EXCLUDED.folder;
    SELECT h.folder INTO v_folder FROM accounts.userdb_host AS h WHERE h.host = p_host;
    RETURN v_folder;
  END $$;

  -- `userdb disable`: the caller's host forgotten; false when it kept no records. Its caller
  -- removes the host's files before it commits.
  CREATE OR REPLACE FUNCTION accounts.userdb_host_forget(p_host text, p_wait_ms integer)
  RETURNS boolean
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  BEGIN
    p_host := accounts.caller_host(p_host);
    PERFORM accounts.take_write_turn(p_wait_ms);
    DELETE FROM accounts.userdb_host AS h WHERE h.host = p_host;
    RETURN FOUND;
  END $$;
  """
