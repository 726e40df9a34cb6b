"""`accounts store hosts`: each fleet host its own PostgreSQL role. `add` makes a login role (a
member of the host role `store roles --apply` recorded) and records its host; every event and
session that role writes names its host, whatever the host sends (ACCOUNTS_HOST_NAME, or a
step's argument by direct SQL); the shared host role keeps naming itself; `list` shows the
hosts; `remove` withdraws the role alone (its next connection refused, its events kept); both
are in the audit log. A role without CREATEROLE changes nothing (nor logs anything).

Oracles: psql as the owner (the rows, the catalogue) and as the host's role (direct SQL)."""

import json
import secrets

import pytest

from conftest import PASSWORD, USERNAME
from pgcluster import activate, as_role, cannot_connect, login, on_socket
from pgcluster import client, pg, pgdb, roles  # noqa: F401
from pamhelp import pam_env
from userdbhelp import on_host

pytestmark = pytest.mark.postgresql_only

CANNOT_MANAGE = ("The role {} may not make or change roles: run this as a role with CREATEROLE "
                 "(and, on PostgreSQL 16 or later, ADMIN OPTION on the fleet's host role); "
                 "nothing was changed.\n")


@pytest.fixture
def office(pg, pgdb, tmp_path, roles):
    """The administrator role, with CREATEROLE, as a client; the host roles the test made are
    dropped after it."""
    admin, _ = roles
    pg.psql(f'ALTER ROLE "{admin}" CREATEROLE')
    yield as_role(pg, pgdb, tmp_path, admin, "office")
    for role in pg.psql("SELECT role_name FROM accounts.fleet_host", pgdb).split():
        pg.drop_role(role)


def host_name() -> str:
    return f"box-{secrets.token_hex(4)}"


def add(office, name, *args) -> str:
    """`store hosts add NAME` done; returns the role made."""
    result = office.run("store", "hosts", "add", name, *args)
    role = args[1] if args else f"accounts_host_{name}"
    assert (result.code, result.stderr) == (0, ""), result
    return role


def rows(pg, pgdb, sql) -> list:
    return pg.psql(sql, pgdb).splitlines()


def test_add_list_and_remove(pg, pgdb, roles, office):
    """add: the role accounts_host_NAME made with LOGIN, a member of the host role, recorded;
    list (text and --json, exact); remove: the role dropped, the host forgotten."""
    _, host = roles
    name = host_name()
    role = f"accounts_host_{name}"
    result = office.run("store", "hosts", "add", name)
    assert (result.code, result.stdout, result.stderr) == (
        0, f"The host {name} now logs in as the role {role} (a member of {host}); set how it "
        "authenticates in the server's pg_hba.conf.\n", ""), result
    assert rows(pg, pgdb, f"SELECT rolcanlogin, rolpassword IS NULL, "
                f"pg_has_role('{role}', '{host}', 'MEMBER') FROM pg_authid "
                f"WHERE rolname = '{role}'") == ["t|t|t"]
    made = pg.value(f"SELECT accounts.stamp(made_at) FROM accounts.fleet_host "
                    f"WHERE name = '{name}'", pgdb)
    listed = office.run("store", "hosts", "list", "--json")
    assert (listed.code, listed.stdout, listed.stderr) == (
        0, f'{{"name":"{name}","role":"{role}","madeAt":"{made}","lastEvent":null}}\n', "")
    text = office.run("store", "hosts", "list")
    assert (text.code, text.stderr) == (0, ""), text
    assert text.out_lines == [
        "HOST                  ROLE                              MADE                      "
        "LAST EVENT",
        f"{name:<20}  {role:<32}  {made:<24}  -"]

    removed = office.run("store", "hosts", "remove", name)
    assert (removed.code, removed.stdout, removed.stderr) == (
        0, f"The host {name} is removed: the role {role} may no longer log in; its events "
        "stay.\n", ""), removed
    assert pg.value(f"SELECT count(*) FROM pg_roles WHERE rolname = '{role}'") == "0"
    assert office.run("store", "hosts", "list", "--json").stdout == ""
    assert office.run("store", "hosts", "list").stdout == "No host has a role of its own.\n"
    # Both changes are in the log, written by the administrator's machine, no user.
    logged = [json.loads(line) for line in office.run("log", "--json").out_lines]
    assert [(e["event"], e["user"], e["detail"], e["host"] != name) for e in logged
            if e["event"].startswith("fleet_host")] == [
        ("fleet_host_added", None, f"host {name} role {role}", True),
        ("fleet_host_removed", None, f"host {name} role {role}", True)]


