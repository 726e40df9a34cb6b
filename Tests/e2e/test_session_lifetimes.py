"""How long a session lasts: bare `accounts` resuming a live session, use moving the idle end,
expiry (absolute and idle) without waiting, and the lifetime and idle settings."""

import datetime
import re

import pytest

from conftest import PASSWORD, USERNAME, WRONG_PASSWORD, finish, screen
from sessionhelp import (Client, WELCOME, age, assert_asks_to_log_in, assert_home_without_prompt,
                         assert_not_logged_in, bare, close_to, expire_absolutely, expire_idle,
                         logged_in, long_time, now, parse, read_session_file, sessions, token_hash,
                         whoami)


# Bare `accounts`.

def test_bare_with_live_session_prints_home_without_prompt(activated):
    """With a live session, bare `accounts` through a pipe with empty stdin prints Home (the
    session's start as Last login), asks nothing, exit 0."""
    row = logged_in(activated)
    assert_home_without_prompt(bare(activated), row)
    assert_home_without_prompt(bare(activated), row)


def test_bare_with_live_session_at_terminal(activated):
    """At a terminal too, a live session goes straight to Home: no `User name: ` prompt."""
    row = logged_in(activated)
    child = activated.spawn()
    assert finish(child) == 0
    shown = screen(child)
    assert "User name" not in shown and "Password" not in shown
    lines = shown.splitlines()
    assert lines[0] == WELCOME
    assert re.fullmatch("Last login: " + long_time(parse(row["created_at"])), lines[1]), lines
    assert len(lines) == 2, lines


def test_bare_with_live_session_shows_failures_since(activated):
    """Home from a session shows the failures line as usual: a failed login (elsewhere) after
    the session began is counted."""
    row = logged_in(activated)
    elsewhere = Client(activated, "elsewhere")
    assert activated.login(USERNAME, WRONG_PASSWORD, env=elsewhere.env()).code == 1
    result = bare(activated)
    assert (result.code, result.stderr) == (0, ""), result
    assert result.out_lines[0] == WELCOME
    assert re.fullmatch("Last login: " + long_time(parse(row["created_at"])),
                        result.out_lines[1])
    assert result.out_lines[2:] == ["1 failed attempt since your last login"]


def test_bare_without_session_asks_to_log_in(activated):
    """Without a session file bare `accounts` is the Login of today."""
    assert_asks_to_log_in(bare(activated))
    child = activated.spawn()
    child.expect_exact("User name: ")
    child.sendeof()
    assert finish(child) == 1


def test_bare_login_starts_a_session(activated):
    """A successful login in the bare flow writes a session file; the next bare run asks nothing."""
    result = bare(activated, f"{USERNAME}\n{PASSWORD}\n")
    assert (result.code, result.stdout) == (0, WELCOME + "\n"), result
    _, token = read_session_file(activated.session_file)
    (row,) = sessions(activated)
    assert row["token_hash"] == token_hash(token)
    assert_home_without_prompt(bare(activated), row)


def test_use_within_a_minute_does_not_write_last_seen(activated):
    """Last use is written at most once a minute: using a fresh session leaves its row as it was."""
    row = logged_in(activated)
    assert bare(activated).code == 0
    assert whoami(activated).code == 0
    assert sessions(activated) == [row]


def test_use_after_a_minute_moves_the_idle_end(activated):
    """A session last used two minutes ago: using it writes last_seen_at (now) and moves
    idle_until to last_seen_at + idle_seconds; the absolute end does not move."""
    row = logged_in(activated)
    t = now()
    age(activated, row["id"], t - datetime.timedelta(minutes=2),
        t - datetime.timedelta(minutes=2), parse(row["expires_at"]),
        t + datetime.timedelta(minutes=58))
    before = now() - datetime.timedelta(seconds=1)
    assert bare(activated).code == 0
    (used,) = sessions(activated)
    seen = parse(used["last_seen_at"])
    assert before <= seen <= now() + datetime.timedelta(seconds=1)
    assert close_to(parse(used["idle_until"]) - seen, 3600)
    assert used["expires_at"] == row["expires_at"]


# Expiry, without waiting.

@pytest.mark.parametrize("expire", [expire_absolutely, expire_idle], ids=["absolute", "idle"])
def test_expired_session_is_not_logged_in(activated, expire):
    """A session past its absolute or its idle end: whoami says `Not logged in.` exit 1."""
    row = logged_in(activated)
    expire(activated, row["id"])
    assert_not_logged_in(whoami(activated))
    result = whoami(activated, "--json")
    assert (result.code, result.stdout) == (1, '{"loggedIn":false}\n'), result


@pytest.mark.parametrize("expire", [expire_absolutely, expire_idle], ids=["absolute", "idle"])
def test_expired_session_bare_asks_to_log_in_and_removes_the_file(activated, expire):
    """Bare `accounts` with an expired session: the Login of today, and the stale file is gone."""
    row = logged_in(activated)
    expire(activated, row["id"])
    assert_asks_to_log_in(bare(activated))
    assert not activated.session_file.exists()


