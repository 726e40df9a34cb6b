"""Rolling upgrades of a shared PostgreSQL store: a store the previous release (1.1.0, schema
v17) made is used by no command of this one, `status` included, until its owner runs `accounts
store upgrade`, which applies its expansions (v18 to v23) once; the previous release then still
logs people in there (login, verify, pam-auth, pam-helper), as the owner and as the fleet's host role
(in the pgfleet run through its pooler, as a fleet's hosts reach the server), while this release
does too. The roles keep their rights through the upgrade: `store health` finds roles that were
current still current, and still names roles applied before an earlier migration. Every
PostgreSQL run runs them (each test makes its database and names its roles).

Oracles: the exact lines and exit codes, both programs' answers, psql as the owner."""

import json

import pytest

from conftest import BIN, BOB, BOB_PASSWORD, PASSWORD, WRONG_PASSWORD, form
from pgcluster import Client
from pgcluster import pg, pgdb  # noqa: F401
from stores import ADMIN_ROLE, HOST_ROLE, ROLES
from upgradehelp import (PREVIOUS_BIN, PREVIOUS_RELEASE, RELEASE, pam_auth, pam_helper,
                         previous, program_uri)

pytestmark = pytest.mark.every_postgresql_run


def older(location: str) -> str:
    return (f"Cannot use the database {location}: its store is older than this version of "
            f"accounts ({RELEASE}); its owner must first run accounts store upgrade.\n")


def upgraded(location: str) -> str:
    return (f"The store {location} is upgraded for accounts {RELEASE}: applied v18, v19, v20, "
            "v21, v22, v23.\n")


@pytest.fixture
def owner(pg, pgdb, tmp_path):
    """The store's owner with a store the previous release made: alice activated it, bob
    added."""
    client = Client(tmp_path / "owner", program_uri(pg, pgdb, "postgres"))
    assert previous(client, "--version").stdout == f"{PREVIOUS_RELEASE}\n"
    result = previous(client, "activate", input=form())
    assert (result.code, result.stderr) == (0, ""), result
    result = previous(client, "user", "add", "--username", BOB, "--full-name", "Bob Builder",
                      "--email", "bob@example.org", "--password-stdin", input=BOB_PASSWORD)
    assert (result.code, result.stderr) == (0, ""), result
    return client


def test_a_write_no_longer_upgrades_the_store(pg, pgdb, owner):
    """This release's write and `status`, as the owner: exit 3, one sentence naming `accounts
    store upgrade`; nothing migrated; the previous release goes on as before."""
    for args, given in [(("unlock", "alice"), None), (("status",), None),
                        (("verify", "--username", "alice", "--password-stdin"), PASSWORD)]:
        result = owner.run(*args, input=given)
        assert (result.code, result.stdout, result.stderr) == (3, "", older(owner.database)), args
    assert pg.value("SELECT to_regclass('accounts.schema_expansion')", pgdb) == ""
    assert pg.value("SELECT count(*) FROM accounts.schema_migration", pgdb) == "17"
    result = previous(owner, "verify", "--username", "alice", "--password-stdin", input=PASSWORD)
    assert (result.code, result.stdout, result.stderr) == (0, "", ""), result


def test_store_upgrade_applies_the_expansion_once(pg, pgdb, owner, tmp_path):
    """`store upgrade`: this release's expansions (v18 to v23) applied, said in one line and
    logged once (`store_upgraded`, as the owner's host); again: up to date, nothing logged; an
    SQLite store is a usage error (it upgrades itself)."""
    result = owner.run("store", "upgrade", env=owner.env(ACCOUNTS_HOST_NAME="office-1"))
    assert (result.code, result.stdout, result.stderr) == (0, upgraded(owner.database), "")
    result = owner.run("store", "upgrade", "--contract")
    assert (result.code, result.stdout, result.stderr) == (
        0, f"The store {owner.database} is up to date for accounts {RELEASE}.\n", "")
    assert pg.psql("SELECT identifier || ' ' || release FROM accounts.schema_expansion "
                   "ORDER BY 1", pgdb).splitlines() == [
        "v18 1.2.0", "v19 1.2.0", "v20 1.2.0", "v21 1.2.0",
        "v22 1.2.0", "v23 1.2.0"]
    logged = owner.run("log", "--event", "store_upgraded", "--json")
    assert [(e["event"], e["user"], e["detail"], e["host"])
            for e in map(json.loads, logged.out_lines)] == [
        ("store_upgraded", None, f"accounts {RELEASE}: v18, v19, v20, v21, v22, v23",
         "office-1")], logged
    assert pg.value("SELECT count(*) FROM accounts.schema_migration", pgdb) == "17"
    sqlite = Client(tmp_path / "sqlite", str(tmp_path / "accounts.sqlite3"))
    result = sqlite.run("store", "upgrade")
    assert result.code == 2 and result.stdout == "", result
    assert result.err_lines[0] == (
        "Error: accounts store upgrade upgrades a PostgreSQL store (a postgresql:// URI in "
        "--database or ACCOUNTS_DATABASE): an SQLite file upgrades itself when accounts next "
        "writes it."), result


