"""The store's functions and a caller's temporary schema (PostgreSQL migration v8). PostgreSQL
searches a session's temporary schema first for tables and types unless the search path names
it: a caller that made a temporary type `text` with a cast to it had a SECURITY DEFINER step run
the cast's function as the schema's owner. Every function of the schema now pins
`search_path = pg_catalog, pg_temp`, and `store roles` leaves the host role no right to make
temporary objects.

Oracles: pg_proc (each function's settings), psql as the host role and as a role that may make
temporary objects (what the server runs, and as whom), and a v7 store made by the v7 release
(Tests/fixtures/postgresql-v7.sql, `make_postgresql_v7_fixture.py`) before and after its upgrade."""

import json
import pathlib
import subprocess

import pytest

from pgcluster import Client, activate, dump_accounts_schema, login
from pgcluster import client, pg, pgdb, roles  # noqa: F401
from pgserver import client_binary

pytestmark = pytest.mark.postgresql_only

PINNED = "search_path=pg_catalog, pg_temp"
V7_STORE = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "postgresql-v7.sql"
BOB_V7_PASSWORD = "can we fix it yes we can"  # alice, the owner, has a second factor there

# The reviewer's way in: a temporary type `text` and a cast to it from integer, whose function
# says as whom it runs and reads a whole password hash; then a host's step, which casts its
# wait (`p_wait_ms::text`) as it takes the write turn. One psql -c: one transaction.
SEIZE = (
    "CREATE TYPE pg_temp.text AS (x integer); "
    "CREATE FUNCTION pg_temp.seize(integer) RETURNS pg_temp.text LANGUAGE plpgsql AS $$ BEGIN "
    "RAISE EXCEPTION 'ran as % and read %', current_user, "
    "(SELECT password_hash FROM accounts.account ORDER BY id LIMIT 1); END $$; "
    "CREATE CAST (integer AS pg_temp.text) WITH FUNCTION pg_temp.seize(integer); "
    "SELECT accounts.pam_session_event('alice', 1, true, now(), 100, 'opened', 'kiosk')")
PAM_SESSION_EVENT = ("accounts.pam_session_event(text, bigint, boolean, timestamptz, integer, "
                     "text, text)")


def unpinned(pg, pgdb):
    """The functions of the schema `accounts` that do not pin the search path, SECURITY DEFINER
    ones first: (name, security definer, settings). pgcrypto's (migration v17), C functions of
    an extension that look up no name, are not the store's own."""
    rows = pg.json_rows("SELECT p.oid::regprocedure::text AS name, p.prosecdef AS definer, "
                        "p.proconfig AS config FROM pg_proc AS p "
                        "WHERE p.pronamespace = 'accounts'::regnamespace AND NOT EXISTS ("
                        "SELECT FROM pg_depend AS d WHERE d.classid = 'pg_proc'::regclass "
                        "AND d.objid = p.oid AND d.deptype = 'e')", pgdb)
    assert sum(r["definer"] for r in rows) >= 15, rows
    return sorted(((r["name"], r["definer"], r["config"]) for r in rows
                   if PINNED not in (r["config"] or [])), key=lambda r: (not r[1], r[0]))


def test_every_function_of_the_schema_pins_pg_temp_last(pg, pgdb, client):
    """pg_proc: every function of the schema (every SECURITY DEFINER step, the triggers, the
    helpers, and `stamp` and `sealed_hash`, which PUBLIC may call) has exactly
    search_path = pg_catalog, pg_temp among its settings."""
    activate(client)
    assert unpinned(pg, pgdb) == []


@pytest.mark.parametrize("sql", ["CREATE TEMP TABLE seized (x integer)",
                                 "CREATE TYPE pg_temp.text AS (x integer)", SEIZE],
                         ids=["table", "type", "the way in"])
def test_the_host_role_may_make_no_temporary_object(pg, pgdb, roles, sql):
    """After `store roles --apply`, psql as the host role may make no temporary table or type:
    PUBLIC no longer has TEMPORARY on the database, nor has the host role."""
    _, host = roles
    proc = pg.psql(sql, pgdb, user=host, check=False)
    assert proc.returncode != 0, proc
    assert f'permission denied to create temporary tables in database "{pgdb}"' in proc.stderr
    assert pg.value(f"SELECT has_database_privilege('{host}', '{pgdb}', 'TEMPORARY')",
                    pgdb) == "f"


