"""`session list` and `session revoke`: the administrator's view of the sessions and ending
them by id or by account."""

import datetime
import json

import pytest

from conftest import BOB, BOB_PASSWORD
from sessionhelp import (Client, HEADER, LIST_KEYS, NO_SUCH, assert_not_logged_in,  # noqa: F401
                         events, expire_absolutely, expire_idle, logged_in, now, sessions, stamp,
                         two)


# session list.

def list_line(row, ends, two_factor="no"):
    return (f"{row['id']:<6}  {row['username']:<16}  {row['created_at']:<24}  "
            f"{row['last_seen_at']:<24}  {ends:<24}  {two_factor:<3}  {row['host'] or '-'}")


def test_session_list_text(two):
    """session list: the exact header, then one line per live session by id: id, user name,
    started, last seen, ends = the earlier of the two ends, 2FA."""
    logged_in(two)
    bobs = Client(two, "bob")
    bobs.login(BOB, BOB_PASSWORD)
    first, second = sessions(two)
    soon = now() + datetime.timedelta(minutes=10)
    two.execute("UPDATE session SET expires_at = ? WHERE id = ?", stamp(soon), first["id"])
    first, second = sessions(two)
    result = two.run("session", "list")
    assert (result.code, result.stderr) == (0, ""), result
    assert result.out_lines == [
        HEADER,
        list_line(first, first["expires_at"]),
        list_line(second, second["idle_until"])]


def test_session_list_json(two):
    """session list --json: no header, one object per line, every key in order, from the rows."""
    logged_in(two)
    Client(two, "bob").login(BOB, BOB_PASSWORD)
    result = two.run("session", "list", "--json")
    assert (result.code, result.stderr) == (0, ""), result
    objects = [json.loads(line) for line in result.out_lines]
    for obj in objects:
        assert list(obj) == LIST_KEYS
    assert objects == [
        {"session": r["id"], "username": r["username"], "startedAt": r["created_at"],
         "lastSeenAt": r["last_seen_at"], "expiresAt": r["expires_at"],
         "idleUntil": r["idle_until"], "secondFactor": False, "host": r["host"]}
        for r in sessions(two)]


def test_session_list_shows_the_rows_second_factor(two):
    """A session that began with a second factor shows `yes` / true."""
    row = logged_in(two)
    two.execute("UPDATE session SET second_factor = ? WHERE id = ?", True, row["id"])
    result = two.run("session", "list")
    assert result.out_lines[1].endswith(f"  yes  {row['host']}"), result.out_lines
    result = two.run("session", "list", "--json")
    assert json.loads(result.stdout)["secondFactor"] is True


def test_session_list_live_only(two):
    """Expired sessions (absolute or idle) are not listed."""
    a = Client(two, "a")
    b = Client(two, "b")
    c = Client(two, "c")
    a.login()
    b.login()
    c.login(BOB, BOB_PASSWORD)
    expire_absolutely(two, a.row()["id"])
    expire_idle(two, b.row()["id"])
    result = two.run("session", "list")
    assert result.code == 0, result
    live = c.row()
    assert result.out_lines == [HEADER, list_line(live, live["idle_until"])]
    result = two.run("session", "list", "--json")
    assert [json.loads(line)["session"] for line in result.out_lines] == [live["id"]]


def test_session_list_user(two):
    """--user lists one account's sessions (any case of the name)."""
    logged_in(two)
    bobs = Client(two, "bob")
    bobs.login(BOB, BOB_PASSWORD)
    row = bobs.row()
    for name in (BOB, "BOB"):
        result = two.run("session", "list", "--user", name)
        assert (result.code, result.stderr) == (0, ""), result
        assert result.out_lines == [HEADER, list_line(row, row["idle_until"])]
        result = two.run("session", "list", "--user", name, "--json")
        assert [json.loads(line)["username"] for line in result.out_lines] == [BOB]


def test_session_list_unknown_user(two):
    """--user with an unknown name: `No account named mallory.` exit 5."""
    result = two.run("session", "list", "--user", "mallory")
    assert (result.code, result.stdout, result.stderr) == (
        NO_SUCH, "", "No account named mallory.\n")
    result = two.run("session", "list", "--user", "mallory", "--json")
    assert (result.code, result.stdout, result.stderr) == (
        NO_SUCH, "", "No account named mallory.\n")


def test_session_list_empty(two):
    """No sessions: the header only (text), nothing (--json); exit 0."""
    assert two.run("session", "list").stdout == HEADER + "\n"
    result = two.run("session", "list", "--json")
    assert (result.code, result.stdout, result.stderr) == (0, "", "")
    result = two.run("session", "list", "--user", BOB)
    assert (result.code, result.stdout, result.stderr) == (0, HEADER + "\n", "")


