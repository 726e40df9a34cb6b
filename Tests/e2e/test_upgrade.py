"""Schema upgrade: a database made by the v1 release (Tests/fixtures/v1.sqlite3, every
row recorded in v1.expected.json) is read, then upgraded by the first write through every
migration (v2: several accounts; v3: sessions and second factors; v4: crypt(3) hashes; v5: groups
and account expiry; v6: accounts as Linux users; v7: the host of events and sessions; v8: the
home folders given; v10: new second factor secrets waiting for their first code; v14: which
events a host's login cache delivered, none of the v1 file's), losing nothing."""

import json
import os
import pathlib
import shutil
import sqlite3
import stat

import pytest

from conftest import FULL_NAME, INVALID, PASSWORD, WRONG_PASSWORD

# SQLite-only: every test here upgrades (or checks) a file the v1 release made; a PostgreSQL
# store has its own migrations from its first release.
pytestmark = pytest.mark.sqlite_only

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"
EXPECTED = json.loads((FIXTURES / "v1.expected.json").read_text())
V1_USER = EXPECTED["user"][0]
V1_ACTIVATION = EXPECTED["activation"][0]
WELCOME = f"Welcome back {FULL_NAME}!"
LATEST_MIGRATIONS = {"v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v12", "v13",
                     "v14"}
LATEST_TABLES = {"account", "activation", "audit_event", "audit_kind", "grdb_migrations",
                 "login_throttle", "sqlite_sequence", "session", "second_factor",
                 "recovery_code", "account_group", "group_member", "posix_id",
                 "userdb_setting", "userdb_host", "ssh_key", "home_path",
                 "pending_second_factor", "userdb_generation", "userdb_change"}
LATEST_KINDS = {"activation", "login_success", "login_failure", "lockout", "unlock", "reset",
                "account_added", "account_edited", "account_disabled", "account_enabled",
                "account_removed", "password_changed", "password_set", "ownership_moved",
                "logout", "session_revoked", "second_factor_enabled", "second_factor_disabled",
                "second_factor_reset", "recovery_codes_made", "recovery_code_used",
                "accounts_imported", "accounts_exported", "group_added", "group_removed",
                "group_member_added", "group_member_removed", "pam_session_opened",
                "pam_session_closed", "ssh_key_added", "ssh_key_removed", "access_refused",
                "userdb_enabled", "userdb_disabled", "userdb_synced", "fleet_host_added",
                "fleet_host_removed", "store_upgraded"}


@pytest.fixture
def v1(device):
    """The device's database is a copy of the v1 fixture: the file 0600 in a 0700 folder."""
    folder = device.root / "v1"
    folder.mkdir()
    os.chmod(folder, 0o700)
    db = folder / "accounts.sqlite3"
    shutil.copyfile(FIXTURES / "v1.sqlite3", db)
    os.chmod(db, 0o600)
    device.db = db
    return device


def rows(device, sql, *args):
    """Rows as dicts keyed by column name."""
    db = sqlite3.connect(device.db)
    try:
        cursor = db.execute(sql, args)
        columns = [c[0] for c in cursor.description]
        return [dict(zip(columns, row)) for row in cursor]
    finally:
        db.close()


def migrations(device):
    return {r["identifier"] for r in rows(device, "SELECT identifier FROM grdb_migrations")}


def upgrade_by_login(device):
    """The owner's login with the v1 password: Home with the v1 last login, exit 0."""
    result = device.login("alice", PASSWORD)
    assert (result.code, result.stderr) == (0, ""), result
    assert result.out_lines == [WELCOME, "Last login: Mon Nov 23 12:56:46 UTC 2026"]


def test_fixture_is_v1(v1):
    """Control: the copied file is the v1 schema, with the rows the JSON records."""
    assert migrations(v1) == {"v1"}
    assert rows(v1, "SELECT * FROM user") == EXPECTED["user"]


def test_status_reads_v1_as_activated(v1):
    """status on the v1 file, before any write: Activated, with v1's change time."""
    result = v1.run("status", "--json")
    assert (result.code, result.stderr) == (0, "")
    assert json.loads(result.stdout) == {
        "state": "Activated", "database": str(v1.db), "exists": True,
        "changedAt": V1_ACTIVATION["changed_at"]}
    text = v1.run("status")
    assert (text.code, text.stdout) == (0, f"State: Activated\nDatabase: {v1.db}\n")


