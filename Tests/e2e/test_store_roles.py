"""`accounts store roles`: an administrator role and a fleet host role on a PostgreSQL store.
The host role logs people in (status, login, verify, whoami, logout, passwd, 2fa for oneself)
through the store's functions; every administrator command is refused with one sentence (exit 3)
and nothing written; direct SQL as the host role is denied; its clock and lockout policy are the
server's.

Oracles: psql as the host role (what the server lets it do), pg_dump of the schema's data before
and after, pyotp for codes."""

import json
import secrets

import pyotp
import pytest

from conftest import PASSWORD, USERNAME
from pgcluster import (activate, as_role, assert_one_sentence, dump_accounts_schema, login,
                       permission_prefix)
from pgcluster import client, pg, pgdb, roles  # noqa: F401

pytestmark = pytest.mark.postgresql_only

NEW_PASSWORD = "a brand new password for alice"


def test_printed_sql_is_what_apply_runs(pg, pgdb, client, roles):
    """Without --apply the SQL is printed (one transaction, nothing run); psql running it again
    as the owner succeeds and leaves the same rights."""
    admin, host = roles
    result = client.run("store", "roles", "--admin", admin, "--host", host)
    assert result.code == 0 and result.stderr == "", result
    assert result.out_lines[2] == "BEGIN;" and result.out_lines[-1] == "COMMIT;", result
    assert f'GRANT EXECUTE ON FUNCTION accounts.login_facts(text) TO "{host}";' in result.out_lines
    rights = pg.psql(f"SELECT privilege_type, table_name FROM information_schema.role_table_grants "
                     f"WHERE grantee = '{host}' ORDER BY 2, 1", pgdb)
    pg.psql(result.stdout, pgdb)
    assert pg.psql(f"SELECT privilege_type, table_name FROM information_schema.role_table_grants "
                   f"WHERE grantee = '{host}' ORDER BY 2, 1", pgdb) == rights
    assert set(rights.replace("|", " ").split()[0::2]) == {"SELECT"}, rights


@pytest.mark.parametrize("args,message", [
    (["--admin", "a b", "--host", "h"], "--admin needs a role name of 1 to 63 letters"),
    (["--admin", "a", "--host", "pg_read_all_data"], "--host needs a role name of 1 to 63"),
    (["--admin", "same", "--host", "same"], "--admin and --host must name two different roles"),
])
def test_unusable_role_names_are_refused(client, args, message):
    result = client.run("store", "roles", *args)
    assert result.code == 2 and result.stdout == "", result
    assert result.err_lines[0].startswith("Error: " + message), result


def test_missing_role_or_owner_is_refused_whole(pg, pgdb, client):
    """A role that does not exist, or the store's owner named as one: exit 3, one sentence, no
    right given."""
    activate(client)
    admin = pg.create_role("admin")
    try:
        before = pg.value("SELECT count(*) FROM information_schema.role_table_grants "
                         f"WHERE grantee = '{admin}'", pgdb)
        for host, words in (("nobody_here", 'the role "nobody_here" does not exist'),
                            ("postgres", 'the role "postgres" owns the store')):
            result = client.run("store", "roles", "--admin", admin, "--host", host, "--apply")
            assert result.code == 3 and result.stdout == "", result
            assert len(result.err_lines) == 1 and words in result.stderr, result
        assert pg.value("SELECT count(*) FROM information_schema.role_table_grants "
                        f"WHERE grantee = '{admin}'", pgdb) == before == "0"
    finally:
        pg.drop_role(admin)


def test_host_role_logs_people_in(pg, pgdb, tmp_path, roles):
    """status, login (a session), whoami, verify, passwd (the session kept), logout: all as the
    host role; the audit log (read by the administrator role) has each, stamped by the server."""
    admin, host = roles
    kiosk = as_role(pg, pgdb, tmp_path, host, "kiosk")
    assert kiosk.run("status").code == 0
    result = login(kiosk)
    assert result.code == 0 and result.out_lines[0] == "Welcome back Alice Liddell!", result
    assert kiosk.run("whoami").code == 0
    wrong = kiosk.run("verify", "--username", USERNAME, "--password-stdin", input="nope\n")
    assert wrong.code == 1, wrong
    right = kiosk.run("verify", "--username", USERNAME, "--password-stdin", input=PASSWORD + "\n")
    assert right.code == 0, right
    result = kiosk.run("passwd", input=f"{USERNAME}\n{PASSWORD}\n{NEW_PASSWORD}\n{NEW_PASSWORD}\n")
    assert (result.code, result.stdout) == (0, f"Password changed for {USERNAME}.\n"), result
    assert kiosk.run("whoami").code == 0  # its own session stays
    assert kiosk.run("logout").stdout == "Logged out.\n"
    assert kiosk.run("whoami").code == 1
    assert login(kiosk, password=NEW_PASSWORD).code == 0
    office = as_role(pg, pgdb, tmp_path, admin, "office")
    log = office.run("log", "--json")
    assert log.code == 0, log
    kinds = [json.loads(line)["event"] for line in log.out_lines]
    assert kinds[-6:] == ["login_success", "login_failure", "login_success", "password_changed",
                          "logout", "login_success"], kinds


