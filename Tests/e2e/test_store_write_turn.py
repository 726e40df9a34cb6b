"""A host role that keeps the write turn (PostgreSQL migration v9). Every step takes the turn
(the activation row, FOR UPDATE) until its transaction ends; a stolen host role that calls a
step inside a transaction it never ends, or runs a long statement after one, no longer holds up
every other host's login: a step that waits for the turn ends a session of a role that does not
administer once it has kept the turn for a second, and takes it. An administrator's transaction
is still waited for.

Oracles: psycopg connections as the roles (what the server lets a session hold, and whether it
was ended), pg_locks and pg_stat_activity (the points each test waits on), and the program's
login as another host."""

import subprocess
import threading
import time

import psycopg
import pytest

from conftest import BIN, PASSWORD, USERNAME
from pgcluster import Client, activate, as_role, login
from pgcluster import client, pg, pgdb, roles  # noqa: F401

pytestmark = pytest.mark.postgresql_only

WELCOME = "Welcome back Alice Liddell!"
HELD = ("SELECT accounts.pam_session_event('alice', 1, true, now(), 100, 'held', 'thief')")


def connect(pg, pgdb, role, autocommit=False):
    return psycopg.connect(host=str(pg.socket), port=pg.port, dbname=pgdb, user=role,
                           autocommit=autocommit)


def holds_the_turn(pg, pgdb, pid) -> bool:
    """Whether the session `pid` holds the activation row's lock (its transaction locked it)."""
    return pg.value(
        "SELECT count(*) FROM pg_locks AS l WHERE l.pid = "
        f"{pid} AND l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock' AND l.granted "
        "AND l.transactionid = (SELECT xmax FROM accounts.activation WHERE id = 1)", pgdb) == "1"


def ended(connection) -> bool:
    """Whether the server ended this session (the next statement finds the connection gone)."""
    try:
        connection.execute("SELECT 1")
    except psycopg.OperationalError:
        return True
    return False


def held_events(pg, pgdb) -> str:
    return pg.value("SELECT count(*) FROM accounts.audit_event WHERE host = 'thief'", pgdb)


def test_a_host_role_idle_in_its_transaction_is_ended_and_the_login_goes_through(
        pg, pgdb, tmp_path, roles):
    """The host role calls a step in a transaction and stays idle in it, the turn held: another
    host's login as the host role logs in (exit 0, Welcome); the holder's session was ended and
    its step rolled back (no event of it)."""
    _, host = roles
    holder = connect(pg, pgdb, host)
    try:
        holder.execute(HELD)
        pid = holder.info.backend_pid
        assert holds_the_turn(pg, pgdb, pid)
        result = login(as_role(pg, pgdb, tmp_path, host, "kiosk"))
        assert (result.code, result.out_lines[:1]) == (0, [WELCOME]), result
        assert ended(holder)
        assert held_events(pg, pgdb) == "0"
    finally:
        holder.close()


def test_a_host_role_running_a_long_statement_after_a_step_is_ended(pg, pgdb, tmp_path, roles):
    """The host role runs a step and then sleeps in the same statement (active, not idle): a
    pam-auth on another host (its wait 2 seconds) still logs in, and the holder's statement
    ends with its session."""
    _, host = roles
    holder = connect(pg, pgdb, host, autocommit=True)
    pid = holder.info.backend_pid
    outcome = {}

    def hold():
        try:
            holder.execute(HELD + ", pg_sleep(600)")
            outcome["ended"] = False
        except psycopg.OperationalError:
            outcome["ended"] = True

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not (holds_the_turn(pg, pgdb, pid) and pg.value(
                f"SELECT wait_event FROM pg_stat_activity WHERE pid = {pid}", pgdb) == "PgSleep"):
            assert time.monotonic() < deadline, "the holder never took the turn"
            time.sleep(0.05)
        proc = subprocess.run([BIN, "pam-auth", "--database", pg.uri(pgdb, user=host)],
                              input=PASSWORD.encode(), capture_output=True, cwd=tmp_path,
                              env={"PAM_USER": USERNAME, "PAM_TYPE": "auth"}, timeout=60)
        assert (proc.returncode, proc.stderr) == (0, b""), proc
        thread.join(timeout=30)
        assert outcome == {"ended": True}
        assert held_events(pg, pgdb) == "0"
    finally:
        if thread.is_alive():
            pg.psql(f"SELECT pg_terminate_backend({pid})", pgdb)
            thread.join(timeout=30)
        holder.close()


def test_an_administrators_transaction_is_waited_for_not_ended(pg, pgdb, tmp_path, roles):
    """The administrator role holds the turn in a transaction: a host's login waits its 5
    seconds and is busy (exit 3), and the administrator's session is left as it was."""
    admin, host = roles
    holder = connect(pg, pgdb, admin)
    try:
        holder.execute("SELECT 1 FROM accounts.activation WHERE id = 1 FOR UPDATE")
        assert holds_the_turn(pg, pgdb, holder.info.backend_pid)
        kiosk = as_role(pg, pgdb, tmp_path, host, "kiosk")
        result = login(kiosk)
        assert (result.code, result.stdout, result.stderr) == (
            3, "", f"The database {kiosk.database} is busy: another program held it for more "
            "than 5 seconds. Try again later.\n"), result
        assert not ended(holder)
        holder.rollback()
    finally:
        holder.close()


@pytest.fixture
def owned_by_a_plain_role(pg, pgdb):
    """pgdb owned by a role that is not a superuser (its CREATEROLE given by the test), which
    makes the store: (that owner, a host role, an administrator role)."""
    owner, admin, host = pg.create_role("owner"), pg.create_role("admin"), pg.create_role("host")
    pg.psql(f'ALTER DATABASE "{pgdb}" OWNER TO "{owner}"')
    yield owner, admin, host
    for role in (admin, host, owner):
        pg.psql(f'DROP OWNED BY "{role}"', pgdb, check=False)
        pg.drop_role(role)


def test_a_plain_owner_is_made_a_member_of_the_host_role(pg, pgdb, tmp_path,
                                                          owned_by_a_plain_role):
    """A store owned by a role that is not a superuser: without CREATEROLE, `store roles
    --apply` stops (exit 3, one sentence) and grants nothing; with it, the owner becomes a member
    of the host role, and a host role that keeps the turn is ended as with a superuser owner."""
    owner, admin, host = owned_by_a_plain_role
    client = Client(tmp_path / "owner", pg.uri(pgdb, user=owner))
    activate(client)
    result = client.run("store", "roles", "--admin", admin, "--host", host, "--apply")
    assert result.code == 3 and result.stdout == "" and len(result.err_lines) == 1, result
    assert (f'the store\'s owner "{owner}" must be made a member of the role "{host}"'
            in result.stderr), result
    assert pg.value("SELECT count(*) FROM information_schema.role_table_grants "
                    f"WHERE grantee IN ('{admin}', '{host}')", pgdb) == "0"

    pg.psql(f'ALTER ROLE "{owner}" CREATEROLE')
    result = client.run("store", "roles", "--admin", admin, "--host", host, "--apply")
    assert (result.code, result.stderr) == (0, ""), result
    assert pg.value(f"SELECT pg_has_role('{owner}', '{host}', 'USAGE')", pgdb) == "t"
    holder = connect(pg, pgdb, host)
    try:
        holder.execute(HELD)
        assert holds_the_turn(pg, pgdb, holder.info.backend_pid)
        result = login(as_role(pg, pgdb, tmp_path, host, "kiosk"))
        assert (result.code, result.out_lines[:1]) == (0, [WELCOME]), result
        assert ended(holder)
    finally:
        holder.close()
