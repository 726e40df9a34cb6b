import AccountsCore

/// The rights of the two kinds of roles a fleet uses (`accounts store roles`): an administrator
/// role, which may run every command, and a host role, which may log people in and keep the
/// host's own user records.
///
/// An administrator role reads and writes every table (the audit log and the uids and gids
/// given out: reads and appends only), every sequence and every function, but runs no
/// migration (the schema's owner does, with `accounts store upgrade`). A host role writes
/// no table: it calls the functions of a host's steps (migrations "v5" to "v7", "v12" for
/// `2fa enable --begin` and `--confirm`, "v13" for its own `userdb enable` and `disable`, "v19"
/// for its syncs' reports) and reads what those steps and its user records read; not the audit
/// log, not the sessions' token hashes, and the accounts' password hashes only sealed
/// (`SealedPasswordHash`), and may
/// make no temporary table or type in the database (the right is taken from PUBLIC: a caller's
/// temporary schema could otherwise stand in for a type a step names). The schema's owner
/// becomes a member of the host role, unless it is a superuser or may signal any backend: a
/// step ends a host role's session that keeps the write turn (migration "v9"), which takes
/// that role's privileges. Running the SQL again sets the same rights (it revokes what it
/// grants first), so it is also how rights are brought up to date after an upgrade. It also
/// records both roles (`fleet_role`, migration "v15"): `accounts store hosts add` makes each
/// host's own role a member of the host role recorded, and the administrator role records
/// those hosts (`fleet_host`, which it inserts into and deletes from).
public enum PostgresRoles {
  /// The functions a host role may call, with their arguments' types.
  static let hostFunctions = [
    "login_facts(text)",
    "login_refusal(text, text, timestamptz, integer, text, text)",
    """
    login_failure(text, text, timestamptz, integer, bigint, double precision, \
    double precision, double precision, text, text, text, text)
    """,
    """
    login_success(text, text, timestamptz, integer, bigint, text, text, boolean, bigint, \
    bytea, bytea, double precision, bigint, bytea, text, text, text, text, text[], text[], text, \
    text, text)
    """,
    """
    login_success(text, text, timestamptz, integer, bigint, text, text, boolean, bigint, \
    bytea, bytea, double precision, bigint, bytea, text, text, text, text, text[], text[], text, \
    text, text, bytea, boolean)
    """,
    "second_factor_sealed(text, integer, text)",
    "session_by_token(bytea)",
    "session_touch(bytea, timestamptz, integer)",
    "session_end(bytea, boolean, timestamptz, integer, boolean, text[], text)",
    """
    change_password(text, timestamptz, integer, bigint, text, text, bigint, bytea, text[], \
    bytea, text, text, text, text)
    """,
    "pam_session_event(text, bigint, boolean, timestamptz, integer, text, text)",
    """
    second_factor_change(text, text, bigint, text, timestamptz, integer, bytea, text, bigint, \
    bytea[], bigint, bytea, text[], bytea, text, text, text)
    """,
    "event_count(text, text, text[])",
    "pam_account_event(text, text, bigint, timestamptz, integer, text, text)",
    "userdb_event(text, timestamptz, integer, text, text)",
    """
    second_factor_begin(text, bigint, text, timestamptz, integer, bytea, text, \
    double precision, text)
    """,
    """
    second_factor_confirm(text, bigint, text, timestamptz, integer, bytea, bigint, bytea[], \
    bytea, text, text)
    """,
    """
    second_factor_confirm_code(text, bigint, text, timestamptz, integer, text, bytea[], bytea, \
    text, text)
    """,
    "userdb_host_keep(text, text, timestamptz, integer)",
    "userdb_host_forget(text, integer)",
    "caller_host(text)",
    "audit_offline_event(text, timestamptz, text, text, text, text, text, integer)",
    "host_report_sync(text, bigint, text, text)",
    "host_report_sync(text, bigint, text, text, integer, timestamptz, timestamptz, text)",
  ]

  /// The tables a host role reads: what a login, a session, PAM and the user records read.
  static let hostTables = [
    "schema_migration", "schema_expansion", "activation", "account", "login_throttle", "audit_kind",
    "second_factor", "recovery_code", "account_group", "group_member", "posix_id",
    "userdb_setting", "userdb_host", "ssh_key", "pending_second_factor", "userdb_generation",
    "userdb_change",
  ]

