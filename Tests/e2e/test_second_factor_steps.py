"""`2fa enable` in two steps for scripts, through pipes: `--begin` checks the password and keeps a
new secret pending (its key printed, no QR code on a pipe), `--confirm` takes the password and a
code of it (oathtool, pyotp) and turns the second factor on as the one-sitting flow does. A wrong
code keeps the pending secret, an expired one (its expiry moved into the past in the store) is
refused and deleted, a pending secret is no second factor, a second `--begin` replaces the first,
and the administrator's reset, removal and `accounts reset` leave none behind."""

import stat
from datetime import datetime, timedelta, timezone

import pyotp
import pytest

from conftest import BOB, BOB_PASSWORD, INVALID, PASSWORD, USERNAME, WRONG_PASSWORD
from stores import store_query
from secondfactor import (ALREADY_ON, EXPIRED, INVALID_CODE, NO_PENDING, ON, PENDING_KEPT,
                          PENDING_STATUS, RECOVERY_HEADER, RECOVERY_LINE, REPLAY, SCAN, WELCOME,
                          authorized_home, begin, confirm, enabled, events, expected_uri,
                          failures, login, oath, pending_rows, rewind, wrong_code)

PAST = "2000-01-01T00:00:00.000Z"


def begun(device, username=USERNAME, password=PASSWORD) -> str:
    """`--begin` that succeeded; returns the key."""
    result, key = begin(device, username=username, password=password)
    assert (result.code, result.stderr) == (0, ""), result
    return key


def test_begin_prints_the_uri_the_key_and_the_expiry_and_keeps_one_pending_row(activated):
    """Through a pipe: exit 0, nothing on stderr, stdout is URI, Key and the pending sentence
    (no scan sentence, no QR code); one pending row, expiring 10 minutes on, and no second
    factor."""
    before = datetime.now(timezone.utc)
    result, key = begin(activated)
    assert (result.code, result.stderr) == (0, ""), result
    lines = result.out_lines
    assert lines[:2] == [f"URI: {expected_uri(activated, key)}", f"Key: {key}"], result
    match = PENDING_KEPT.match(lines[2])
    assert match and match.group(1) == USERNAME and len(lines) == 3, result
    assert SCAN not in result.stdout
    ((key_id, expires_at),) = pending_rows(activated)
    # PostgreSQL: no key file's id, the server encrypts the secret itself.
    assert expires_at == match.group(2)
    assert key_id is None if activated.postgresql else len(key_id) == 16
    until = datetime.fromisoformat(expires_at.replace("Z", "+00:00"))
    assert before + timedelta(minutes=9) < until <= datetime.now(timezone.utc) + timedelta(
        minutes=10), until
    assert activated.query("SELECT count(*) FROM second_factor") == [(0,)]
    status = activated.run("2fa", "status", "--user", USERNAME)
    assert (status.code, status.stderr) == (0, ""), status
    assert status.out_lines == [f"Two-factor authentication is off for {USERNAME}.",
                                PENDING_STATUS.format(USERNAME, expires_at)], status


def test_begin_then_confirm_turns_it_on_and_login_asks_the_code(activated):
    """`--confirm` with the oathtool code of the printed key: exit 0, the on sentence and ten
    recovery codes, `second_factor_enabled` logged, the pending row gone; the same code cannot
    log in again (its step was recorded); a later login asks a code and takes a fresh one."""
    key = begun(activated)
    code = oath(key)
    result = confirm(activated, code)
    assert (result.code, result.stderr) == (0, ""), result
    lines = result.out_lines
    assert lines[:2] == [ON.format(USERNAME), RECOVERY_HEADER], result
    assert len(lines) == 12 and all(RECOVERY_LINE.match(line) for line in lines[2:]), result
    assert pending_rows(activated) == []
    assert activated.query("SELECT count(*) FROM second_factor") == [(1,)]
    assert activated.query("SELECT count(*) FROM recovery_code WHERE used_at IS NULL") == [(10,)]
    assert ("second_factor_enabled", USERNAME) in [e[:2] for e in events(activated)]
    replayed = login(activated, code)
    assert (replayed.code, replayed.stderr) == (1, REPLAY + "\n"), replayed
    no_code = activated.login()
    assert no_code.code == 1 and WELCOME not in no_code.stdout, no_code
    rewind(activated)
    authorized_home(login(activated, pyotp.TOTP(key).now()))
    status = activated.run("2fa", "status", "--user", USERNAME)
    assert status.out_lines[0].startswith(f"Two-factor authentication is on for {USERNAME}")
    assert len(status.out_lines) == 1, status