def test_host_role_turns_its_second_factor_on_and_off(pg, pgdb, tmp_path, roles):
    """2fa enable (a code from the app), then disable with a recovery code, as the host role."""
    _, host = roles
    kiosk = as_role(pg, pgdb, tmp_path, host, "kiosk")
    child = kiosk.spawn("2fa", "enable", "--qr", "none")
    child.expect("User name")
    child.sendline(USERNAME)
    child.expect("Password")
    child.sendline(PASSWORD)
    child.expect(r"Key: ([A-Z2-7]+)")
    secret = child.match.group(1)
    child.expect("code")
    child.sendline(pyotp.TOTP(secret).now())
    child.expect(r"\n  ([A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4})")
    code = child.match.group(1)
    child.expect(pexpect_eof())
    child.close()
    assert child.exitstatus == 0, child.logfile_read.getvalue()
    result = kiosk.run("2fa", "disable", input=f"{USERNAME}\n{PASSWORD}\n{code}\n")
    assert result.code == 0, result
    assert pg.value("SELECT count(*) FROM accounts.second_factor", pgdb) == "0"


def pexpect_eof():
    import pexpect
    return pexpect.EOF


ADMIN_COMMANDS = [
    (["user", "add", "--username", "bob", "--full-name", "Bob Builder", "--email",
      "bob@example.org", "--password-stdin"], "can we fix it yes we can\n"),
    (["user", "edit", USERNAME, "--full-name", "Someone Else"], None),
    (["user", "disable", USERNAME], None),
    (["user", "remove", USERNAME, "--yes"], None),
    (["user", "passwd", USERNAME, "--password-stdin"], "the kiosk chose this one\n"),
    (["group", "add", "staff"], None),
    (["reset", "--yes"], None),
    (["unlock", USERNAME], None),
    (["log"], None),
    (["session", "list"], None),
    (["session", "revoke", "--user", USERNAME], None),
    (["user", "export"], None),
    (["user", "export", "--format", "csv"], None),
]
# Those that only read: refused as a read.
READS = [["log"], ["session", "list"], ["user", "export"], ["user", "export", "--format", "csv"]]


@pytest.mark.parametrize("args,stdin", ADMIN_COMMANDS, ids=lambda v: " ".join(v or [])[:30])
def test_administrator_commands_are_refused(pg, pgdb, tmp_path, roles, args, stdin):
    """Each administrator command as the host role: exit 3, one sentence naming the missing
    right, nothing written (the schema's data dumped before and after)."""
    _, host = roles
    kiosk = as_role(pg, pgdb, tmp_path, host, "kiosk")
    assert login(kiosk).code == 0
    before = dump_accounts_schema(pg, pgdb)
    result = kiosk.run(*args, input=stdin)
    reason = assert_one_sentence(
        result, permission_prefix(kiosk.database, reading=args in READS), ").")
    assert reason.startswith("permission denied for "), reason
    assert dump_accounts_schema(pg, pgdb) == before


DENIED = [
    "UPDATE accounts.account SET full_name = 'x'",
    "DELETE FROM accounts.audit_event",
    "INSERT INTO accounts.audit_event (occurred_at, kind) VALUES (now(), 'reset')",
    "UPDATE accounts.activation SET state = 'Public'",
    "DELETE FROM accounts.login_throttle",
    "INSERT INTO accounts.session (token_hash, account_id, created_at, last_seen_at, expires_at,"
    " idle_seconds, idle_until) SELECT sha256('x'), id, now(), now(), now() + interval '1 day',"
    " 60, now() + interval '1 minute' FROM accounts.account",
    "SELECT token_hash FROM accounts.session",
    "SELECT count(*) FROM accounts.audit_event",
    "SELECT accounts.take_write_turn(10)",
    "SELECT * FROM accounts.login_failure_step('alice', 'alice', now(), 10, 1000, 1, 1, 1, 'x',"
    " 'x', 'x', 'x')",
    "TRUNCATE accounts.audit_event",
    "UPDATE accounts.userdb_generation SET generation = 0",
    "DELETE FROM accounts.userdb_change",
]


