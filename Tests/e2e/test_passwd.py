"""`accounts passwd`: a person changes their own password, from a pipe and at a
terminal; wrong answers count like failed logins."""

import re
import shlex
import time

import pexpect
import pytest

from conftest import (BIN, BOB, BOB_PASSWORD, FILL, FULL_NAME, INVALID, MATCH, NEW_PASSWORD,
                      PASSWORD, PERSONAL, SHORT, TOO_MANY, USERNAME, WRONG_PASSWORD, answer,
                      answer_secret, ctrl_c_at_secret, finish, screen, with_program_role)

CHANGED = "Password changed for alice.\n"
SAME = "New password must differ from the current one!"
WELCOME = f"Welcome back {FULL_NAME}!\n"
LOCK_LINE = re.compile(
    r"Too many failed attempts! Try again in 1 minute, after \d\d:\d\d:\d\d UTC\.")


def passwd(device, current=PASSWORD, new=NEW_PASSWORD, again=None, username=USERNAME):
    """`accounts passwd` with its four lines on a pipe."""
    again = new if again is None else again
    return device.run("passwd", input=f"{username}\n{current}\n{new}\n{again}\n")


def kinds(device):
    return [e["event"] for e in device.events()]


def test_change_from_pipe(activated):
    """Four lines on a pipe change the password: `Password changed for alice.`, exit 0; the old
    password stops working and the new one works."""
    result = passwd(activated)
    assert (result.code, result.stdout, result.stderr) == (0, CHANGED, "")
    old = activated.login(USERNAME, PASSWORD)
    assert (old.code, old.stderr) == (1, INVALID + "\n")
    assert activated.login(USERNAME, NEW_PASSWORD).stdout.startswith(WELCOME)


def test_change_logs_password_changed(activated):
    """A change writes one password_changed event for the name; no password in the log."""
    assert passwd(activated).code == 0
    last = activated.events()[-1]
    assert (last["event"], last["user"]) == ("password_changed", USERNAME)
    text = activated.run("log").stdout + activated.run("log", "--json").stdout
    assert PASSWORD not in text and NEW_PASSWORD not in text


def test_username_flag_skips_its_line(activated):
    """--username U: three lines (current, new, again) on the pipe."""
    result = activated.run("passwd", "--username", USERNAME,
                           input=f"{PASSWORD}\n{NEW_PASSWORD}\n{NEW_PASSWORD}\n")
    assert (result.code, result.stdout, result.stderr) == (0, CHANGED, "")
    assert activated.login(USERNAME, NEW_PASSWORD).code == 0


def test_each_account_changes_its_own(activated):
    """bob changes bob's password; alice's is untouched."""
    activated.add_user()
    result = passwd(activated, BOB_PASSWORD, username=BOB)
    assert (result.code, result.stdout) == (0, "Password changed for bob.\n")
    assert activated.login(BOB, NEW_PASSWORD).code == 0
    assert activated.login(USERNAME, PASSWORD).code == 0


def test_wrong_current_password(activated):
    """A wrong current password: `Invalid user name or password!`, exit 1, password unchanged."""
    result = passwd(activated, WRONG_PASSWORD)
    assert (result.code, result.stdout, result.stderr) == (1, "", INVALID + "\n")
    assert activated.login().code == 0
    assert activated.login(USERNAME, NEW_PASSWORD).code == 1


def test_unknown_name_answers_the_same(activated):
    """An unknown name and a wrong current password give byte-identical output and exit code."""
    unknown = passwd(activated, PASSWORD, username="mallory")
    wrong = passwd(activated, WRONG_PASSWORD)
    assert (unknown.code, unknown.stdout, unknown.stderr) == (
        wrong.code, wrong.stdout, wrong.stderr) == (1, "", INVALID + "\n")


def test_wrong_current_password_is_a_failed_login(activated):
    """A wrong current password is counted and logged as a failed login."""
    assert passwd(activated, WRONG_PASSWORD).code == 1
    last = activated.events()[-1]
    assert (last["event"], last["user"]) == ("login_failure", USERNAME)
    assert activated.account(USERNAME)["failures"] == 1


def test_five_wrong_lock_the_name(activated):
    """Five wrong current passwords: exit 1 four times, then 4 with `Too many failed attempts`;
    after that even the right one is refused with exit 4 and nothing changes."""
    results = [passwd(activated, WRONG_PASSWORD) for _ in range(5)]
    assert [r.code for r in results] == [1, 1, 1, 1, 4]
    assert results[-1].stdout == ""
    assert results[-1].err_lines[0] == INVALID
    assert LOCK_LINE.fullmatch(results[-1].err_lines[1]), results[-1].stderr
    later = passwd(activated)
    assert (later.code, later.stdout) == (4, "")
    assert len(later.err_lines) == 1 and TOO_MANY in later.err_lines[0], later.stderr
    assert "lockout" in kinds(activated)
    assert activated.run("unlock", USERNAME).code == 0
    assert activated.login().code == 0