@pytest.mark.empty_database
def test_session_list_without_database(device):
    """No database: header only / nothing, exit 0, and no database made."""
    result = device.run("session", "list")
    assert (result.code, result.stdout, result.stderr) == (0, HEADER + "\n", "")
    result = device.run("session", "list", "--json")
    assert (result.code, result.stdout, result.stderr) == (0, "", "")
    assert not device.db.exists()


def test_session_list_on_public_device(device):
    """A Public device (after reset): header only / nothing, exit 0."""
    device.activate()
    assert device.login().code == 0
    assert device.run("reset", "--yes").code == 0
    result = device.run("session", "list")
    assert (result.code, result.stdout, result.stderr) == (0, HEADER + "\n", "")
    result = device.run("session", "list", "--json")
    assert (result.code, result.stdout, result.stderr) == (0, "", "")


# session revoke.

def test_session_revoke_id(two):
    """session revoke ID: `Session <id> of bob ended.` exit 0; the row is gone, whoami there is
    not logged in, one session_revoked event with detail `session <id>`."""
    alices = logged_in(two)
    bobs = Client(two, "bob")
    bobs.login(BOB, BOB_PASSWORD)
    row = bobs.row()
    result = two.run("session", "revoke", str(row["id"]))
    assert (result.code, result.stdout, result.stderr) == (
        0, f"Session {row['id']} of {BOB} ended.\n", "")
    assert [r["id"] for r in sessions(two)] == [alices["id"]]
    assert_not_logged_in(bobs.run("whoami"))
    assert [(e["user"], e["detail"]) for e in events(two, "session_revoked")] == [
        (BOB, f"session {row['id']}")]


def test_session_revoke_unknown_id(two):
    """An unknown session id: stderr `No session <id>.` exit 5; nothing ended, no event."""
    row = logged_in(two)
    unknown = row["id"] + 1000
    result = two.run("session", "revoke", str(unknown))
    assert (result.code, result.stdout, result.stderr) == (NO_SUCH, "", f"No session {unknown}.\n")
    assert [r["id"] for r in sessions(two)] == [row["id"]]
    assert events(two, "session_revoked") == []


def test_session_revoke_expired_id(two):
    """An expired session's id: `No session <id>.` exit 5, as if unknown."""
    row = logged_in(two)
    expire_idle(two, row["id"])
    result = two.run("session", "revoke", str(row["id"]))
    assert (result.code, result.stdout, result.stderr) == (
        NO_SUCH, "", f"No session {row['id']}.\n")
    assert events(two, "session_revoked") == []


def test_session_revoke_user(two):
    """session revoke --user bob: `Ended 2 sessions of bob.`; one event per session; alice's
    stay."""
    alices = logged_in(two)
    bobs = [Client(two, name) for name in ("b1", "b2")]
    for client in bobs:
        client.login(BOB, BOB_PASSWORD)
    ids = [client.row()["id"] for client in bobs]
    result = two.run("session", "revoke", "--user", BOB)
    assert (result.code, result.stdout, result.stderr) == (0, f"Ended 2 sessions of {BOB}.\n", "")
    assert [r["id"] for r in sessions(two)] == [alices["id"]]
    assert sorted((e["user"], e["detail"]) for e in events(two, "session_revoked")) == sorted(
        (BOB, f"session {i}") for i in ids)


def test_session_revoke_user_counts(two):
    """--user says `1 session` in the singular and `0 sessions` when there is none, exit 0."""
    Client(two, "bob").login(BOB, BOB_PASSWORD)
    result = two.run("session", "revoke", "--user", BOB)
    assert (result.code, result.stdout, result.stderr) == (0, f"Ended 1 session of {BOB}.\n", "")
    result = two.run("session", "revoke", "--user", BOB)
    assert (result.code, result.stdout, result.stderr) == (0, f"Ended 0 sessions of {BOB}.\n", "")
    assert len(events(two, "session_revoked")) == 1


def test_session_revoke_unknown_user(two):
    """--user with an unknown name: `No account named mallory.` exit 5."""
    result = two.run("session", "revoke", "--user", "mallory")
    assert (result.code, result.stdout, result.stderr) == (
        NO_SUCH, "", "No account named mallory.\n")


@pytest.mark.parametrize("args", [[], ["1", "--user", BOB]], ids=["neither", "both"])
def test_session_revoke_needs_exactly_one(two, args):
    """session revoke with neither an ID nor --user, or both: usage error, exit 2, nothing ended."""
    row = logged_in(two, BOB, BOB_PASSWORD)
    result = two.run("session", "revoke", *args)
    assert (result.code, result.stdout) == (2, ""), result
    assert result.stderr != ""
    assert [r["id"] for r in sessions(two)] == [row["id"]]