@pytest.mark.parametrize("sql", DENIED, ids=lambda s: s[:40])
def test_direct_sql_as_the_host_role_is_denied(pg, pgdb, roles, sql):
    _, host = roles
    before = dump_accounts_schema(pg, pgdb)
    proc = pg.psql(sql, pgdb, user=host, check=False)
    assert proc.returncode != 0 and "permission denied" in proc.stderr, proc
    assert dump_accounts_schema(pg, pgdb) == before


def test_someone_elses_session_is_out_of_reach(pg, pgdb, tmp_path, roles):
    """The host role cannot read token hashes; ending or touching a session by a hash it does
    not hold changes nothing."""
    _, host = roles
    kiosk = as_role(pg, pgdb, tmp_path, host, "kiosk")
    assert login(kiosk).code == 0
    before = dump_accounts_schema(pg, pgdb)
    guess = secrets.token_hex(32)
    for sql in (f"SELECT accounts.session_end('\\x{guess}', true, now(), 10, false, "
                "ARRAY['a','b','c'], 'h')",
                f"SELECT accounts.session_touch('\\x{guess}', now(), 10)"):
        out = pg.psql(sql, pgdb, user=host).strip()
        assert out in ("0", "f"), out
    assert dump_accounts_schema(pg, pgdb) == before
    assert kiosk.run("whoami").code == 0


def test_a_host_takes_the_servers_clock_and_policy(pg, pgdb, roles):
    """login_failure called by the host role with a time years ahead and a threshold of 1000:
    the event is stamped with the server's time, and the fifth failure locks as the standard
    policy says."""
    _, host = roles
    for attempt in range(5):
        out = pg.psql("SELECT r_outcome FROM accounts.login_failure('mallory', 'mallory', "
                      "'2099-01-01', 100, 1000, 0.001, 0.001, 0.001, 'd', 'r', 'l {until}', "
                      "'h')", pgdb, user=host).strip()
        assert out == ("locked_now" if attempt == 4 else "counted"), (attempt, out)
    late = pg.value("SELECT count(*) FROM accounts.audit_event WHERE username_key = 'mallory' "
                   "AND occurred_at > now() + interval '1 hour'", pgdb)
    assert late == "0"
    until = pg.value("SELECT locked_until - updated_at FROM accounts.login_throttle "
                    "WHERE username_key = 'mallory'", pgdb)
    assert until == "00:01:00", until


ADMIN_DENIED = [
    "DELETE FROM accounts.audit_event",
    "UPDATE accounts.audit_event SET detail = 'x'",
    "TRUNCATE accounts.audit_event",
    "DELETE FROM accounts.posix_id",
    "UPDATE accounts.posix_id SET name = 'x'",
    "DELETE FROM accounts.schema_migration",
    "INSERT INTO accounts.audit_kind (name) VALUES ('x')",
    "UPDATE accounts.userdb_generation SET generation = 0",
    "DELETE FROM accounts.userdb_change",
]


@pytest.mark.parametrize("sql", ADMIN_DENIED, ids=lambda s: s[:40])
def test_the_administrator_role_only_appends_to_the_log_and_the_ids(pg, pgdb, roles, sql):
    """The administrator role rewrites no audit event, gives back no uid or gid (a new account
    must not inherit a removed one's files) and touches no migration: denied, nothing changed
    (the pgroles run of the whole suite shows it appends to both as its commands need)."""
    admin, _ = roles
    before = dump_accounts_schema(pg, pgdb)
    proc = pg.psql(sql, pgdb, user=admin, check=False)
    assert proc.returncode != 0 and "permission denied" in proc.stderr, proc
    assert dump_accounts_schema(pg, pgdb) == before


def test_both_roles_read_the_user_records_change_counter(pg, pgdb, roles):
    """What a host's `userdb sync` reads first: the store's change counter and which accounts
    and groups changed since (written by the store's triggers alone, as the denials above
    show)."""
    for role in roles:
        for sql in ("SELECT generation FROM accounts.userdb_generation",
                    "SELECT count(*) FROM accounts.userdb_change WHERE generation > 0"):
            proc = pg.psql(sql, pgdb, user=role, check=False)
            assert proc.returncode == 0 and proc.stdout.strip().isdigit(), proc
