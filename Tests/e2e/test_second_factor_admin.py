"""The TOTP second factor turned off and looked at: `2fa disable`, `2fa status`, `user reset-2fa`
and the two-factor lines of `user show`, and the sessions that end when it is turned on or
off."""

import json
import re
import time

from conftest import BOB, INVALID, PASSWORD, USERNAME, WRONG_PASSWORD
from secondfactor import (INVALID_CODE, ISO_UTC, NOT_LOGGED_IN, NOT_ON, WELCOME, authorized_home,
                          enable, enabled, events, login, oath, recovered, rewind, wrong_code)


# disable, status, reset-2fa, user show.

def test_enable_and_disable_end_other_sessions(activated):
    """A session of alice on another client ends when she turns 2FA on, and again (after a new
    login with a code there) when she turns it off."""
    elsewhere = activated.root / "other-state"
    elsewhere.mkdir(mode=0o700)
    other = activated.env(XDG_STATE_HOME=str(elsewhere))
    assert activated.run("login", input=f"{USERNAME}\n{PASSWORD}\n", env=other).code == 0
    assert activated.run("whoami", env=other).code == 0
    enrollment = enabled(activated)
    whoami = activated.run("whoami", env=other)
    assert (whoami.code, whoami.stderr) == (1, NOT_LOGGED_IN + "\n")
    authorized_home(login(activated, oath(enrollment.key), env=other))
    assert activated.run("whoami", env=other).code == 0
    result = activated.run("2fa", "disable", "--username", USERNAME,
                           input=f"{PASSWORD}\n{enrollment.codes[0]}\n")
    assert result.code == 0, result
    whoami = activated.run("whoami", env=other)
    assert (whoami.code, whoami.stderr) == (1, NOT_LOGGED_IN + "\n")


def test_disable(activated):
    """`2fa disable` (password, code): the off sentence, event second_factor_disabled; login then
    asks no code; status says off."""
    enrollment = enabled(activated)
    result = activated.run("2fa", "disable", "--username", USERNAME,
                           input=f"{PASSWORD}\n{oath(enrollment.key)}\n")
    assert (result.code, result.stdout, result.stderr) == (
        0, f"Two-factor authentication is off for {USERNAME}.\n", ""), result
    assert ("second_factor_disabled", USERNAME) in [e[:2] for e in events(activated)]
    plain = activated.login()
    assert (plain.code, plain.stderr) == (0, ""), plain
    assert plain.out_lines[0] == WELCOME
    status = activated.run("2fa", "status", "--user", USERNAME, "--json")
    assert (status.code, json.loads(status.stdout)) == (0, {
        "username": USERNAME, "enabled": False, "enabledAt": None, "recoveryCodesLeft": 0})


def test_disable_with_recovery_code(activated):
    """`2fa disable` takes a recovery code at the code prompt."""
    enrollment = enabled(activated)
    result = activated.run("2fa", "disable", "--username", USERNAME,
                           input=f"{PASSWORD}\n{enrollment.codes[3]}\n")
    assert result.code == 0, result
    assert f"Two-factor authentication is off for {USERNAME}." in result.out_lines


def test_disable_wrong_code_keeps_it_on(activated):
    """`2fa disable` with a wrong code: exit 1, still on."""
    enrollment = enabled(activated)
    result = activated.run("2fa", "disable", "--username", USERNAME,
                           input=f"{PASSWORD}\n{wrong_code(enrollment.key)}\n")
    assert (result.code, result.stdout, result.stderr) == (1, "", INVALID_CODE + "\n")
    status = activated.run("2fa", "status", "--user", USERNAME, "--json")
    assert json.loads(status.stdout)["enabled"] is True


def test_disable_when_off(activated):
    """`2fa disable` without 2FA: the not-on sentence after the right password, exit 1; a wrong
    password still says only `Invalid user name or password!`."""
    result = activated.run("2fa", "disable", "--username", USERNAME, input=PASSWORD + "\n")
    assert (result.code, result.stdout, result.stderr) == (1, "", NOT_ON.format(USERNAME) + "\n")
    result = activated.run("2fa", "disable", "--username", USERNAME,
                           input=WRONG_PASSWORD + "\n")
    assert (result.code, result.stdout, result.stderr) == (1, "", INVALID + "\n")


def test_enable_again_after_disable_gives_a_new_key(activated):
    """After disable, enable works again with a new key; the old key's codes no longer log in."""
    first = enabled(activated)
    assert activated.run("2fa", "disable", "--username", USERNAME,
                         input=f"{PASSWORD}\n{oath(first.key)}\n").code == 0
    second = enable(activated)
    assert second.result.code == 0, second.result
    assert second.key != first.key
    rewind(activated)
    old = login(activated, oath(first.key))
    assert (old.code, old.stderr) == (1, INVALID_CODE + "\n")
    authorized_home(login(activated, oath(second.key, time.time() + 30)))