def test_the_previous_release_logs_in_on_the_upgraded_store(pg, pgdb, owner, tmp_path):
    """After `store upgrade`, the previous release as the owner: `status`, `login`, `verify`
    (right and wrong), `pam-auth`, and pam-helper's auth and account stages; this release
    logs the same people in."""
    assert owner.run("store", "upgrade").stdout == upgraded(owner.database)
    result = previous(owner, "status")
    assert (result.code, result.stderr) == (0, ""), result
    assert result.out_lines[0] == "State: Activated", result
    result = previous(owner, "login", "--no-session", input=f"alice\n{PASSWORD}\n")
    assert (result.code, result.stderr) == (0, ""), result
    assert result.out_lines[0].startswith("Welcome back "), result
    result = previous(owner, "verify", "--username", BOB, "--password-stdin", input=BOB_PASSWORD)
    assert (result.code, result.stdout, result.stderr) == (0, "", ""), result
    result = previous(owner, "verify", "--username", BOB, "--password-stdin",
                      input=WRONG_PASSWORD)
    assert (result.code, result.stdout, result.stderr) == (1, "", ""), result
    assert_pam_paths(PREVIOUS_BIN, owner, owner.database)
    result = owner.run("verify", "--username", BOB, "--password-stdin", input=BOB_PASSWORD)
    assert (result.code, result.stdout, result.stderr) == (0, "", ""), result


def assert_pam_paths(binary, client, database):
    """pam-auth exit 0 silent; pam-helper auth asks the password and says success, account
    says success."""
    result = pam_auth(binary, client, database)
    assert (result.code, result.stdout, result.stderr) == (0, "", ""), result
    result = pam_helper(binary, client, "auth", database, [f"OK {PASSWORD}"])
    assert result.code == 0, result
    assert result.out_lines[0].startswith("AUTHTOK "), result
    assert result.out_lines[-1] == "RESULT success", result
    result = pam_helper(binary, client, "account", database)
    assert (result.code, result.out_lines[-1:]) == (0, ["RESULT success"]), result


@pytest.fixture
def fleet(pg, pgdb, owner):
    """The previous release's `store roles --apply` on its store: (admin role, host role); the
    fleet run's own roles, which its pooler lets in, or two made for this test."""
    made = [] if ROLES else [pg.create_role("admin"), pg.create_role("host")]
    admin, host = made or [ADMIN_ROLE, HOST_ROLE]
    result = previous(owner, "store", "roles", "--admin", admin, "--host", host, "--apply")
    assert (result.code, result.stderr) == (0, ""), result
    yield admin, host
    for role in made:
        pg.psql(f'DROP OWNED BY "{role}"', pgdb, check=False)
        pg.drop_role(role)