def test_login_upgrades_to_the_latest_schema(v1):
    """The v1 owner logs in with the v1 password (name typed in another case); afterwards the
    file holds every migration (v1 to v4) and the latest tables, not `user`; the login's
    session is the only row of `session`."""
    upgrade_by_login(v1)
    assert migrations(v1) == LATEST_MIGRATIONS
    tables = {r["name"] for r in rows(v1, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == LATEST_TABLES
    triggers = {r["name"] for r in rows(v1, "SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert triggers == {"activation_public_keeps_no_account", "account_needs_activated_device"} | {
        f"userdb_{row}" for row in ("account_added", "account_changed", "account_removed",
                                    "group_added", "group_changed", "group_removed",
                                    "member_added", "member_removed", "key_added",
                                    "key_removed")}
    assert {r["name"] for r in rows(v1, "SELECT name FROM audit_kind")} == LATEST_KINDS
    assert rows(v1, "SELECT account_id FROM session") == [{"account_id": 1}]


def test_upgrade_keeps_the_account(v1):
    """The v1 user row is the account row with id 1: every field identical but the last login
    the upgrading login wrote; must_change_password 0, disabled_at NULL, the password set when the
    v1 user was created."""
    upgrade_by_login(v1)
    (account,) = rows(v1, "SELECT * FROM account")
    assert account["must_change_password"] == 0
    assert account["disabled_at"] is None
    assert account["password_changed_at"] == V1_USER["created_at"]
    for field in ("id", "username", "username_key", "full_name", "email", "password_hash",
                  "created_at"):
        assert account[field] == V1_USER[field], field
    assert account["last_login_at"] > V1_USER["last_login_at"]
    assert account["updated_at"] >= V1_USER["updated_at"]


def test_upgrade_by_another_write_keeps_every_account_field(v1):
    """Upgraded by a write that touches no account (a stranger's failed login), the account row
    equals the v1 user row field for field."""
    result = v1.login("dave", WRONG_PASSWORD)
    assert (result.code, result.stderr) == (1, INVALID + "\n")
    assert migrations(v1) == LATEST_MIGRATIONS
    (account,) = rows(v1, "SELECT * FROM account")
    assert account == {**V1_USER, "must_change_password": 0, "disabled_at": None,
                       "password_changed_at": V1_USER["created_at"], "expires_at": None,
                       "uid": None, "home": None, "shell": None}


def test_upgrade_keeps_activation(v1):
    """The activation row keeps its state and time; owner_id is the old user_id."""
    upgrade_by_login(v1)
    assert rows(v1, "SELECT * FROM activation") == [{
        "id": 1, "state": "Activated", "owner_id": V1_ACTIVATION["user_id"],
        "changed_at": V1_ACTIVATION["changed_at"]}]


def test_upgrade_keeps_login_throttle(v1):
    """Every v1 login_throttle row is still there, unchanged."""
    upgrade_by_login(v1)
    after = rows(v1, "SELECT * FROM login_throttle")
    for row in EXPECTED["login_throttle"]:
        assert row in after, row


def test_upgrade_keeps_audit_events(v1):
    """Every v1 audit event is still there with the same id and fields, and no host and no
    offline id; the login's event comes after them, with this host's node name, and the
    sequence is not lower than v1's."""
    upgrade_by_login(v1)
    after = rows(v1, "SELECT * FROM audit_event ORDER BY id")
    assert after[:len(EXPECTED["audit_event"])] == [
        {**event, "host": None, "offline_id": None} for event in EXPECTED["audit_event"]]
    newest = after[len(EXPECTED["audit_event"]):]
    assert [(e["id"], e["kind"], e["username_key"], e["host"]) for e in newest] == [
        (18, "login_success", "alice", os.uname().nodename)]
    (v1_sequence,) = EXPECTED["sqlite_sequence"]
    (sequence,) = rows(v1, "SELECT seq FROM sqlite_sequence WHERE name = 'audit_event'")
    assert sequence["seq"] >= v1_sequence["seq"]
    assert rows(v1, "SELECT count(*) AS n FROM sqlite_sequence WHERE name LIKE '%_v2'") == [
        {"n": 0}]


def test_upgraded_file_is_consistent(v1):
    """After the upgrade PRAGMA integrity_check says ok and foreign_key_check finds nothing."""
    upgrade_by_login(v1)
    assert v1.query("PRAGMA integrity_check") == [("ok",)]
    assert v1.query("PRAGMA foreign_key_check") == []


def test_upgraded_file_keeps_its_modes(v1):
    """The upgraded file stays 0600 in its 0700 folder."""
    upgrade_by_login(v1)
    assert stat.S_IMODE(v1.db.stat().st_mode) == 0o600
    assert stat.S_IMODE(v1.db.parent.stat().st_mode) == 0o700


def test_upgraded_log_shows_v1_history(v1):
    """log --json after the upgrade shows the v1 events first, as v1 recorded them (host null,
    not offline), then the login's with this host's node name."""
    upgrade_by_login(v1)
    events = v1.events()
    assert [(e["time"], e["event"], e["user"], e["detail"], e["host"], e["offline"])
            for e in events[:17]] == [
        (e["occurred_at"], e["kind"], e["username"], e["detail"], None, False)
        for e in EXPECTED["audit_event"]]
    assert [(e["event"], e["host"], e["offline"]) for e in events[17:]] == [
        ("login_success", os.uname().nodename, False)]


def test_upgraded_account_in_user_commands(v1):
    """After the upgrade the v1 user is the owner in `user list --json`, with its v1 details."""
    upgrade_by_login(v1)
    (account,) = v1.accounts()
    assert {k: account[k] for k in ("username", "fullName", "email", "owner", "disabled",
                                    "mustChangePassword", "createdAt")} == {
        "username": "Alice", "fullName": "Alice Liddell", "email": "alice@example.org",
        "owner": True, "disabled": False, "mustChangePassword": False,
        "createdAt": V1_USER["created_at"]}


def test_upgraded_throttle_still_counts(v1):
    """carol's one v1 failure survives: unlock says it cleared a failed-login count."""
    upgrade_by_login(v1)
    result = v1.run("unlock", "carol")
    assert (result.code, result.stdout, result.stderr) == (
        0, "Unlocked carol: its failed-login count is cleared.\n", "")


def test_second_login_after_upgrade(v1):
    """The upgrade happens once: a second login works and shows the first one as last login."""
    upgrade_by_login(v1)
    result = v1.login("alice", PASSWORD)
    assert result.code == 0
    assert result.out_lines[0] == WELCOME
    assert result.out_lines[1] != "Last login: Mon Nov 23 12:56:46 UTC 2026"
    assert migrations(v1) == LATEST_MIGRATIONS


# The v1 program itself (Scripts/build-v1 builds it from the v1 release's commit; Scripts/test
# runs that first and passes its path in ACCOUNTS_V1_BIN).
V1_BIN = os.environ.get("ACCOUNTS_V1_BIN") or str(
    pathlib.Path(__file__).resolve().parents[2] / ".build" / "v1" / "debug" / "accounts")


def run_v1(device, *args, input=None):
    import subprocess
    assert os.access(V1_BIN, os.X_OK), f"the v1 program is missing: run Scripts/build-v1 ({V1_BIN})"
    return subprocess.run([V1_BIN, "--database", str(device.db), *args], input=input,
                          capture_output=True, text=True, env=device.env(), timeout=60)


def test_v1_program_refuses_an_upgraded_file(v1):
    """The v1 release refuses a file this version upgraded (a newer schema), and leaves it be."""
    upgrade_by_login(v1)
    before = v1.db.read_bytes()
    for args, stdin in ((["status"], None), (["login", "--username", "alice", "--password-stdin"],
                                             PASSWORD + "\n"), (["log"], None)):
        result = run_v1(v1, *args, input=stdin)
        assert result.returncode == 3, (args, result)
        assert result.stderr == (
            f"Cannot use the database {v1.db}: it was written by a newer version of accounts. "
            "Upgrade accounts to use it.\n"), args
    assert v1.db.read_bytes() == before
    assert v1.login("alice", PASSWORD).code == 0


def test_v1_program_still_uses_the_fixture(v1):
    """Before any upgrade the fixture is the v1 program's own file: it logs in with it."""
    result = run_v1(v1, "login", "--username", "alice", "--password-stdin",
                    input=PASSWORD + "\n")
    assert (result.returncode, result.stdout.splitlines()[0]) == (0, WELCOME)
    assert migrations(v1) == {"v1"}


def test_fixture_is_what_the_v1_program_makes(tmp_path):
    """Remaking the fixture with the v1 program gives the same tables, rows and events as the
    committed one (times, salts and hashes aside): it was made by the program, not by hand."""
    import subprocess
    import sys
    assert os.access(V1_BIN, os.X_OK), f"the v1 program is missing: run Scripts/build-v1"
    subprocess.run([sys.executable, str(FIXTURES / "make_v1_fixture.py"), V1_BIN, str(tmp_path)],
                   check=True, timeout=300)
    remade = json.loads((tmp_path / "v1.expected.json").read_text())
    volatile = {"created_at", "updated_at", "last_login_at", "changed_at", "occurred_at",
                "locked_until", "password_hash", "applied_at"}

    import re

    def timeless(value):
        return re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+Z", "TIME", value) if isinstance(value, str) \
            else value

    def stable(tables):
        return {table: [{k: timeless(v) for k, v in row.items() if k not in volatile}
                        for row in rows]
                for table, rows in tables.items()}

    assert stable(remade) == stable(EXPECTED)