def test_each_hosts_role_names_its_host(pg, pgdb, tmp_path, roles, office):
    """Two hosts, each its own role: a login through one that says (ACCOUNTS_HOST_NAME) it is
    the other, and pam-auth through the other, each name the role's host, events and sessions;
    the shared host role still names the host it says; log --host, session list and hosts list
    read what the store recorded."""
    _, shared = roles
    first, second = host_name(), host_name()
    first_role, second_role = add(office, first), add(office, second, "--role", f"r_{second}")
    kiosk = as_role(pg, pgdb, tmp_path, first_role, "kiosk")
    result = login(kiosk, env=kiosk.env(ACCOUNTS_HOST_NAME=second))
    assert result.code == 0, result
    pam = pam_env(ACCOUNTS_HOST_NAME=first)
    result = on_host(kiosk, "node-x", "pam-auth", "--database",
                     pg.uri(pgdb, user=second_role), input=PASSWORD, env=pam)
    assert (result.code, result.stdout, result.stderr) == (0, "", ""), result
    fleet = as_role(pg, pgdb, tmp_path, shared, "fleet")
    assert login(fleet, env=fleet.env(ACCOUNTS_HOST_NAME="kiosk-7")).code == 0
    assert rows(pg, pgdb, "SELECT kind || ' ' || host FROM accounts.audit_event "
                "WHERE kind NOT IN ('activation', 'fleet_host_added') ORDER BY id") == [
        f"login_success {first}", f"login_success {second}", "login_success kiosk-7"]
    assert rows(pg, pgdb, "SELECT host FROM accounts.session ORDER BY id") == [first, "kiosk-7"]

    shown = office.run("log", "--json", "--host", first)
    assert [(e["event"], e["user"], e["host"]) for e in map(json.loads, shown.out_lines)] == [
        ("login_success", USERNAME, first)], shown
    sessions = office.run("session", "list", "--json")
    assert [json.loads(line)["host"] for line in sessions.out_lines] == [first, "kiosk-7"]
    listed = [json.loads(line) for line in office.run("store", "hosts", "list", "--json")
              .out_lines]
    assert [(h["name"], h["role"]) for h in listed] == sorted(
        [(first, first_role), (second, second_role)])
    last = dict(line.split("|") for line in rows(
        pg, pgdb, "SELECT host, accounts.stamp(max(occurred_at)) FROM accounts.audit_event "
        "GROUP BY host"))
    assert all(h["lastEvent"] == last[h["name"]] for h in listed), (listed, last)


def test_user_records_entry_audit_and_pam_agree(pg, pgdb, tmp_path, roles, office):
    """Through a host's role, `userdb enable` (ACCOUNTS_HOST_NAME naming another host) keeps
    the role's host's entry, its event and `userdb status` name that host, and pam-auth's event
    too."""
    name, other = host_name(), host_name()
    role = add(office, name)
    kiosk = as_role(pg, pgdb, tmp_path, role, "kiosk")
    enabled = on_host(kiosk, "node-y", "userdb", "enable", "--folder", str(tmp_path / "rec"),
                      env=kiosk.env(ACCOUNTS_HOST_NAME=other))
    assert enabled.code == 0, enabled
    status = on_host(kiosk, "node-y", "userdb", "status", env=kiosk.env(ACCOUNTS_HOST_NAME=other))
    assert status.code == 0 and status.out_lines[:2] == [f"Host: {name}", "User records: on"], \
        status
    result = on_host(kiosk, "node-y", "pam-auth", "--database", kiosk.database, input=PASSWORD,
                     env=pam_env())
    assert (result.code, result.stdout, result.stderr) == (0, "", ""), result
    assert rows(pg, pgdb, "SELECT host FROM accounts.userdb_host") == [name]
    assert rows(pg, pgdb, "SELECT kind || ' ' || host FROM accounts.audit_event "
                "WHERE kind NOT IN ('activation', 'fleet_host_added') ORDER BY id") == [
        f"userdb_enabled {name}", f"login_success {name}"]


def test_direct_sql_names_the_roles_host(pg, pgdb, roles, office):
    """psql as a host's role, calling the steps with another host's name (and after SET ROLE
    to the shared host role): the rows name the role's host."""
    _, shared = roles
    name, other = host_name(), host_name()
    role = add(office, name)
    pg.psql(f"SELECT accounts.userdb_event('userdb_synced', now(), 1000, 'direct', '{other}');"
            f"SELECT accounts.userdb_host_keep('{other}', '/srv/rec', now(), 1000);"
            f'SET ROLE "{shared}";'
            f"SELECT accounts.userdb_event('userdb_synced', now(), 1000, 'set role', '{other}')",
            pgdb, user=role)
    assert rows(pg, pgdb, "SELECT detail || ' ' || host FROM accounts.audit_event "
                "WHERE kind = 'userdb_synced' ORDER BY id") == [
        f"direct {name}", f"set role {name}"]
    assert rows(pg, pgdb, "SELECT host || ' ' || folder FROM accounts.userdb_host") == [
        f"{name} /srv/rec"]