def test_status_through_the_session(activated):
    """`2fa status` without --user speaks of the logged-in account: text and JSON agree on when
    it was turned on; 10 codes left."""
    enrollment = enabled(activated)
    authorized_home(login(activated, oath(enrollment.key)))
    text = activated.run("2fa", "status")
    assert text.code == 0 and text.stderr == "", text
    match = re.fullmatch(rf"Two-factor authentication is on for {USERNAME} since ({ISO_UTC}); "
                         r"10 recovery codes left\.\n", text.stdout)
    assert match, text.stdout
    js = activated.run("2fa", "status", "--json")
    assert js.code == 0, js
    assert json.loads(js.stdout) == {"username": USERNAME, "enabled": True,
                                     "enabledAt": match.group(1), "recoveryCodesLeft": 10}
    assert len(js.out_lines) == 1
    stored = activated.query("SELECT enabled_at FROM second_factor")
    assert stored == [(match.group(1),)]


def test_status_with_user_flag(activated):
    """`2fa status --user NAME` needs no session: on for alice, off for bob (text and JSON)."""
    enabled(activated)
    activated.add_user()
    alice = activated.run("2fa", "status", "--user", USERNAME)
    assert alice.code == 0 and re.fullmatch(
        rf"Two-factor authentication is on for {USERNAME} since {ISO_UTC}; 10 recovery codes "
        r"left\.\n", alice.stdout), alice
    bob = activated.run("2fa", "status", "--user", BOB)
    assert (bob.code, bob.stdout, bob.stderr) == (
        0, f"Two-factor authentication is off for {BOB}.\n", "")
    bob = activated.run("2fa", "status", "--user", BOB, "--json")
    assert (bob.code, json.loads(bob.stdout)) == (0, {
        "username": BOB, "enabled": False, "enabledAt": None, "recoveryCodesLeft": 0})


def test_status_not_logged_in(activated):
    """`2fa status` without a session: `Not logged in.` exit 1; unknown --user: exit 5."""
    enabled(activated)
    result = activated.run("2fa", "status")
    assert (result.code, result.stdout, result.stderr) == (1, "", NOT_LOGGED_IN + "\n")
    result = activated.run("2fa", "status", "--user", "nobody")
    assert (result.code, result.stdout) == (5, "")
    assert result.stderr == "No account named nobody.\n"


def test_status_after_no_session_login(activated):
    """A `login --no-session` with the code starts no session: status still `Not logged in.`"""
    enrollment = enabled(activated)
    authorized_home(login(activated, oath(enrollment.key), args=("--no-session",)))
    result = activated.run("2fa", "status")
    assert (result.code, result.stderr) == (1, NOT_LOGGED_IN + "\n")


def test_reset_2fa(activated):
    """`user reset-2fa alice`: the sentence, exit 0, event second_factor_reset, her session ends,
    and login needs no code."""
    enrollment = enabled(activated)
    authorized_home(login(activated, oath(enrollment.key)))
    assert activated.run("whoami").code == 0
    result = activated.run("user", "reset-2fa", USERNAME)
    assert (result.code, result.stdout, result.stderr) == (
        0, f"Two-factor authentication turned off for {USERNAME}; their sessions ended.\n", "")
    assert ("second_factor_reset", USERNAME) in [e[:2] for e in events(activated)]
    whoami = activated.run("whoami")
    assert (whoami.code, whoami.stderr) == (1, NOT_LOGGED_IN + "\n")
    plain = activated.login()
    assert (plain.code, plain.stderr) == (0, ""), plain
    assert plain.out_lines[0] == WELCOME


def test_reset_2fa_refusals(activated):
    """`user reset-2fa` for an account without 2FA: the not-on sentence, exit 1; unknown: exit 5."""
    activated.add_user()
    result = activated.run("user", "reset-2fa", BOB)
    assert (result.code, result.stdout, result.stderr) == (1, "", NOT_ON.format(BOB) + "\n")
    result = activated.run("user", "reset-2fa", "nobody")
    assert (result.code, result.stdout, result.stderr) == (5, "", "No account named nobody.\n")


def test_reset_2fa_event_in_log_json(activated):
    """The reset's event is in `accounts log --json` with the account's name."""
    enabled(activated)
    assert activated.run("user", "reset-2fa", USERNAME).code == 0
    logged = [json.loads(line) for line in activated.run("log", "--json").out_lines]
    resets = [e for e in logged if e["event"] == "second_factor_reset"]
    assert len(resets) == 1 and resets[0]["user"] == USERNAME, logged


def test_user_show_two_factor_lines(activated):
    """`user show` ends with `Two-factor: on since <ts> (N recovery codes left)` and
    `Sessions: N`; an account without 2FA shows `Two-factor: off`."""
    enrollment = enabled(activated)
    activated.add_user()
    recovered(login(activated, enrollment.codes[0]), 9)
    alice = activated.run("user", "show", USERNAME)
    assert alice.code == 0, alice
    enabled_at = activated.query("SELECT enabled_at FROM second_factor")[0][0]
    assert alice.out_lines[-2:] == [
        f"Two-factor: on since {enabled_at} (9 recovery codes left)", "Sessions: 1"]
    assert re.fullmatch(ISO_UTC, enabled_at)
    bob = activated.run("user", "show", BOB)
    assert bob.out_lines[-2:] == ["Two-factor: off", "Sessions: 0"]
    assert len(bob.out_lines) == 17
