"""Logins from the login cache while the server is away (its socket folder empty; a listener
that never answers): the same questions and answers as online, a wrong password counted and
five locking, a second factor's code still asked and a replay refused; a person never seen
here, or seen longer ago than --days, is told the server cannot be reached (exit 3), never
that the password is wrong. After a failure to connect the next 30 seconds do not try again.

Oracles: the exact lines and exit codes of the online login, sqlite3 reading the cache (its
queued events, its entry), a TCP listener's backlog (whether a connection was tried)."""

import datetime
import sqlite3
import time

import pytest

import secondfactor
from totp import code_for_step
from cachehelp import CacheHost, server_away
from conftest import BOB, FULL_NAME, PASSWORD, USERNAME, WRONG_PASSWORD
from pamhelp import pam_auth, pam_env
from pgcluster import silent_listener

pytestmark = pytest.mark.postgresql_only

WELCOME = f"Welcome back {FULL_NAME}!"
INVALID = "Invalid user name or password!"


@pytest.fixture
def host(activated):
    """A host whose cache holds alice (one online login)."""
    host = CacheHost(activated)
    host.enable()
    assert host.login().code == 0
    return host


def test_a_cached_person_logs_in_while_the_server_is_away(host):
    result = host.offline_login()
    assert (result.code, result.stderr) == (0, ""), result
    assert result.out_lines[0] == WELCOME, result
    assert host.queued() == [("login_success", USERNAME, "password")]


def test_verify_and_pam_auth_log_in_from_the_cache(host):
    result = host.run("verify", "--username", USERNAME, "--password-stdin", input=PASSWORD,
                      env=host.away())
    assert (result.code, result.stdout, result.stderr) == (0, "", ""), result
    pam = pam_auth(host.device, args=["pam-auth", "--database", host.away_uri, "--login-cache",
                                      str(host.path), "--time-limit", "300"], env=pam_env())
    assert (pam.code, pam.stdout, pam.stderr) == (0, "", ""), pam
    assert [event[0] for event in host.queued()] == ["login_success", "login_success"]


def test_a_wrong_password_fails_and_five_lock(host):
    for _ in range(4):
        wrong = host.offline_login(password=WRONG_PASSWORD)
        assert (wrong.code, wrong.stdout, wrong.err_lines) == (1, "", [INVALID]), wrong
    fifth = host.offline_login(password=WRONG_PASSWORD)
    assert fifth.code == 4 and fifth.err_lines[0] == INVALID, fifth
    assert fifth.err_lines[1].startswith("Too many failed attempts! Try again in "), fifth
    right = host.offline_login()
    assert right.code == 4 and right.err_lines[0].startswith("Too many failed attempts!"), right
    kinds = [event[0] for event in host.queued()]
    assert kinds == ["login_failure"] * 5 + ["lockout", "login_failure"], kinds
    assert host.queued()[-1][2] == "locked"


def test_a_stranger_is_told_the_server_is_away(host):
    host.device.add_user()
    result = host.offline_login(BOB, "can we fix it yes we can")
    assert (result.code, result.stdout) == (3, ""), result
    assert result.err_lines == [server_away(host.away_uri)], result
    assert host.queued() == []


def test_an_entry_older_than_the_days_is_not_used(host):
    with sqlite3.connect(host.path) as db:
        old = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=7, hours=1)
        db.execute("UPDATE cached_login SET refreshed_at = ?",
                   (old.strftime("%Y-%m-%dT%H:%M:%S.000Z"),))
    result = host.offline_login()
    assert (result.code, result.stdout) == (3, ""), result
    assert result.err_lines == [server_away(host.away_uri)], result
    host.enable("--days", "8")
    assert host.offline_login().code == 0


def test_a_second_factor_is_still_asked_and_a_replay_refused(activated):
    host = CacheHost(activated)
    host.enable()
    enrollment = secondfactor.enabled(activated)
    assert host.login(code=secondfactor.oath(enrollment.key)).code == 0
    # The step used online: a code of this step is a replay until the entry's step goes back.
    with sqlite3.connect(host.path) as db:
        db.execute("UPDATE cached_login SET last_step = last_step - 10")
    wrong = host.offline_login(code=secondfactor.wrong_code(enrollment.key))
    assert (wrong.code, wrong.err_lines) == (1, [secondfactor.INVALID_CODE]), wrong

    def attempt(step):
        code = code_for_step(enrollment.key, step)
        return host.offline_login(code=code), host.offline_login(code=code)
    first, again = secondfactor.steady(attempt)
    assert first.code == 0 and first.out_lines[0] == WELCOME, first
    assert secondfactor.AUTHORIZED in first.err_lines, first
    assert (again.code, again.err_lines) == (1, [secondfactor.REPLAY]), again
    recovery = host.offline_login(code=enrollment.codes[0])
    assert recovery.code == 0, recovery
    reused = host.offline_login(code=enrollment.codes[0])
    assert (reused.code, reused.err_lines) == (1, [secondfactor.INVALID_CODE]), reused


def test_after_a_failure_to_connect_the_server_is_not_tried_for_30_seconds(host):
    assert host.offline_login().code == 0
    listener = silent_listener()
    try:
        port = listener.getsockname()[1]
        uri = f"postgresql://postgres@127.0.0.1:{port}/accounts?sslmode=disable"
        result = host.login(env=host.env(ACCOUNTS_DATABASE=uri))
        assert result.code == 0 and result.out_lines[0] == WELCOME, result
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()
    finally:
        listener.close()


def test_a_server_that_never_answers_is_given_up_after_3_seconds(host):
    listener = silent_listener()
    try:
        port = listener.getsockname()[1]
        uri = f"postgresql://postgres@127.0.0.1:{port}/accounts?sslmode=disable"
        start = time.monotonic()
        result = host.login(env=host.env(ACCOUNTS_DATABASE=uri))
        seconds = time.monotonic() - start
        assert result.code == 0 and result.out_lines[0] == WELCOME, result
        assert seconds >= 2.5, seconds
        listener.setblocking(False)
        connection, _ = listener.accept()
        connection.close()
    finally:
        listener.close()



def test_a_password_that_must_change_needs_the_server_to_log_in(host):
    """An entry written by a `verify` of an account that must choose a new password: `verify`
    still passes offline, `login` (which would ask for the new one) is told the server is away."""
    host.device.add_user()
    new = "a password bob must change soon"
    assert host.run("user", "passwd", BOB, "--must-change", "--password-stdin",
                    input=new + "\n").code == 0
    assert host.run("verify", "--username", BOB, "--password-stdin", input=new).code == 0
    assert host.entry(BOB)["must_change"] == 1
    refused = host.offline_login(BOB, new)
    assert (refused.code, refused.err_lines) == (3, [server_away(host.away_uri)]), refused
    verified = host.run("verify", "--username", BOB, "--password-stdin", input=new,
                        env=host.away())
    assert (verified.code, verified.stderr) == (0, ""), verified