@pytest.mark.parametrize("expire", [expire_absolutely, expire_idle], ids=["absolute", "idle"])
def test_expired_session_bare_login_starts_a_new_one(activated, expire):
    """Bare `accounts` with an expired session and a right login: Home, a new token, and the
    expired row is gone."""
    row = logged_in(activated)
    _, old = read_session_file(activated.session_file)
    expire(activated, row["id"])
    result = bare(activated, f"{USERNAME}\n{PASSWORD}\n")
    assert (result.code, result.out_lines[0]) == (0, WELCOME), result
    _, new = read_session_file(activated.session_file)
    assert new != old
    assert [r["token_hash"] for r in sessions(activated)] == [token_hash(new)]


def test_unknown_token_bare_removes_the_file(activated):
    """A session file whose token has no row (revoked): bare `accounts` logs in as today and
    removes the file."""
    row = logged_in(activated)
    assert activated.run("session", "revoke", str(row["id"])).code == 0
    assert activated.session_file.exists()
    assert_asks_to_log_in(bare(activated))
    assert not activated.session_file.exists()


# Settings.

@pytest.mark.parametrize("value,seconds", [
    ("300", 300), ("5m", 300), ("900", 900), ("15m", 900), ("2h", 7200), ("86400", 86400),
    ("24h", 86400), ("1440m", 86400)])
def test_lifetime_setting(activated, value, seconds):
    """ACCOUNTS_SESSION_LIFETIME sets the stored absolute end: expires_at - created_at."""
    assert activated.login(env=activated.env(ACCOUNTS_SESSION_LIFETIME=value)).code == 0
    (row,) = sessions(activated)
    assert close_to(parse(row["expires_at"]) - parse(row["created_at"]), seconds)
    assert row["idle_seconds"] == 3600


@pytest.mark.parametrize("value,seconds", [
    ("300", 300), ("5m", 300), ("600", 600), ("10m", 600), ("3600", 3600), ("60m", 3600),
    ("1h", 3600)])
def test_idle_setting(activated, value, seconds):
    """ACCOUNTS_SESSION_IDLE sets idle_seconds and idle_until = last_seen_at + that."""
    assert activated.login(env=activated.env(ACCOUNTS_SESSION_IDLE=value)).code == 0
    (row,) = sessions(activated)
    assert row["idle_seconds"] == seconds
    assert close_to(parse(row["idle_until"]) - parse(row["last_seen_at"]), seconds)
    assert close_to(parse(row["expires_at"]) - parse(row["created_at"]), 86400)


def test_setting_applies_when_the_session_starts(activated):
    """The stored values stay: a later command with another setting does not change the row."""
    assert activated.login(env=activated.env(ACCOUNTS_SESSION_IDLE="10m",
                                              ACCOUNTS_SESSION_LIFETIME="1h")).code == 0
    (row,) = sessions(activated)
    assert whoami(activated, env=activated.env(ACCOUNTS_SESSION_IDLE="20m",
                                               ACCOUNTS_SESSION_LIFETIME="2h")).code == 0
    assert bare(activated, env=activated.env(ACCOUNTS_SESSION_IDLE="20m")).code == 0
    assert sessions(activated) == [row]
    assert row["idle_seconds"] == 600


@pytest.mark.parametrize("name,value", [
    ("ACCOUNTS_SESSION_LIFETIME", "299"), ("ACCOUNTS_SESSION_LIFETIME", "4m"),
    ("ACCOUNTS_SESSION_LIFETIME", "86401"), ("ACCOUNTS_SESSION_LIFETIME", "25h"),
    ("ACCOUNTS_SESSION_LIFETIME", "0"), ("ACCOUNTS_SESSION_LIFETIME", "-1h"),
    ("ACCOUNTS_SESSION_LIFETIME", "1d"), ("ACCOUNTS_SESSION_LIFETIME", "abc"),
    ("ACCOUNTS_SESSION_LIFETIME", "1.5h"),
    ("ACCOUNTS_SESSION_IDLE", "299"), ("ACCOUNTS_SESSION_IDLE", "4m"),
    ("ACCOUNTS_SESSION_IDLE", "3601"), ("ACCOUNTS_SESSION_IDLE", "61m"),
    ("ACCOUNTS_SESSION_IDLE", "2h"), ("ACCOUNTS_SESSION_IDLE", "0"),
    ("ACCOUNTS_SESSION_IDLE", "ten minutes"), ("ACCOUNTS_SESSION_IDLE", "10x")])
def test_unusable_session_setting(activated, name, value):
    """A session setting out of range or not a duration: exit 2, one sentence naming the setting
    and the value; no session started."""
    result = activated.login(env=activated.env(**{name: value}))
    assert (result.code, result.stdout) == (2, ""), result
    assert len(result.err_lines) == 1, result
    assert result.stderr.startswith(f"{name} must be "), result
    assert result.stderr.endswith(f'not "{value}".\n'), result
    assert not activated.session_file.exists()
    assert sessions(activated) == []