def test_confirm_ends_other_sessions(activated):
    """As the one-sitting flow: the account's other sessions end when it turns on."""
    other = activated.login()
    assert other.code == 0, other
    assert activated.query("SELECT count(*) FROM session") == [(1,)]
    key = begun(activated)
    env = activated.env()
    env["XDG_STATE_HOME"] = str(activated.root / "elsewhere")
    result = confirm(activated, oath(key), env=env)
    assert result.code == 0, result
    assert activated.query("SELECT count(*) FROM session") == [(0,)]


def test_pending_secret_is_not_a_second_factor(activated):
    """Between `--begin` and `--confirm`, login and verify ask no code: the password alone logs
    in, and a login of the same client is recorded as one without a second factor."""
    begun(activated)
    result = activated.login()
    assert (result.code, result.stderr) == (0, ""), result
    assert result.out_lines[0] == WELCOME, result
    verify = activated.run("verify", "--username", USERNAME, "--password-stdin",
                           input=PASSWORD + "\n")
    assert (verify.code, verify.stdout, verify.stderr) == (0, "", ""), verify
    assert activated.query("SELECT second_factor FROM session") == [(0,)]
    assert len(pending_rows(activated)) == 1


def test_wrong_code_is_refused_and_keeps_the_pending_secret(activated):
    """A wrong code: `Invalid verification code!`, exit 1, nothing turned on, the pending row
    kept as it was; the right code then works."""
    key = begun(activated)
    kept = pending_rows(activated)
    result = confirm(activated, wrong_code(key))
    assert (result.code, result.stdout, result.stderr) == (1, "", INVALID_CODE + "\n"), result
    assert pending_rows(activated) == kept
    assert activated.query("SELECT count(*) FROM second_factor") == [(0,)]
    again = confirm(activated, oath(key))
    assert again.code == 0 and again.out_lines[0] == ON.format(USERNAME), again


def test_expired_pending_secret_is_refused_and_deleted(activated):
    """A pending secret past its expiry (moved there in the store): one sentence, exit 1, the row
    deleted, nothing turned on; `--confirm` again finds none."""
    key = begun(activated)
    activated.execute("UPDATE pending_second_factor SET expires_at = ?", PAST)
    result = confirm(activated, oath(key))
    assert (result.code, result.stdout, result.stderr) == (
        1, "", EXPIRED.format(USERNAME) + "\n"), result
    assert pending_rows(activated) == []
    assert activated.query("SELECT count(*) FROM second_factor") == [(0,)]
    status = activated.run("2fa", "status", "--user", USERNAME)
    assert status.stdout == f"Two-factor authentication is off for {USERNAME}.\n", status
    again = confirm(activated, oath(key))
    assert (again.code, again.stderr) == (1, NO_PENDING.format(USERNAME) + "\n"), again


def test_confirm_without_begin(activated):
    """No pending secret: its own sentence, exit 1, nothing written."""
    result = confirm(activated, "123456")
    assert (result.code, result.stdout, result.stderr) == (
        1, "", NO_PENDING.format(USERNAME) + "\n"), result
    assert activated.query("SELECT count(*) FROM second_factor") == [(0,)]


def test_begin_twice_replaces_the_first_secret(activated):
    """A second `--begin` prints a new key and replaces the pending row: the first key's code is
    wrong, the second's turns it on."""
    first = begun(activated)
    second = begun(activated)
    assert first != second
    assert len(pending_rows(activated)) == 1
    refused = confirm(activated, oath(first))
    assert (refused.code, refused.stderr) == (1, INVALID_CODE + "\n"), refused
    result = confirm(activated, oath(second))
    assert (result.code, result.stderr) == (0, ""), result