def test_the_host_role_is_told_to_upgrade_then_both_releases_log_in(pg, pgdb, owner, fleet,
                                                                      tmp_path):
    """As the fleet's host role (through the pooler in the pgfleet run): before `store upgrade`
    this release's `status` and `verify` say the store is older (exit 3, one sentence: the role
    has no right to migrate, and is not asked to); after it, without `store roles` again, the
    previous release and this one both log people in, `pam-auth` and `pam-helper` included, and
    a host may report its syncs."""
    _, host = fleet
    uri = program_uri(pg, pgdb, host) if ROLES else pg.uri(pgdb, user=host)
    kiosk = Client(tmp_path / "kiosk", uri)
    for args, given in [(("status",), None),
                        (("verify", "--username", "alice", "--password-stdin"), PASSWORD)]:
        result = kiosk.run(*args, input=given)
        assert (result.code, result.stdout, result.stderr) == (3, "", older(uri)), args
    result = previous(kiosk, "verify", "--username", "alice", "--password-stdin", input=PASSWORD)
    assert (result.code, result.stdout, result.stderr) == (0, "", ""), result

    assert owner.run("store", "upgrade").stdout == upgraded(owner.database)
    for binary in (PREVIOUS_BIN, None):
        result = kiosk.run("verify", "--username", BOB, "--password-stdin", input=BOB_PASSWORD,
                           binary=binary)
        assert (result.code, result.stdout, result.stderr) == (0, "", ""), (binary, result)
        result = kiosk.run("login", "--no-session", input=f"alice\n{PASSWORD}\n",
                           binary=binary)
        assert (result.code, result.stderr) == (0, ""), (binary, result)
        result = kiosk.run("status", binary=binary)
        assert (result.code, result.out_lines[:1]) == (0, ["State: Activated"]), (binary, result)
        assert_pam_paths(binary or BIN, kiosk, uri)
    # The upgrade granted the host role this release's new steps itself: a host reports to
    # `store health` before the roles are applied again.
    assert pg.psql("SELECT accounts.host_report_sync('kiosk-9', NULL, '1.2.0', NULL)", pgdb,
                   user=host).strip() == "t"
    # With the syncs that could not reach the server, the later times bounded by the server's.
    assert pg.psql("SELECT accounts.host_report_sync('kiosk-9', NULL, '1.2.0', NULL, 3, "
                   "'2026-01-01T00:00:00Z', '2999-01-01T00:00:00Z', 'away')", pgdb,
                   user=host).strip() == "t"
    assert pg.psql("SELECT unreached, unreached_first, unreached_last <= now(), unreached_reason "
                   "FROM accounts.host_report WHERE host = 'kiosk-9'", pgdb).strip() == (
        "3|2026-01-01 00:00:00+00|t|away")


# What a role may do in the store's schema: each function it may run, each table, column and
# sequence right it holds (has_*_privilege: through the roles it is a member of too).
RIGHTS = """
SELECT 'function ' || p.oid::regprocedure FROM pg_catalog.pg_proc AS p
  WHERE p.pronamespace = 'accounts'::regnamespace
    AND pg_catalog.has_function_privilege('{role}', p.oid, 'EXECUTE')
UNION ALL
SELECT 'table ' || c.relname || ' ' || r FROM pg_catalog.pg_class AS c,
    unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER']) AS r
  WHERE c.relnamespace = 'accounts'::regnamespace AND c.relkind IN ('r', 'v', 'p')
    AND pg_catalog.has_table_privilege('{role}', c.oid, r)
UNION ALL
SELECT 'column ' || c.relname || '.' || a.attname || ' ' || r FROM pg_catalog.pg_class AS c
    JOIN pg_catalog.pg_attribute AS a ON a.attrelid = c.oid AND a.attnum > 0
      AND NOT a.attisdropped, unnest(ARRAY['SELECT', 'INSERT', 'UPDATE']) AS r
  WHERE c.relnamespace = 'accounts'::regnamespace AND c.relkind IN ('r', 'v', 'p')
    AND pg_catalog.has_column_privilege('{role}', c.oid, a.attnum, r)
UNION ALL
SELECT 'sequence ' || c.relname || ' ' || r FROM pg_catalog.pg_class AS c,
    unnest(ARRAY['USAGE', 'SELECT', 'UPDATE']) AS r
  WHERE c.relnamespace = 'accounts'::regnamespace AND c.relkind = 'S'
    AND pg_catalog.has_sequence_privilege('{role}', c.oid, r)
ORDER BY 1"""


def test_store_upgrade_gives_the_roles_what_store_roles_gives(pg, pgdb, owner, fleet):
    """The roles the previous release applied, then `store upgrade`: each has exactly the rights
    this release's `store roles --apply` then gives, so no host or administrator waits for the
    roles to be applied again (each expansion grants what it adds, in itself)."""
    assert owner.run("store", "upgrade").code == 0
    upgraded = {role: pg.psql(RIGHTS.format(role=role), pgdb).splitlines() for role in fleet}
    admin, host = fleet
    result = owner.run("store", "roles", "--admin", admin, "--host", host, "--apply")
    assert (result.code, result.stderr) == (0, ""), result
    for role in fleet:
        applied = pg.psql(RIGHTS.format(role=role), pgdb).splitlines()
        assert any(line.startswith("function accounts.login_facts(") for line in applied), role
        missing = sorted(set(applied) - set(upgraded[role]))
        extra = sorted(set(upgraded[role]) - set(applied))
        assert (missing, extra) == ([], []), role