def test_a_removed_host_is_refused(pg, pgdb, tmp_path, roles, office):
    """After remove, the host's next command exits 3 with one sentence; its events stay."""
    name = host_name()
    role = add(office, name)
    kiosk = as_role(pg, pgdb, tmp_path, role, "kiosk")
    assert login(kiosk).code == 0
    assert office.run("store", "hosts", "remove", name).code == 0
    result = kiosk.run("status")
    assert (result.code, result.stdout, result.stderr) == (
        3, "", cannot_connect(on_socket(pg), kiosk.database, f'role "{role}" does not exist')
        + "\n"), result
    assert rows(pg, pgdb, f"SELECT kind FROM accounts.audit_event WHERE host = '{name}'") == [
        "login_success"]


def test_a_role_kept_by_the_server_may_no_longer_log_in(pg, pgdb, tmp_path, roles, office):
    """A host's role that something else names (a right on the database) is kept, NOLOGIN:
    its next command exits 3 with one sentence."""
    name = host_name()
    role = add(office, name)
    pg.psql(f'GRANT CONNECT ON DATABASE "{pgdb}" TO "{role}"', pgdb)
    assert office.run("store", "hosts", "remove", name).code == 0
    result = as_role(pg, pgdb, tmp_path, role, "kiosk").run("status")
    try:
        assert (result.code, result.stdout, result.stderr) == (
            3, "", cannot_connect(on_socket(pg), pg.uri(pgdb, user=role),
                                  f'role "{role}" is not permitted to log in') + "\n"), result
    finally:
        pg.psql(f'REVOKE CONNECT ON DATABASE "{pgdb}" FROM "{role}"', pgdb)
        pg.drop_role(role)


def test_a_role_without_createrole_changes_nothing(pg, pgdb, tmp_path, roles):
    """add and remove by an administrator role without CREATEROLE: exit 3, one sentence, no
    role made or changed, nothing recorded or forgotten."""
    admin, _ = roles
    office = as_role(pg, pgdb, tmp_path, admin, "office")
    name = host_name()
    result = office.run("store", "hosts", "add", name)
    assert (result.code, result.stdout, result.stderr) == (
        3, "", CANNOT_MANAGE.format(admin)), result
    assert pg.value("SELECT count(*) FROM accounts.fleet_host", pgdb) == "0"
    assert pg.value(f"SELECT count(*) FROM pg_roles WHERE rolname = 'accounts_host_{name}'") \
        == "0"
    assert pg.value("SELECT count(*) FROM accounts.audit_event WHERE kind LIKE 'fleet_host%'",
                    pgdb) == "0"
    owner = as_role(pg, pgdb, tmp_path, "postgres", "owner")
    role = add(owner, name)
    try:
        result = office.run("store", "hosts", "remove", name)
        assert (result.code, result.stdout, result.stderr) == (
            3, "", CANNOT_MANAGE.format(admin)), result
        assert rows(pg, pgdb, "SELECT name FROM accounts.fleet_host") == [name]
        assert pg.value(f"SELECT rolcanlogin FROM pg_roles WHERE rolname = '{role}'") == "t"
    finally:
        pg.drop_role(role)


def test_hosts_before_store_roles(pg, pgdb, client):
    """add on a store whose roles `store roles --apply` never recorded: exit 1, one sentence
    saying to run it first; nothing made."""
    activate(client)
    name = host_name()
    result = client.run("store", "hosts", "add", name)
    assert (result.code, result.stdout, result.stderr) == (
        1, "", "This store does not know its fleet's host role yet: run accounts store roles "
        "--admin ROLE --host ROLE --apply first (as the store's owner).\n"), result
    assert pg.value(f"SELECT count(*) FROM pg_roles WHERE rolname = 'accounts_host_{name}'") \
        == "0"


def test_refusals(pg, pgdb, roles, office):
    """A name that is no host name's label (exit 2), a host or role taken (exit 1), an unknown
    host (exit 5): one sentence each, nothing changed."""
    _, shared = roles
    for bad in ("Box-1", "box_1", "-box", "box-", "b" * 64, ""):
        result = office.run("store", "hosts", "add", "--", bad)
        assert (result.code, result.stdout) == (2, ""), (bad, result)
        assert result.err_lines[0] == (
            "Error: A host name is 1 to 63 lower-case letters, digits or -, starting and ending "
            f"with a letter or digit: {bad} is not one."), (bad, result)
    name = host_name()
    role = add(office, name)
    for args, code, said in (
            ([name, "--role", "another_one"], 1,
             f"The host {name} already has a role of its own; remove it first to make it again."),
            ([host_name(), "--role", role], 1,
             f"The role {role} already exists: name a new one with --role."),
            ([host_name(), "--role", shared], 1,
             f"The role {shared} already exists: name a new one with --role.")):
        result = office.run("store", "hosts", "add", *args)
        assert (result.code, result.stdout, result.stderr) == (code, "", said + "\n"), result
    result = office.run("store", "hosts", "remove", "box-none")
    assert (result.code, result.stdout, result.stderr) == (
        5, "", "No host named box-none has a role of its own.\n"), result
    assert rows(pg, pgdb, "SELECT name || ' ' || role_name FROM accounts.fleet_host") == [
        f"{name} {role}"]