def test_begin_and_confirm_refused_when_already_on(activated):
    """With the second factor on, `--begin` is refused with the one-sitting flow's sentence and
    keeps nothing; so is `--confirm`."""
    enabled(activated)
    result, key = begin(activated)
    assert (result.code, result.stdout, result.stderr) == (
        1, "", ALREADY_ON.format(USERNAME) + "\n"), result
    assert key is None and pending_rows(activated) == []
    confirmed = confirm(activated, "123456")
    assert (confirmed.code, confirmed.stderr) == (1, ALREADY_ON.format(USERNAME) + "\n")


def test_wrong_password_is_refused_and_counted_as_at_enable(activated):
    """`--begin` and `--confirm` with a wrong password: `Invalid user name or password!`, exit 1,
    counted toward the lockout, nothing kept or turned on."""
    result, _ = begin(activated, password=WRONG_PASSWORD)
    assert (result.code, result.stdout, result.stderr) == (1, "", INVALID + "\n"), result
    assert pending_rows(activated) == [] and failures(activated) == 1
    key = begun(activated)
    counted = failures(activated)
    confirmed = confirm(activated, oath(key), password=WRONG_PASSWORD)
    assert (confirmed.code, confirmed.stderr) == (1, INVALID + "\n"), confirmed
    assert failures(activated) == counted + 1
    assert len(pending_rows(activated)) == 1


def test_admin_reset_removal_and_reset_delete_pending_secrets(activated):
    """`user reset-2fa` deletes a pending secret (said as a reset), `user remove` deletes the
    account's with it, and `accounts reset` leaves none."""
    activated.add_user()
    begun(activated)
    begun(activated, username=BOB, password=BOB_PASSWORD)
    reset = activated.run("user", "reset-2fa", USERNAME)
    assert (reset.code, reset.stderr) == (0, ""), reset
    assert pending_rows(activated) == [] and len(pending_rows(activated, BOB)) == 1
    removed = activated.run("user", "remove", BOB, "--yes")
    assert removed.code == 0, removed
    assert activated.query("SELECT count(*) FROM pending_second_factor") == [(0,)]
    begun(activated)
    wiped = activated.run("reset", "--yes")
    assert wiped.code == 0, wiped
    assert activated.query("SELECT count(*) FROM pending_second_factor") == [(0,)]


def test_store_copy_works_with_a_pending_secret_and_leaves_it_behind(activated, tmp_path):
    """A pending secret is transient: `store copy` of a store holding one succeeds, the target
    holds no pending secret, and alice logs in there without a code."""
    begun(activated)
    target = tmp_path / "copied" / "accounts.sqlite3"
    result = activated.run("store", "copy", "--from", str(activated.db), "--to", str(target))
    assert (result.code, result.stderr) == (0, ""), result
    assert store_query(target, "SELECT count(*) FROM pending_second_factor") == [(0,)]
    assert store_query(target, "SELECT count(*) FROM account") == [(1,)]
    env = activated.env()
    env["ACCOUNTS_DATABASE"] = str(target)
    copied = activated.run("login", "--no-session", input=f"{USERNAME}\n{PASSWORD}\n", env=env)
    assert (copied.code, copied.out_lines[:1]) == (0, [WELCOME]), copied


@pytest.mark.sqlite_only
def test_begin_makes_the_key_file_and_confirm_needs_it(activated):
    """`--begin` seals under the key file, made private on first use as `2fa enable` makes it;
    without it `--confirm` stops with exit 3 and one sentence naming it, and the pending secret
    stays for the restored file."""
    assert not activated.key_file.exists()
    key = begun(activated)
    assert stat.S_IMODE(activated.key_file.stat().st_mode) == 0o600
    saved = activated.key_file.read_bytes()
    activated.key_file.unlink()
    result = confirm(activated, oath(key))
    assert (result.code, result.stdout) == (3, ""), result
    assert len(result.err_lines) == 1 and f"key file {activated.key_file}" in result.stderr
    assert len(pending_rows(activated)) == 1
    activated.key_file.write_bytes(saved)
    activated.key_file.chmod(0o600)
    assert confirm(activated, oath(key)).code == 0