def test_a_store_upgraded_past_this_release_names_the_release_it_needs(pg, pgdb, owner):
    """A contract step this release does not know, recorded with the release that brought it:
    every command says which release the store needs (exit 3, one sentence), `store upgrade`
    too; an expansion it does not know (a later release's addition) is no obstacle."""
    assert owner.run("store", "upgrade").code == 0
    pg.psql("INSERT INTO accounts.schema_expansion (identifier, release) "
            "VALUES ('v9001', '1.3.0')", pgdb)
    result = owner.run("status")
    assert (result.code, result.stderr) == (0, ""), result
    pg.psql("INSERT INTO accounts.schema_migration (identifier, release) "
            "VALUES ('v9002', '1.3.0')", pgdb)
    needs = (f"Cannot use the database {owner.database}: its store needs accounts 1.3.0 or "
             "later; upgrade accounts on this host to use it.\n")
    for args in (("status",), ("unlock", "alice"), ("store", "upgrade")):
        result = owner.run(*args)
        assert (result.code, result.stdout, result.stderr) == (3, "", needs), args


ROLES_SENTENCE = "The fleet's roles got their rights at "


def health(owner) -> dict:
    """`store health --json` as the owner (exit 0 healthy or 1 degraded)."""
    result = owner.run("store", "health", "--json")
    assert result.code in (0, 1) and result.stderr == "", result
    return json.loads(result.stdout)


def test_an_upgrade_of_expansions_keeps_applied_roles_current_for_store_health(
        pg, pgdb, owner, fleet):
    """Roles the previous release applied after its store's last migration, then `store
    upgrade` (expansions only, each granting the roles what it adds): `store health` names no
    problem of the roles, and gives the upgrade's time as when they got their rights."""
    before = health(owner)
    assert not [p for p in before["problems"] if p.startswith(ROLES_SENTENCE)], before
    assert owner.run("store", "upgrade").stdout == upgraded(owner.database)
    after = health(owner)
    assert not [p for p in after["problems"] if p.startswith(ROLES_SENTENCE)], after
    assert after["rolesAppliedAt"] > before["rolesAppliedAt"], (before, after)
    assert pg.psql("SELECT r.applied_at = max(x.applied_at) FROM accounts.fleet_role AS r, "
                   "accounts.schema_expansion AS x GROUP BY r.applied_at", pgdb).strip() == "t"


def test_roles_applied_before_an_earlier_migration_stay_named_after_an_upgrade(
        pg, pgdb, owner, fleet):
    """Roles applied before one of the store's migrations (they may lack its rights): `store
    health` names them before and after `store upgrade`, which cannot know what they lack and
    says so (each time it runs), until `store roles --apply` runs again."""
    pg.psql("UPDATE accounts.fleet_role SET applied_at = (SELECT min(applied_at) - "
            "interval '1 hour' FROM accounts.schema_migration)", pgdb)
    assert [p for p in health(owner)["problems"] if p.startswith(ROLES_SENTENCE)]
    again = ("The fleet's roles got their rights before a migration of this store: run accounts "
             f"store roles --apply again, as its owner, with accounts {RELEASE}.\n")
    result = owner.run("store", "upgrade")
    assert (result.code, result.stdout, result.stderr) == (
        0, upgraded(owner.database) + again, ""), result
    result = owner.run("store", "upgrade")
    assert (result.code, result.stdout) == (
        0, f"The store {owner.database} is up to date for accounts {RELEASE}.\n" + again), result
    named = [p for p in health(owner)["problems"] if p.startswith(ROLES_SENTENCE)]
    assert len(named) == 1 and named[0].endswith("run accounts store roles --apply again."), named
    admin, host = fleet
    result = owner.run("store", "roles", "--admin", admin, "--host", host, "--apply")
    assert (result.code, result.stderr) == (0, ""), result
    assert not [p for p in health(owner)["problems"] if p.startswith(ROLES_SENTENCE)]
    assert owner.run("store", "upgrade").stdout == (
        f"The store {owner.database} is up to date for accounts {RELEASE}.\n")
