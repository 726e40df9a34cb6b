"""`accounts pam-auth --database postgresql://…` on the PostgreSQL store, with pam_exec's
environment (no HOME, no PG*): the check answers and logs as on SQLite, and PG* variables set
by the caller do not choose the server."""

import subprocess

import pytest

from conftest import BIN, PASSWORD, USERNAME, Result
from pgcluster import activate
from pgcluster import client, pg, pgdb  # noqa: F401

# These tests name their stores themselves (PostgreSQL databases of their own, SQLite files),
# whatever ACCOUNTS_TEST_BACKEND says: they run once, in the postgresql run.
pytestmark = pytest.mark.postgresql_only


# pam-auth.

PAM = {"PAM_USER": USERNAME, "PAM_SERVICE": "sshd", "PAM_RHOST": "203.0.113.9",
       "PAM_TTY": "ssh", "PAM_TYPE": "auth"}


def pam_auth(client, database, password=PASSWORD, **extra):
    env = dict(PAM, **extra)
    proc = subprocess.run([BIN, "pam-auth", "--database", database], input=password.encode(),
                          capture_output=True, env=env, cwd=str(client.root), timeout=60)
    return Result(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def test_pam_auth_on_postgresql(pg, pgdb, client):
    """pam-auth --database URI (pam_exec's environment: no HOME, no PG*): exit 0 silent for the
    right password, 1 for a wrong one; the events say where from."""
    activate(client)
    result = pam_auth(client, client.database)
    assert (result.code, result.stdout, result.stderr) == (0, "", ""), result
    result = pam_auth(client, client.database, password="not the password, but long enough")
    assert (result.code, result.stdout, result.stderr) == (1, "", ""), result
    details = pg.psql("SELECT kind || ' ' || coalesce(detail, '') FROM accounts.audit_event "
                      "ORDER BY id", pgdb).splitlines()
    assert details[-2:] == [
        "login_success password; pam service=sshd rhost=203.0.113.9 tty=ssh",
        "login_failure invalid user name or password; pam service=sshd rhost=203.0.113.9 "
        "tty=ssh"] or (details[-2].startswith("login_success") and "pam service=sshd" in
                       details[-2] and details[-1].startswith("login_failure")
                       and "pam service=sshd" in details[-1]), details


def test_pam_auth_ignores_pg_variables(pg, pgdb, client):
    """pam-auth unsets every PG* variable: `postgresql:///DB` with PGHOST, PGPORT, PGUSER and
    PGPASSWORD set does not reach the server they name (libpq's defaults are used, where no
    such server answers); nothing is counted in the store."""
    activate(client)
    events = pg.value("SELECT count(*) FROM accounts.audit_event", pgdb)
    bare = f"postgresql:///{pgdb}"
    result = pam_auth(client, bare, PGHOST=str(pg.socket), PGPORT=str(pg.port),
                      PGUSER="postgres", PGPASSWORD="x", PGDATABASE=pgdb)
    assert result.code == 3 and result.stdout == "", result
    assert len(result.err_lines) == 1, result
    assert result.err_lines[0].startswith("Cannot connect to the PostgreSQL server "), result
    assert str(pg.socket) not in result.stderr, result
    assert f" for the database {bare}: " in result.stderr, result
    assert pg.value("SELECT count(*) FROM accounts.audit_event", pgdb) == events
