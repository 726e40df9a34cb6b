"""`accounts verify`: a silent yes/no on a user name and password, for scripts; the
same throttle and audit as login, no Home."""

import pytest

from conftest import (BOB, BOB_PASSWORD, NOT_ACTIVATED, PASSWORD, USERNAME, WRONG_PASSWORD)


def verify(device, username=USERNAME, password=PASSWORD):
    return device.run("verify", "--username", username, "--password-stdin",
                      input=password + "\n")


def silent(result):
    """The exit code, after checking that nothing was printed."""
    assert (result.stdout, result.stderr) == ("", ""), result
    return result.code


def events(device):
    return [(e["event"], e["user"], e["detail"]) for e in device.events()]


def test_right_password_exit_0(activated):
    """The right password: exit 0, nothing printed, a login_success event."""
    assert silent(verify(activated)) == 0
    assert events(activated)[-1] == ("login_success", USERNAME, "password")


def test_wrong_password_exit_1(activated):
    """A wrong password: exit 1, nothing printed, a login_failure event like login's."""
    assert silent(verify(activated, password=WRONG_PASSWORD)) == 1
    assert events(activated)[-1] == (
        "login_failure", USERNAME, "invalid user name or password")


def test_unknown_name_exit_1(activated):
    """An unknown name: exit 1, nothing printed, logged with the name as typed."""
    assert silent(verify(activated, "Mallory")) == 1
    assert events(activated)[-1][:2] == ("login_failure", "Mallory")


def test_name_is_case_insensitive(activated):
    """ALICE verifies as alice, as at login."""
    assert silent(verify(activated, "ALICE")) == 0


def test_password_without_newline(activated):
    """A password line without a trailing newline is read whole."""
    result = activated.run("verify", "--username", USERNAME, "--password-stdin", input=PASSWORD)
    assert silent(result) == 0


def test_five_wrong_lock_silently(activated):
    """Five wrong passwords: exit 1, 1, 1, 1, 4 with nothing printed; then even the right one
    exits 4; a lockout event is written; unlock lets it through again."""
    codes = [silent(verify(activated, password=WRONG_PASSWORD)) for _ in range(5)]
    assert codes == [1, 1, 1, 1, 4]
    assert events(activated)[-1][:2] == ("lockout", USERNAME)
    assert events(activated)[-1][2].startswith("locked until ")
    assert silent(verify(activated)) == 4
    assert activated.run("unlock", USERNAME).code == 0
    assert silent(verify(activated)) == 0


def test_shares_the_tally_with_login(activated):
    """Four wrong verifies and one wrong login lock the name; login then says so, exit 4."""
    for _ in range(4):
        assert silent(verify(activated, password=WRONG_PASSWORD)) == 1
    assert activated.login(USERNAME, WRONG_PASSWORD).code == 4
    assert silent(verify(activated)) == 4


def test_success_resets_the_consecutive_count(activated):
    """4 wrong, right, 4 wrong: never locked, as at login."""
    for _ in range(4):
        assert silent(verify(activated, password=WRONG_PASSWORD)) == 1
    assert silent(verify(activated)) == 0
    for _ in range(4):
        assert silent(verify(activated, password=WRONG_PASSWORD)) == 1
    assert silent(verify(activated)) == 0


def test_no_home_even_with_failures_since_last_login(activated):
    """verify never shows Home, not even its failure count; the next login does show it."""
    assert activated.login().code == 0
    assert silent(verify(activated, password=WRONG_PASSWORD)) == 1
    assert silent(verify(activated)) == 0
    assert activated.login().stdout.startswith("Welcome back ")


def test_disabled_account(activated):
    """A disabled account's right password: exit 1, silent, logged as `account disabled`."""
    activated.add_user()
    assert activated.run("user", "disable", BOB).code == 0
    assert silent(verify(activated, BOB, BOB_PASSWORD)) == 1
    assert events(activated)[-1] == ("login_failure", BOB, "account disabled")


def test_second_account(activated):
    """verify works for any account, not only the owner."""
    activated.add_user()
    assert silent(verify(activated, BOB, BOB_PASSWORD)) == 0
    assert silent(verify(activated, BOB, PASSWORD)) == 1


@pytest.mark.empty_database
def test_public_device(device):
    """On a Public device verify prints its one sentence, exit 1, and creates no database."""
    result = verify(device)
    assert (result.code, result.stdout, result.stderr) == (1, "", NOT_ACTIVATED + "\n")
    assert not device.db.exists()


@pytest.mark.parametrize("args", [
    [], ["--username", USERNAME], ["--password-stdin"], ["--username"],
    ["--username", USERNAME, "--password-stdin", "--password", PASSWORD]],
    ids=["no-flag", "no-password-stdin", "no-username", "username-without-value",
         "password-flag"])
def test_flags_are_required(activated, args):
    """Without both --username and --password-stdin (or with a password flag) verify is a usage
    error: exit 2, no event."""
    result = activated.run("verify", *args, input=PASSWORD + "\n")
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr.strip() != ""
    assert [e["event"] for e in activated.events()] == ["activation"]