  /// The columns of `accounts.account` a host role reads.
  ///
  /// All but `password_hash`, which it reads sealed (`accounts.account_view`, `login_facts`:
  /// migration "v7"). A column added later stays unread until it is named here.
  static let hostAccountColumns = [
    "id", "username", "username_key", "full_name", "email", "must_change_password",
    "disabled_at", "created_at", "updated_at", "password_changed_at", "last_login_at",
    "expires_at", "uid", "home", "shell",
  ]

  /// The tables of second factors a host role reads only some columns of: never a secret
  /// (sealed or not) nor a recovery code's hash (migration "v17": the server checks codes).
  static let hostSecondFactorColumns = [
    "second_factor": ["account_id", "last_step", "enabled_at"],
    "recovery_code": ["account_id", "used_at"],
    "pending_second_factor": ["account_id", "expires_at"],
  ]

  /// The tables an administrator role only reads (the audit log: reads and appends; the user
  /// records' change counter and notes, which the store's triggers write).
  static let readOnlyTables = [
    "schema_migration", "schema_expansion", "audit_kind", "userdb_generation", "userdb_change",
  ]

  /// The tables an administrator role reads and appends to but never changes: the audit log,
  /// and the uids and gids given out (a number is never given back, so that no new account
  /// inherits a removed one's files).
  static let appendOnlyTables = ["audit_event", "posix_id", "home_path"]

  /// Whether `name` can name a role here: 1 to 63 characters, letters, digits, `_`, `.`, `-`,
  /// not starting with a digit, `-` or `.`, and not PUBLIC or a `pg_` role.
  public static func isUsable(_ name: String) -> Bool {
    let scalars = Array(name.unicodeScalars)
    guard (1...63).contains(scalars.count), let first = scalars.first,
      first == "_" || ("a"..."z").contains(first) || ("A"..."Z").contains(first)
    else { return false }
    let lowered = name.lowercased()
    if lowered == "public" || lowered.hasPrefix("pg_") { return false }
    return scalars.allSatisfy { scalar in
      ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
        || ("0"..."9").contains(scalar) || "_.-".unicodeScalars.contains(scalar)
    }
  }

  /// `name` as an SQL identifier (always quoted, so its case is kept).
  static func identifier(_ name: String) -> String { "\"\(name)\"" }

