"""Account expiry: `user add --expires` and `user edit --expires DATE|never`; from the expiry
moment on, login, the bare flow, verify, passwd and pam-auth answer exactly as for a disabled
account (the log says `account expired`). A date in the past and one far ahead stand for
"expired" and "not yet": no test waits for time to pass."""

import json

import pytest

from conftest import (BOB, BOB_EMAIL, BOB_FULL_NAME, BOB_PASSWORD, INVALID, NEW_PASSWORD,
                      TOO_MANY, USERNAME, WRONG_PASSWORD)
from pamhelp import WHERE, pam_auth, silent

PAST, FUTURE = "2020-01-01", "2099-12-31"
PAST_STORED, FUTURE_STORED = "2020-01-01T00:00:00.000Z", "2099-12-31T00:00:00.000Z"
FORMS = ("Error: --expires must be a date (2026-12-31: the account expires at 00:00 UTC of that "
         "day), an RFC 3339 time with its zone (2026-12-31T18:00:00Z) or never.")


def add_bob(device, expires):
    result = device.run("user", "add", "--username", BOB, "--full-name", BOB_FULL_NAME,
                        "--email", BOB_EMAIL, "--password-stdin", "--expires", expires,
                        input=BOB_PASSWORD + "\n")
    assert (result.code, result.stdout, result.stderr) == (0, f"Account added: {BOB}.\n", "")


def expire(device, value, name=BOB):
    result = device.run("user", "edit", name, "--expires", value)
    assert (result.code, result.stderr) == (0, ""), result
    return result


def last_event(device):
    event = device.events()[-1]
    return (event["event"], event["user"], event["detail"])


def test_expired_login_looks_like_a_wrong_password(activated):
    """An expired account's right password: `Invalid user name or password!`, exit 1,
    byte-identical to a wrong password; logged `account expired`, counted."""
    add_bob(activated, PAST)
    expired = activated.login(BOB, BOB_PASSWORD)
    assert (expired.code, expired.stdout, expired.stderr) == (1, "", INVALID + "\n")
    assert last_event(activated) == ("login_failure", BOB, "account expired")
    assert activated.account(BOB)["failures"] == 1
    wrong = activated.login(USERNAME, WRONG_PASSWORD)
    assert (wrong.code, wrong.stdout, wrong.stderr) == (
        expired.code, expired.stdout, expired.stderr)


def test_expired_logins_count_toward_lockout(activated):
    add_bob(activated, PAST)
    results = [activated.login(BOB, BOB_PASSWORD) for _ in range(5)]
    assert [r.code for r in results] == [1, 1, 1, 1, 4]
    assert TOO_MANY in results[-1].stderr


def test_future_expiry_logs_in_and_shows(activated):
    """Not yet expired: the login works; show and list --json say when it expires."""
    add_bob(activated, FUTURE)
    assert activated.login(BOB, BOB_PASSWORD).code == 0
    assert f"Expires: {FUTURE_STORED}" in activated.run("user", "show", BOB).out_lines
    shown = activated.account(BOB)
    assert (shown["expiresAt"], shown["expired"]) == (FUTURE_STORED, False)
    assert activated.account(USERNAME)["expiresAt"] is None
    assert activated.events()[1]["detail"] == f"expires {FUTURE_STORED}"


def test_expired_is_shown(activated):
    """user show says it has passed; list's status says `expired`; --json `expired: true`."""
    add_bob(activated, PAST)
    assert f"Expires: {PAST_STORED} (expired)" in activated.run("user", "show", BOB).out_lines
    lines = activated.run("user", "list").out_lines
    assert lines[2].split()[0] == BOB and "expired" in lines[2].split()
    assert [(a["expiresAt"], a["expired"]) for a in activated.accounts()] == [
        (None, False), (PAST_STORED, True)]


@pytest.mark.parametrize("value, stored", [
    ("2099-12-31T18:00:00Z", "2099-12-31T18:00:00.000Z"),
    ("2099-12-31T19:00:00+01:00", "2099-12-31T18:00:00.000Z"),
    ("2099-12-31T12:30:00.25-06:00", "2099-12-31T18:30:00.250Z"),
    ("2099-02-28", "2099-02-28T00:00:00.000Z"),
])
def test_expires_forms(activated, value, stored):
    """A date means 00:00 UTC of that day; an RFC 3339 time is kept in UTC to the millisecond."""
    activated.add_user()
    result = expire(activated, value)
    assert result.stdout == f"{BOB} expires at {stored}.\n"
    assert activated.account(BOB)["expiresAt"] == stored


