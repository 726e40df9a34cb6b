"""After every writing command the database file alone holds every change: copying just
`accounts.sqlite3` (as a backup would) loses nothing, whatever read came before."""

import shutil
import sqlite3

import pytest

from conftest import PASSWORD, form

# SQLite-only: the subject is SQLite's write-ahead log (the main file alone holds every change
# after a checkpoint); a PostgreSQL store has no file of its own to copy.
pytestmark = pytest.mark.sqlite_only


def events_in_copy(device, tmp_path):
    copy = tmp_path / "backup.sqlite3"
    shutil.copyfile(device.db, copy)  # the main file only, no -wal
    with sqlite3.connect(copy) as db:
        return [row[0] for row in db.execute("SELECT kind FROM audit_event ORDER BY id")]


def wal_is_empty(device):
    wal = device.db.parent / (device.db.name + "-wal")
    return not wal.exists() or wal.stat().st_size == 0


def test_single_file_holds_every_change(device, tmp_path):
    """activate, status, login, logout, bare flow, reset: after each write the copy is
    complete."""
    assert device.run("activate", input=form()).code == 0
    assert wal_is_empty(device)
    assert device.run("status").code == 0
    assert device.run("login", "--username", "alice", "--password-stdin",
                      input=PASSWORD + "\n").code == 0
    assert wal_is_empty(device)
    assert events_in_copy(device, tmp_path) == ["activation", "login_success"]
    assert device.run("logout").code == 0
    assert wal_is_empty(device)
    assert device.run(input=f"alice\n{PASSWORD}\n").code == 0
    assert wal_is_empty(device)
    assert device.run("reset", "--yes").code == 0
    assert wal_is_empty(device)
    assert events_in_copy(device, tmp_path) == [
        "activation", "login_success", "logout", "login_success", "reset"]


def test_account_commands_leave_the_file_complete(activated, tmp_path):
    """The issue-10 writing commands (user add/edit/disable/enable/passwd/remove, passwd, verify)
    also leave every change in the main file."""
    steps = [
        (("user", "add", "--username", "bob", "--full-name", "Bob Builder", "--email",
          "bob@example.org", "--password-stdin"), "can we fix it yes we can\n", "account_added"),
        (("user", "edit", "bob", "--full-name", "Robert Builder"), None, "account_edited"),
        (("user", "disable", "bob"), None, "account_disabled"),
        (("user", "enable", "bob"), None, "account_enabled"),
        (("user", "passwd", "bob", "--password-stdin"), "tangerine submarine orchestra 93\n",
         "password_set"),
        (("passwd",), f"alice\n{PASSWORD}\nmarble otter jigsaw midnight\n"
                      "marble otter jigsaw midnight\n", "password_changed"),
        (("verify", "--username", "bob", "--password-stdin"),
         "tangerine submarine orchestra 93\n", "login_success"),
        (("user", "remove", "bob", "--yes"), None, "account_removed"),
    ]
    for args, stdin, kind in steps:
        result = activated.run(*args, input=stdin)
        assert result.code == 0, (args, result)
        assert wal_is_empty(activated), args
        assert events_in_copy(activated, tmp_path)[-1] == kind, args


def test_session_commands_leave_the_file_complete(device, tmp_path):
    """Sessions: whoami recording a use, the bare flow resuming a session, session revoke and
    logout --all leave every change in the main file (their reads are closed before they write)."""
    assert device.run("activate", input=form()).code == 0
    assert device.run("login", "--username", "alice", "--password-stdin",
                      input=PASSWORD + "\n").code == 0
    stale = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-2 minutes')"
    for command in (["whoami"], []):
        device.execute(f"UPDATE session SET created_at = {stale}, last_seen_at = {stale}")
        assert device.run(*command).code == 0
        assert wal_is_empty(device), command
        assert device.query("SELECT last_seen_at > " + stale + " FROM session") == [(1,)]
    assert device.run("logout", "--all").code == 0
    assert wal_is_empty(device)
    assert events_in_copy(device, tmp_path)[-1] == "logout"
