"""whoami and logout: who the session belongs to (text and JSON), logging out of one session
or of every session of the account."""

import json
import re

import pytest

from conftest import BOB, BOB_FULL_NAME, BOB_PASSWORD, FULL_NAME, USERNAME
from sessionhelp import (Client, LOGGED_OUT, WHOAMI_KEYS, assert_asks_to_log_in,  # noqa: F401
                         assert_not_logged_in, bare, durations, events, expire_absolutely,
                         expire_idle, logged_in, long_time, parse, sessions, two, whoami)


# whoami.

def test_whoami_text(activated):
    """whoami: `Logged in as alice (Alice Liddell).` and when the session ends, exit 0."""
    logged_in(activated)
    result = whoami(activated)
    (row,) = sessions(activated)
    assert (result.code, result.stderr) == (0, ""), result
    lines = result.out_lines
    assert len(lines) == 2, lines
    assert lines[0] == f"Logged in as {USERNAME} ({FULL_NAME})."
    match = re.fullmatch(
        r"The session ends at (" + long_time(parse(row["expires_at"]))
        + r"), or sooner after (.+) without use\.", lines[1])
    assert match, lines[1]
    assert match.group(2) in durations(3600), match.group(2)


def test_whoami_text_names_the_idle_setting(activated):
    """With ACCOUNTS_SESSION_IDLE=15m, whoami says `or sooner after 15 minutes without use.`"""
    env = activated.env(ACCOUNTS_SESSION_IDLE="15m")
    assert activated.login(env=env).code == 0
    result = whoami(activated)
    assert result.code == 0, result
    assert result.out_lines[1].endswith(", or sooner after 15 minutes without use."), result


def test_whoami_json(two):
    """whoami --json: one line, every key in order, values equal to the session row."""
    logged_in(two, BOB, BOB_PASSWORD)
    result = whoami(two, "--json")
    (row,) = sessions(two)
    assert (result.code, result.stderr) == (0, ""), result
    assert len(result.out_lines) == 1
    obj = json.loads(result.stdout)
    assert list(obj) == WHOAMI_KEYS
    assert obj == {
        "loggedIn": True, "username": BOB, "fullName": BOB_FULL_NAME, "session": row["id"],
        "startedAt": row["created_at"], "lastSeenAt": row["last_seen_at"],
        "expiresAt": row["expires_at"], "idleUntil": row["idle_until"], "secondFactor": False}
    assert type(obj["session"]) is int


def test_whoami_follows_an_edited_account(two):
    """Editing the account (new user name and full name) keeps its session; whoami shows the
    account as it is now."""
    row = logged_in(two, BOB, BOB_PASSWORD)
    result = two.run("user", "edit", BOB, "--username", "robert", "--full-name", "Robert Builder")
    assert result.code == 0, result
    assert whoami(two).out_lines[0] == "Logged in as robert (Robert Builder)."
    assert json.loads(whoami(two, "--json").stdout)["session"] == row["id"]


def test_whoami_not_logged_in(activated):
    """No session file: stderr `Not logged in.` exit 1; --json: `{"loggedIn":false}` exit 1."""
    assert_not_logged_in(whoami(activated))
    result = whoami(activated, "--json")
    assert (result.code, result.stdout) == (1, '{"loggedIn":false}\n'), result


@pytest.mark.empty_database
def test_whoami_without_database(device):
    """No database at all: not logged in, and no database is made."""
    assert_not_logged_in(whoami(device))
    result = whoami(device, "--json")
    assert (result.code, result.stdout) == (1, '{"loggedIn":false}\n'), result
    assert_not_logged_in(device.run("logout"))
    assert_not_logged_in(device.run("logout", "--all"))
    assert not device.db.exists()


@pytest.mark.empty_database
def test_whoami_with_a_session_file_but_no_database(device):
    """A session file naming a database that is not there: not logged in, nothing made."""
    device.session_file.parent.mkdir(mode=0o700)
    device.session_file.write_text(
        f"accounts-session 1\ndatabase {device.db}\ntoken {'ab' * 32}\n")
    device.session_file.chmod(0o600)
    assert_not_logged_in(whoami(device))
    assert not device.db.exists()


def test_whoami_unknown_token(activated):
    """A session file for this database whose token has no row: not logged in, exit 1."""
    logged_in(activated)
    activated.session_file.write_text(
        f"accounts-session 1\ndatabase {activated.db}\ntoken {'cd' * 32}\n")
    assert_not_logged_in(whoami(activated))
    result = whoami(activated, "--json")
    assert (result.code, result.stdout) == (1, '{"loggedIn":false}\n'), result


# logout.

def test_logout_ends_the_session(activated):
    """logout: `Logged out.` exit 0; file and row removed; event logout; next bare run logs in."""
    logged_in(activated)
    result = activated.run("logout")
    assert (result.code, result.stdout, result.stderr) == (0, LOGGED_OUT, ""), result
    assert not activated.session_file.exists()
    assert sessions(activated) == []
    text = activated.run("log", "--event", "logout")
    assert text.code == 0, text
    assert len(text.out_lines) == 1
    assert re.match(r"^\S+  logout\s+alice", text.out_lines[0]), text.out_lines
    assert [e["user"] for e in events(activated, "logout")] == [USERNAME]
    assert_asks_to_log_in(bare(activated))
    assert_not_logged_in(whoami(activated))


def test_logout_when_not_logged_in(activated):
    """logout without a session file: stderr `Not logged in.` exit 1, no event."""
    assert_not_logged_in(activated.run("logout"))
    assert events(activated, "logout") == []


def test_logout_of_an_expired_session(activated):
    """logout of a session that already expired still says `Logged out.`, exit 0, and removes
    the file and the row."""
    row = logged_in(activated)
    expire_absolutely(activated, row["id"])
    result = activated.run("logout")
    assert (result.code, result.stdout, result.stderr) == (0, LOGGED_OUT, ""), result
    assert not activated.session_file.exists()
    assert sessions(activated) == []


def test_logout_all_ends_every_session_of_the_account(two):
    """logout --all from one of three clients ends all three of alice's sessions (`Logged out:
    3 sessions ended.`) and not bob's."""
    clients = [Client(two, name) for name in ("a", "b", "c")]
    for client in clients:
        client.login()
    bobs = Client(two, "bob")
    bobs.login(BOB, BOB_PASSWORD)
    assert len(sessions(two, USERNAME)) == 3
    result = clients[0].run("logout", "--all")
    assert (result.code, result.stdout, result.stderr) == (
        0, "Logged out: 3 sessions ended.\n", ""), result
    assert sessions(two, USERNAME) == []
    assert not clients[0].session_file.exists()
    for client in clients[1:]:
        assert_not_logged_in(client.run("whoami"))
    assert bobs.row() is not None
    assert bobs.run("whoami").out_lines[0] == f"Logged in as {BOB} ({BOB_FULL_NAME})."


def test_logout_all_with_one_session_is_singular(activated):
    """logout --all with only its own session: `Logged out: 1 session ended.`"""
    logged_in(activated)
    result = activated.run("logout", "--all")
    assert (result.code, result.stdout, result.stderr) == (
        0, "Logged out: 1 session ended.\n", ""), result
    assert sessions(activated) == []


def test_logout_all_needs_a_live_session(activated):
    """logout --all with an expired session, or none: `Not logged in.` exit 1, the other
    sessions of the account stay."""
    other = Client(activated, "other")
    other.login()
    assert_not_logged_in(activated.run("logout", "--all"))
    row = logged_in(activated)
    expire_idle(activated, row["id"])
    assert_not_logged_in(activated.run("logout", "--all"))
    assert other.row() is not None