@pytest.mark.parametrize("value", ["tomorrow", "2099-02-30", "2099-12-31T18:00:00", "Never",
                                   "31/12/2099", "2099-12-31 18:00:00Z", ""])
@pytest.mark.parametrize("command", ["add", "edit"])
def test_other_values_are_usage_errors(activated, command, value):
    """Anything else: one sentence, exit 2, nothing written."""
    before = activated.events()
    args = (["user", "add", "--username", BOB, "--full-name", BOB_FULL_NAME, "--email",
             BOB_EMAIL, "--password-stdin"] if command == "add" else ["user", "edit", USERNAME])
    result = activated.run(*args, "--expires", value, input=BOB_PASSWORD + "\n")
    assert (result.code, result.stdout) == (2, "")
    assert result.err_lines[0] == FORMS
    assert activated.events() == before


def test_edit_expires_then_never(activated):
    """user edit --expires PAST refuses the next login; --expires never lets it in again; both
    logged as account_edited with what was set."""
    activated.add_user()
    assert expire(activated, PAST).stdout == f"{BOB} expires at {PAST_STORED}.\n"
    assert activated.login(BOB, BOB_PASSWORD).code == 1
    assert expire(activated, "never").stdout == f"{BOB} no longer expires.\n"
    assert activated.login(BOB, BOB_PASSWORD).code == 0
    edits = [e["detail"] for e in activated.events() if e["event"] == "account_edited"]
    assert edits == [f"expires {PAST_STORED}", "expires never"]
    result = activated.run("user", "edit", BOB, "--expires", "never")
    assert result.stdout == f"Nothing to change for {BOB}.\n"


def test_expiry_combines_with_other_edits(activated):
    activated.add_user()
    result = expire(activated, FUTURE)
    result = activated.run("user", "edit", BOB, "--full-name", "Robert", "--expires", PAST)
    assert result.out_lines == [f"Account edited: {BOB}.", f"{BOB} expires at {PAST_STORED}."]
    assert last_event(activated) == ("account_edited", BOB,
                                     f"full name, expires {PAST_STORED}")


def test_verify_refuses_an_expired_account(activated):
    add_bob(activated, PAST)
    result = activated.run("verify", "--username", BOB, "--password-stdin",
                           input=BOB_PASSWORD + "\n")
    assert silent(result) == 1
    assert last_event(activated) == ("login_failure", BOB, "account expired")


def test_passwd_refuses_an_expired_account(activated):
    add_bob(activated, PAST)
    result = activated.run("passwd", input=f"{BOB}\n{BOB_PASSWORD}\n{NEW_PASSWORD}\n"
                                           f"{NEW_PASSWORD}\n")
    assert (result.code, result.stdout, result.stderr) == (1, "", INVALID + "\n")
    assert last_event(activated) == ("login_failure", BOB, "account expired")


def test_pam_auth_refuses_an_expired_account(activated):
    add_bob(activated, PAST)
    assert silent(pam_auth(activated, BOB_PASSWORD, user=BOB)) == 1
    assert last_event(activated) == ("login_failure", BOB, f"account expired; {WHERE}")
    expire(activated, FUTURE)
    assert silent(pam_auth(activated, BOB_PASSWORD, user=BOB)) == 0


def test_bare_flow_refuses_an_expired_account(activated):
    """The bare `accounts` asks to log in and answers as for a wrong password."""
    add_bob(activated, PAST)
    result = activated.run(input=f"{BOB}\n{BOB_PASSWORD}\n")
    assert result.code == 1 and INVALID in result.err_lines, result
    assert last_event(activated) == ("login_failure", BOB, "account expired")


def test_a_session_ends_when_its_account_expires(activated):
    """A live session of an account that then expires is no login any more."""
    activated.add_user()
    assert activated.login(BOB, BOB_PASSWORD).code == 0
    assert activated.run("whoami").code == 0
    expire(activated, PAST)
    result = activated.run("whoami")
    assert (result.code, result.stdout, result.stderr) == (1, "", "Not logged in.\n")
    assert json.loads(activated.run("whoami", "--json").stdout) == {"loggedIn": False}