def test_a_host_role_that_may_make_temporary_objects_is_refused(pg, pgdb, client):
    """A host role that keeps TEMPORARY through a role it belongs to: `store roles --apply`
    stops (exit 3, one sentence naming it), nothing granted."""
    activate(client)
    admin, host, lender = (pg.create_role("admin"), pg.create_role("host"),
                           pg.create_role("lender", login=False))
    try:
        pg.psql(f'GRANT TEMPORARY ON DATABASE "{pgdb}" TO "{lender}"; '
                f'GRANT "{lender}" TO "{host}"', pgdb)
        result = client.run("store", "roles", "--admin", admin, "--host", host, "--apply")
        assert result.code == 3 and result.stdout == "", result
        assert len(result.err_lines) == 1, result
        assert (f'the role "{host}" may still make temporary tables in the database "{pgdb}"'
                in result.stderr), result
        assert pg.value("SELECT count(*) FROM information_schema.role_table_grants "
                        f"WHERE grantee IN ('{admin}', '{host}')", pgdb) == "0"
    finally:
        for role in (admin, host, lender):
            pg.psql(f'DROP OWNED BY "{role}"', pgdb, check=False)
            pg.drop_role(role)


def load_v7_store(pg, pgdb):
    """pgdb holds the v7 fixture, loaded by the superuser (who owns it all, as if it had run
    the migrations)."""
    proc = subprocess.run([client_binary("psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f",
                           str(V7_STORE)], env=pg.env(pgdb), capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert pg.value("SELECT string_agg(identifier, ' ' ORDER BY identifier) "
                    "FROM accounts.schema_migration", pgdb) == "v1 v2 v3 v4 v5 v6 v7"


@pytest.fixture
def caller(pg, pgdb):
    """A role that may call pam_session_event and make temporary objects (as every role may by
    default): what the host role was before `store roles` took TEMPORARY away."""
    role = pg.create_role("caller")
    yield role
    pg.psql(f'DROP OWNED BY "{role}"', pgdb, check=False)
    pg.drop_role(role)


def grant_the_step(pg, pgdb, role):
    pg.psql(f'GRANT USAGE ON SCHEMA accounts TO "{role}"; '
            f'GRANT EXECUTE ON FUNCTION {PAM_SESSION_EVENT} TO "{role}"; '
            f'GRANT TEMPORARY ON DATABASE "{pgdb}" TO "{role}"', pgdb)


def test_a_v7_store_runs_the_callers_cast_as_its_owner_until_v8(pg, pgdb, tmp_path, caller):
    """On the v7 store the way in works: the cast's function runs as the owner (postgres) and
    reads alice's whole hash. After the upgrade (the owner's `store upgrade`, then `store roles
    --apply`), the same
    SQL by the same role runs the step with the catalog's text: it logs the session and
    returns true, the cast's function never called."""
    load_v7_store(pg, pgdb)
    grant_the_step(pg, pgdb, caller)
    whole = pg.value("SELECT password_hash FROM accounts.account ORDER BY id LIMIT 1", pgdb)
    before = pg.psql(SEIZE, pgdb, user=caller, check=False)
    assert before.returncode != 0, before
    assert f"ran as postgres and read {whole}" in before.stderr, before.stderr

    owner = Client(tmp_path / "owner", pg.uri(pgdb))
    upgrade(owner, pg, pgdb)
    admin, host = pg.create_role("admin"), pg.create_role("host")
    try:
        result = owner.run("store", "roles", "--admin", admin, "--host", host, "--apply")
        assert (result.code, result.stderr) == (0, ""), result
        assert unpinned(pg, pgdb) == []
        grant_the_step(pg, pgdb, caller)
        after = pg.psql(SEIZE, pgdb, user=caller, check=False)
        assert (after.returncode, after.stderr, after.stdout) == (0, "", "t\n"), after
        assert pg.value("SELECT kind || ' ' || username || ' ' || host FROM accounts.audit_event "
                        "ORDER BY id DESC LIMIT 1", pgdb) == "pam_session_opened alice kiosk"
    finally:
        for role in (admin, host):
            pg.psql(f'DROP OWNED BY "{role}"', pgdb, check=False)
            pg.drop_role(role)


def upgrade(owner, pg, pgdb):
    """The owner's `store upgrade` of the v7 store: v8 to v23, said in one line; no other
    command would migrate it."""
    result = owner.run("store", "upgrade")
    applied = ", ".join(f"v{n}" for n in range(8, 24))
    assert (result.code, result.stdout, result.stderr) == (
        0, f"The store {pg.uri(pgdb)} is upgraded for accounts 1.2.0: applied {applied}.\n",
        ""), result


def test_a_v7_store_upgraded_keeps_every_row(pg, pgdb, tmp_path):
    """The v7 store's `store upgrade` as its owner runs v8 to v23: every row of every table and
    every sequence as it was (schema_migration gains "v8" to "v17" and v18's release column,
    empty on every step, schema_expansion "v18" to "v23", host_report is new and empty,
    audit_kind v11's and v21's kinds, v17's server key and empty server_secret column, and
    pending_second_factor is new and empty; bob, whose uid was given, has his home /home/bob
    recorded in home_path and pinned); bob then logs in with his password."""
    load_v7_store(pg, pgdb)
    before = dump_accounts_schema(pg, pgdb)
    assert all(before[table] for table in before if not table.startswith("seq:")), before
    owner = Client(tmp_path / "owner", pg.uri(pgdb))
    upgrade(owner, pg, pgdb)
    admin, host = pg.create_role("admin"), pg.create_role("host")
    try:
        result = owner.run("store", "roles", "--admin", admin, "--host", host, "--apply")
        assert (result.code, result.stderr) == (0, ""), result
        after = dump_accounts_schema(pg, pgdb)
        steps = [json.loads(row) for row in after["schema_migration"]]
        assert all(step.pop("release") is None for step in steps), steps
        steps = [json.dumps(step, sort_keys=True) for step in steps]
        added = sorted(json.loads(row)["identifier"] for row in steps
                       if row not in before["schema_migration"])
        assert added == ["v10", "v11", "v12", "v13", "v14", "v15", "v16", "v17", "v8", "v9"], added
        after["schema_migration"] = before["schema_migration"]
        assert [(e["identifier"], e["release"]) for e in map(json.loads,
                                                             after.pop("schema_expansion"))] == [
            ("v18", "1.2.0"), ("v19", "1.2.0"), ("v20", "1.2.0"), ("v21", "1.2.0"),
            ("v22", "1.2.0"), ("v23", "1.2.0")]
        # Migration v15's fleet: the roles `store roles --apply` recorded, no host of its own.
        assert [{k: v for k, v in json.loads(row).items() if k != "applied_at"}
                for row in after.pop("fleet_role")] == [
            {"id": 1, "admin_role": admin, "host_role": host}]
        assert after.pop("fleet_host") == []
        # Migration v19's hosts' reports: none before a host's first sync.
        assert after.pop("host_report") == []
        assert after.pop("pending_second_factor") == []
        # Migration v17's key of the server, and no secret encrypted by it yet.
        assert len(after.pop("second_factor_key")) == 1
        factors = [json.loads(row) for row in after["second_factor"]]
        assert all(f.pop("server_secret") is None for f in factors), factors
        after["second_factor"] = sorted(json.dumps(f, sort_keys=True) for f in factors)
        # Migration v14's change counter (0: the rows before it are no change) and notes.
        assert after.pop("userdb_change") == []
        assert [json.loads(row) for row in after.pop("userdb_generation")] == [
            {"id": 1, "generation": 0}]
        # Migration v11's and v21's kinds of events are rows of audit_kind.
        kinds = set(after["audit_kind"]) - set(before["audit_kind"])
        assert kinds == {json.dumps({"name": k}) for k in (
            "access_refused", "userdb_enabled", "userdb_disabled", "userdb_synced",
            "fleet_host_added", "fleet_host_removed", "store_upgraded")}, kinds
        after["audit_kind"] = before["audit_kind"]
        homes = [(row["path"], row["uid"]) for row in map(json.loads, after.pop("home_path"))]
        assert homes == [("/home/bob", 20000)], homes
        accounts = [json.loads(row) for row in after["account"]]
        assert [(a["username"], a["home"]) for a in accounts] == [("alice", None),
                                                                 ("bob", "/home/bob")], accounts
        for account in accounts:
            account["home"] = None
        after["account"] = sorted(json.dumps(a, sort_keys=True) for a in accounts)
        # Migration v16's offline mark: none on the events from before it.
        events = [json.loads(row) for row in after["audit_event"]]
        assert all(event.pop("offline_id") is None for event in events), events
        # The upgrade's own event (migration v21's kind), the one event added.
        upgraded = [e for e in events if e["kind"] == "store_upgraded"]
        assert [e["detail"] for e in upgraded] == [
            "accounts 1.2.0: " + ", ".join(f"v{n}" for n in range(8, 24))], upgraded
        events = [e for e in events if e["kind"] != "store_upgraded"]
        after["audit_event"] = sorted(json.dumps(e, sort_keys=True) for e in events)
        assert after == before
        result = login(owner, username="bob", password=BOB_V7_PASSWORD)
        assert (result.code, result.out_lines[:1]) == (0, ["Welcome back Bob Builder!"]), result
    finally:
        for role in (admin, host):
            pg.psql(f'DROP OWNED BY "{role}"', pgdb, check=False)
            pg.drop_role(role)