  /// The SQL that gives `admin` and `host` their rights on the store's schema.
  ///
  /// One transaction; it stops (nothing changed) if either role does not exist or owns the
  /// schema. Both names must be `isUsable` and differ.
  public static func grants(admin: String, host: String) -> String {
    let (a, h) = (identifier(admin), identifier(host))
    let written = hostTables.filter { !readOnlyTables.contains($0) }
    let adminWrites = written.filter { !appendOnlyTables.contains($0) } + ["session"]
    let hostReads =
      (hostTables.filter {
        $0 != "account" && hostSecondFactorColumns[$0] == nil
      } + ["account_view"])
      .map { "accounts.\($0)" }.joined(separator: ", ")
    var sql = """
      -- The rights of an administrator role (\(a)) and of a fleet host role (\(h)) on the
      -- accounts store, made by `accounts store roles`; run again after every upgrade.
      BEGIN;
      DO $roles$
      DECLARE
        wanted text;
      BEGIN
        FOREACH wanted IN ARRAY ARRAY['\(admin)', '\(host)'] LOOP
          IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = wanted) THEN
            RAISE EXCEPTION 'the role "%" does not exist: create it first', wanted;
          END IF;
          IF (SELECT pg_catalog.pg_get_userbyid(nspowner) FROM pg_catalog.pg_namespace
              WHERE nspname = 'accounts') = wanted THEN
            RAISE EXCEPTION 'the role "%" owns the store: name another role', wanted;
          END IF;
        END LOOP;
      END $roles$;
      -- No temporary objects for the host role: a session's temporary schema is searched
      -- first for tables and types wherever a search path leaves it out. PostgreSQL lets every
      -- role (PUBLIC) make them in a database; accounts makes none, so PUBLIC loses the right
      -- here (a role of another program that needs it is granted TEMPORARY by name).
      DO $temporary$
      BEGIN
        EXECUTE pg_catalog.format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC, %I',
          pg_catalog.current_database(), '\(host)');
        IF pg_catalog.has_database_privilege('\(host)', pg_catalog.current_database(),
                                             'TEMPORARY') THEN
          RAISE EXCEPTION 'the role "%" may still make temporary tables in the database "%": '
            'run this as the database''s owner, and take TEMPORARY from the roles it belongs to',
            '\(host)', pg_catalog.current_database();
        END IF;
      END $temporary$;
      -- A step ends a host role's session that keeps the write turn (migration "v9"): the
      -- schema's owner, whose rights the steps run with, needs the host role's privileges.
      DO $ending$
      DECLARE
        owner_name text := (SELECT pg_catalog.pg_get_userbyid(nspowner)
                            FROM pg_catalog.pg_namespace WHERE nspname = 'accounts');
      BEGIN
        IF NOT pg_catalog.pg_has_role(owner_name, '\(host)', 'USAGE')
           AND NOT pg_catalog.pg_has_role(owner_name, 'pg_signal_backend', 'USAGE') THEN
          EXECUTE pg_catalog.format('GRANT %I TO %I', '\(host)', owner_name);
        END IF;
      EXCEPTION WHEN insufficient_privilege THEN
        RAISE EXCEPTION 'the store''s owner "%" must be made a member of the role "%" (so that '
          'a login can end its sessions that keep the write turn): run this as a superuser or '
          'a role with CREATEROLE', owner_name, '\(host)';
      END $ending$;
      REVOKE ALL ON ALL TABLES IN SCHEMA accounts FROM \(a), \(h);
      REVOKE ALL ON ALL SEQUENCES IN SCHEMA accounts FROM \(a), \(h);
      REVOKE ALL ON ALL FUNCTIONS IN SCHEMA accounts FROM \(a), \(h);
      GRANT USAGE ON SCHEMA accounts TO \(a), \(h);

      -- The administrator: every table read; written but the migrations' and the kinds of
      -- events; the audit log and the uids and gids given out appended to only; every sequence
      -- and every function.
      GRANT SELECT ON ALL TABLES IN SCHEMA accounts TO \(a);
      GRANT INSERT, UPDATE, DELETE ON \(adminWrites.map { "accounts.\($0)" }.joined(separator: ", "))
        TO \(a);
      GRANT INSERT ON \(appendOnlyTables.map { "accounts.\($0)" }.joined(separator: ", ")) TO \(a);
      GRANT INSERT, DELETE ON accounts.fleet_host TO \(a);
      GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA accounts TO \(a);
      GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA accounts TO \(a);

      -- The host: no table written, no audit event, session token hash or whole password
      -- hash read (the accounts' hashes sealed, through accounts.account_view); a host's steps
      -- through these functions only.
      GRANT SELECT ON \(hostReads) TO \(h);
      GRANT SELECT (\(hostAccountColumns.joined(separator: ", "))) ON accounts.account TO \(h);

      -- The server's key for second factors' secrets: the schema's owner alone reads it and
      -- decrypts with it (migration "v17").
      REVOKE ALL ON accounts.second_factor_key FROM \(a);
      REVOKE ALL ON FUNCTION accounts.server_open(bytea) FROM \(a);

      """
    for (table, columns) in hostSecondFactorColumns.sorted(by: { $0.key < $1.key }) {
      sql += "GRANT SELECT (\(columns.joined(separator: ", "))) ON accounts.\(table) TO \(h);\n"
    }
    for function in hostFunctions {
      sql += "GRANT EXECUTE ON FUNCTION accounts.\(function) TO \(h);\n"
    }
    sql += """
      -- The fleet's roles, as `accounts store hosts add` makes each host's own role a member of
      -- the host role.
      INSERT INTO accounts.fleet_role AS r (id, admin_role, host_role, applied_at)
      VALUES (1, '\(admin)', '\(host)', pg_catalog.now())
      ON CONFLICT (id) DO UPDATE SET admin_role = EXCLUDED.admin_role,
        host_role = EXCLUDED.host_role, applied_at = EXCLUDED.applied_at;
      COMMIT;

      """
    return sql
  }
}

extension PostgresStore {
  /// Gives `admin` and `host` their rights (`PostgresRoles.grants`), the schema made or
  /// brought up to date first; run by the schema's owner (or a superuser).
  public func grantRoles(admin: String, host: String) throws(AccountsError) {
    guard try storing({ () throws(StoreError) in try opened(for: .readWrite) }) != nil else {
      throw .storage(.failure(location: location, reason: "it holds no accounts store"))
    }
    let db = try storing { () throws(StoreError) in try connected() }
    try execute(db, PostgresRoles.grants(admin: admin, host: host))
  }
}