def test_passwd_and_login_share_the_tally(activated):
    """Four wrong current passwords then one wrong login lock the name: the count is shared."""
    for _ in range(4):
        assert passwd(activated, WRONG_PASSWORD).code == 1
    result = activated.login(USERNAME, WRONG_PASSWORD)
    assert result.code == 4
    assert TOO_MANY in result.stderr
    assert passwd(activated).code == 4


def test_unknown_name_locks_too(activated):
    """An unknown name locks after five tries as well, exit 4."""
    codes = [passwd(activated, PASSWORD, username="mallory").code for _ in range(5)]
    assert codes == [1, 1, 1, 1, 4]


@pytest.mark.parametrize("new, again, message", [
    (NEW_PASSWORD, NEW_PASSWORD + "!", MATCH),
    ("short", "short", SHORT),
    ("", "", FILL),
    ("alicealicealice", "alicealicealice", PERSONAL),
    ("Alice Liddell ALICELIDDELL", "Alice Liddell ALICELIDDELL", PERSONAL),
    (PASSWORD, PASSWORD, SAME),
], ids=["mismatch", "short", "empty", "own-user-name", "own-full-name", "same-as-current"])
def test_new_password_policy(activated, new, again, message):
    """The new password follows the form's policy (with the person's own details) and must
    differ from the current one: exit 1, the old password still works."""
    result = passwd(activated, PASSWORD, new, again)
    assert (result.code, result.stdout) == (1, "")
    assert result.err_lines[0] == message, result.stderr
    assert activated.login().code == 0
    assert "password_changed" not in kinds(activated)


def test_disabled_account_answers_invalid(activated):
    """A disabled account cannot change its password: the right current password gets
    `Invalid user name or password!`, exit 1, and nothing changes."""
    activated.add_user()
    assert activated.run("user", "disable", BOB).code == 0
    result = passwd(activated, BOB_PASSWORD, username=BOB)
    assert (result.code, result.stdout, result.stderr) == (1, "", INVALID + "\n")
    assert activated.run("user", "enable", BOB).code == 0
    assert activated.login(BOB, BOB_PASSWORD).code == 0


def test_policy_refusal_is_not_a_failed_login(activated):
    """A refused new password (right current password) does not count as a failed login."""
    for _ in range(5):
        assert passwd(activated, PASSWORD, "short", "short").code == 1
    assert activated.account(USERNAME)["failures"] == 0
    assert passwd(activated).code == 0


def test_change_clears_must_change(activated):
    """After an administrator's --must-change, the person's own change clears the flag: the next
    login goes straight to Home."""
    assert activated.run("user", "passwd", USERNAME, "--must-change", "--password-stdin",
                         input=BOB_PASSWORD + "\n").code == 0
    result = passwd(activated, BOB_PASSWORD, NEW_PASSWORD)
    assert (result.code, result.stdout) == (0, CHANGED)
    assert activated.account(USERNAME)["mustChangePassword"] is False
    login = activated.login(USERNAME, NEW_PASSWORD)
    assert (login.code, login.stderr) == (0, "")
    assert login.stdout.startswith(WELCOME)


def test_input_ends_early_changes_nothing(activated):
    """Input ending before the second new password: exit 1, nothing changed."""
    result = activated.run("passwd", input=f"{USERNAME}\n{PASSWORD}\n{NEW_PASSWORD}\n")
    assert (result.code, result.stdout) == (1, "")
    assert result.stderr != ""
    assert activated.login().code == 0


@pytest.mark.empty_database
def test_public_device(device):
    """passwd on a Public device says to activate first, exit 1."""
    result = passwd(device)
    assert (result.code, result.stdout) == (1, "")
    assert result.stderr == (
        "This device is not activated yet. Run `accounts activate` to activate it.\n")


# At a terminal.

def test_at_terminal_prompts_and_echo(activated):
    """At a terminal: User name with echo on, then Current password, New password and New
    password again with echo off; no typed secret appears on the screen."""
    child = activated.spawn("passwd")
    answer(child, "User name: ", USERNAME)
    answer_secret(child, "Current password: ", PASSWORD)
    answer_secret(child, "New password: ", NEW_PASSWORD)
    answer_secret(child, "New password again: ", NEW_PASSWORD)
    assert finish(child) == 0
    raw = child.logfile_read.getvalue()
    for secret in (PASSWORD, NEW_PASSWORD):
        assert secret not in raw
    shown = screen(child)
    assert shown.startswith(f"User name: {USERNAME}\nCurrent password: \n")
    assert shown.endswith("New password: \nNew password again: \n" + CHANGED)
    assert activated.login(USERNAME, NEW_PASSWORD).code == 0


def test_at_terminal_wrong_current_password(activated):
    """At a terminal a wrong current password is refused with exit 1 and never shown (whether
    it is checked before or after the new password is asked)."""
    child = activated.spawn("passwd")
    answer(child, "User name: ", USERNAME)
    answer_secret(child, "Current password: ", WRONG_PASSWORD)
    if child.expect_exact([INVALID, "New password: "]) == 1:
        child.sendline(NEW_PASSWORD)
        answer_secret(child, "New password again: ", NEW_PASSWORD)
        child.expect_exact(INVALID)
    assert finish(child) == 1
    assert screen(child).startswith(f"User name: {USERNAME}\nCurrent password: \n")
    assert screen(child).endswith(f"\n{INVALID}\n")
    assert WRONG_PASSWORD not in child.logfile_read.getvalue()
    assert activated.login().code == 0


def test_at_terminal_same_password_asks_again(activated):
    """At a terminal the current password given as the new one is refused and the two new
    password prompts are asked again; a different one then succeeds."""
    child = activated.spawn("passwd")
    answer(child, "User name: ", USERNAME)
    answer_secret(child, "Current password: ", PASSWORD)
    answer_secret(child, "New password: ", PASSWORD)
    answer_secret(child, "New password again: ", PASSWORD)
    child.expect_exact(SAME)
    answer_secret(child, "New password: ", NEW_PASSWORD)
    answer_secret(child, "New password again: ", NEW_PASSWORD)
    assert finish(child) == 0
    assert screen(child).endswith(CHANGED)
    raw = child.logfile_read.getvalue()
    assert PASSWORD not in raw and NEW_PASSWORD not in raw
    assert activated.login(USERNAME, NEW_PASSWORD).code == 0


def test_at_terminal_locked_name_refused_after_the_name(activated):
    """At a terminal a locked name is refused right after the user name: exit 4, no password
    prompt."""
    for _ in range(5):
        activated.login(USERNAME, WRONG_PASSWORD)
    child = activated.spawn("passwd")
    answer(child, "User name: ", USERNAME)
    assert finish(child) == 4
    shown = screen(child)
    assert "Current password" not in shown
    assert shown.startswith(f"User name: {USERNAME}\n")
    assert LOCK_LINE.fullmatch(shown.splitlines()[-1]), shown


def wait_for_file_text(path, ending, timeout=10):
    """Waits until the file's text ends with `ending` (a prompt written to a redirected stderr)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().endswith(ending):
            return
        time.sleep(0.02)
    raise AssertionError(f"{ending!r} never written; got {path.read_text()!r}")


def test_at_terminal_prompts_on_stderr_result_on_stdout(activated):
    """At a terminal the prompts go to stderr and only `Password changed for alice.` to stdout."""
    err = activated.root / "stderr.txt"
    command = f"{shlex.quote(BIN)} passwd 2>{shlex.quote(str(err))}"
    env = with_program_role(["passwd"], activated.env())
    child = pexpect.spawn("bash", ["-c", command], env=env, dimensions=(24, 200),
                          encoding="utf-8", timeout=10)
    wait_for_file_text(err, "User name: ")
    child.sendline(USERNAME)
    for prompt, secret in (("Current password: ", PASSWORD), ("New password: ", NEW_PASSWORD),
                           ("New password again: ", NEW_PASSWORD)):
        wait_for_file_text(err, prompt)
        assert child.waitnoecho(timeout=5)
        child.sendline(secret)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert child.before.replace("\r\n", "\n") == f"{USERNAME}\n{CHANGED}"
    assert err.read_text() == (
        "User name: Current password: \nNew password: \nNew password again: \n")


def test_at_terminal_ctrl_c_exits_130(activated):
    """Ctrl-C at `New password` exits 130 and changes nothing."""
    child = activated.spawn("passwd")
    answer(child, "User name: ", USERNAME)
    answer_secret(child, "Current password: ", PASSWORD)
    ctrl_c_at_secret(child, "New password: ")
    assert finish(child) == 130
    assert activated.login().code == 0
    assert "password_changed" not in kinds(activated)
