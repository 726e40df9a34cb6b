"""`accounts user passwd` and a password that must be changed at the next login."""

import pytest

from conftest import (BOB, BOB_PASSWORD, FILL, INVALID, MATCH, NEW_PASSWORD, PERSONAL, SHORT,
                      WRONG_PASSWORD, answer, answer_secret, ctrl_c_at_secret, finish, screen)
from userhelp import BOB_WELCOME, kinds, lock


# user passwd

def test_passwd_from_pipe(activated):
    """user passwd reads two lines from a pipe: `Password set for bob.`; the old password stops
    working, the new one works; event password_set."""
    activated.add_user()
    result = activated.run("user", "passwd", BOB, input=f"{NEW_PASSWORD}\n{NEW_PASSWORD}\n")
    assert (result.code, result.stdout, result.stderr) == (0, "Password set for bob.\n", "")
    assert activated.login(BOB, BOB_PASSWORD).code == 1
    assert activated.login(BOB, NEW_PASSWORD).stdout.startswith(BOB_WELCOME)
    event = [e for e in activated.events() if e["event"] == "password_set"]
    assert len(event) == 1 and (event[0]["user"], event[0]["detail"]) == (BOB, None)


def test_passwd_password_stdin(activated):
    """With --password-stdin one line is the new password."""
    activated.add_user()
    result = activated.run("user", "passwd", BOB, "--password-stdin", input=NEW_PASSWORD + "\n")
    assert (result.code, result.stdout, result.stderr) == (0, "Password set for bob.\n", "")
    assert activated.login(BOB, NEW_PASSWORD).code == 0


def test_passwd_must_change(activated):
    """--must-change: its own sentence, the flag shown by show, event detail
    `must change at next login`."""
    activated.add_user()
    result = activated.run("user", "passwd", BOB, "--must-change", "--password-stdin",
                           input=NEW_PASSWORD + "\n")
    assert (result.code, result.stdout, result.stderr) == (
        0, "Password set for bob; it must be changed at the next login.\n", "")
    assert "Must change password: yes" in activated.run("user", "show", BOB).out_lines
    last = activated.events()[-1]
    assert (last["event"], last["user"], last["detail"]) == (
        "password_set", BOB, "must change at next login")


@pytest.mark.parametrize("stdin, message", [
    (f"{NEW_PASSWORD}\n{NEW_PASSWORD}!\n", MATCH),
    ("short\nshort\n", SHORT),
    ("\n\n", FILL),
    ("Bob Builder BOBBUILDER\nBob Builder BOBBUILDER\n", PERSONAL),
], ids=["mismatch", "short", "empty", "own-full-name"])
def test_passwd_policy(activated, stdin, message):
    """user passwd applies the form's policy with the account's own details: exit 1, the old
    password still works."""
    activated.add_user()
    result = activated.run("user", "passwd", BOB, input=stdin)
    assert (result.code, result.stdout) == (1, "")
    assert result.err_lines[0] == message, result.stderr
    assert activated.login(BOB, BOB_PASSWORD).code == 0
    assert "password_set" not in kinds(activated)


def test_passwd_clears_the_tally_and_lock(activated):
    """Setting a password clears the account's failed logins and its lock."""
    activated.add_user()
    lock(activated, BOB)
    assert activated.account(BOB)["locked"] is True
    assert activated.run("user", "passwd", BOB, "--password-stdin",
                         input=NEW_PASSWORD + "\n").code == 0
    bob = activated.account(BOB)
    assert (bob["locked"], bob["lockedUntil"], bob["failures"]) == (False, None, 0)
    assert activated.login(BOB, NEW_PASSWORD).code == 0


def test_passwd_at_terminal(activated):
    """At a terminal user passwd asks `New password` and `New password again` with echo off; the
    password never appears on the screen."""
    activated.add_user()
    child = activated.spawn("user", "passwd", BOB)
    answer_secret(child, "New password: ", NEW_PASSWORD)
    answer_secret(child, "New password again: ", NEW_PASSWORD)
    assert finish(child) == 0
    assert screen(child).endswith("New password: \nNew password again: \nPassword set for bob.\n")
    assert NEW_PASSWORD not in child.logfile_read.getvalue()
    assert activated.login(BOB, NEW_PASSWORD).code == 0


def test_passwd_at_terminal_ctrl_c(activated):
    """Ctrl-C at `New password again` exits 130 and leaves the password as it was."""
    activated.add_user()
    child = activated.spawn("user", "passwd", BOB)
    answer_secret(child, "New password: ", NEW_PASSWORD)
    ctrl_c_at_secret(child, "New password again: ")
    assert finish(child) == 130
    assert activated.login(BOB, BOB_PASSWORD).code == 0
    assert "password_set" not in kinds(activated)


# A password that must be changed at the next login.

def must_change(device):
    device.add_user()
    result = device.run("user", "passwd", BOB, "--must-change", "--password-stdin",
                        input=NEW_PASSWORD + "\n")
    assert result.code == 0, result


CHOSEN = "marble otter jigsaw midnight"
MUST_CHOOSE = "You must choose a new password before you continue."


def test_must_change_login_from_pipe(activated):
    """After the right password the login says it must be changed, reads two more lines, then
    shows Home; the chosen password is the one that works afterwards."""
    must_change(activated)
    result = activated.run("login", input=f"{BOB}\n{NEW_PASSWORD}\n{CHOSEN}\n{CHOSEN}\n")
    assert (result.code, result.stdout, result.stderr) == (0, BOB_WELCOME, MUST_CHOOSE + "\n")
    assert activated.account(BOB)["mustChangePassword"] is False
    again = activated.login(BOB, CHOSEN)
    assert (again.code, again.stderr) == (0, "")
    assert activated.login(BOB, NEW_PASSWORD).code == 1
    changed = [e for e in activated.events() if e["event"] == "password_changed"]
    assert len(changed) == 1
    assert (changed[0]["user"], changed[0]["detail"]) == (BOB, "required at login")


def test_must_change_logs_change_and_success(activated):
    """The forced change logs password_changed and login_success, nothing else."""
    must_change(activated)
    before = len(activated.events())
    assert activated.run("login", input=f"{BOB}\n{NEW_PASSWORD}\n{CHOSEN}\n{CHOSEN}\n").code == 0
    assert sorted(kinds(activated)[before:]) == ["login_success", "password_changed"]


def test_must_change_input_ends(activated):
    """Input ending before the new password: the sentence says so, exit 1, nothing changed."""
    must_change(activated)
    result = activated.run("login", input=f"{BOB}\n{NEW_PASSWORD}\n")
    assert (result.code, result.stdout) == (1, "")
    assert result.err_lines == [
        MUST_CHOOSE, "Input ended before a new password was chosen; you are not logged in."]
    assert activated.account(BOB)["mustChangePassword"] is True
    assert "password_changed" not in kinds(activated)


@pytest.mark.parametrize("new, again, message", [
    (NEW_PASSWORD, NEW_PASSWORD, "New password must differ from the current one!"),
    (CHOSEN, CHOSEN + "!", MATCH),
    ("short", "short", SHORT),
], ids=["same-as-current", "mismatch", "short"])
def test_must_change_policy_from_pipe(activated, new, again, message):
    """The forced new password follows the form's policy and must differ: exit 1, not logged
    in, still must change."""
    must_change(activated)
    result = activated.run("login", input=f"{BOB}\n{NEW_PASSWORD}\n{new}\n{again}\n")
    assert (result.code, result.stdout) == (1, "")
    assert result.err_lines == [MUST_CHOOSE, message]
    assert activated.account(BOB)["mustChangePassword"] is True


def test_must_change_login_at_terminal(activated):
    """At a terminal: User name, Password, the sentence, New password and New password again
    with echo off, then Home; no password shown."""
    must_change(activated)
    child = activated.spawn("login")
    answer(child, "User name: ", BOB)
    answer_secret(child, "Password: ", NEW_PASSWORD)
    child.expect_exact(MUST_CHOOSE)
    answer_secret(child, "New password: ", CHOSEN)
    answer_secret(child, "New password again: ", CHOSEN)
    assert finish(child) == 0
    shown = screen(child)
    assert shown.startswith(f"User name: {BOB}\nPassword: \n{MUST_CHOOSE}\n")
    assert shown.endswith(f"New password: \nNew password again: \n{BOB_WELCOME}")
    for secret in (NEW_PASSWORD, CHOSEN):
        assert secret not in child.logfile_read.getvalue()
    assert activated.login(BOB, CHOSEN).code == 0


def test_must_change_at_terminal_refuses_the_current_password(activated):
    """At a terminal the current password given as the new one is refused with
    `New password must differ from the current one!` and the two prompts are asked again."""
    must_change(activated)
    child = activated.spawn("login")
    answer(child, "User name: ", BOB)
    answer_secret(child, "Password: ", NEW_PASSWORD)
    answer_secret(child, "New password: ", NEW_PASSWORD)
    answer_secret(child, "New password again: ", NEW_PASSWORD)
    child.expect_exact("New password must differ from the current one!")
    answer_secret(child, "New password: ", CHOSEN)
    answer_secret(child, "New password again: ", CHOSEN)
    child.expect_exact(BOB_WELCOME.strip())
    assert finish(child) == 0
    assert activated.login(BOB, CHOSEN).code == 0


def test_must_change_bare_command_at_terminal(activated):
    """The bare `accounts` asks for the new password too before Home."""
    must_change(activated)
    child = activated.spawn()
    answer(child, "User name: ", BOB)
    answer_secret(child, "Password: ", NEW_PASSWORD)
    child.expect_exact(MUST_CHOOSE)
    answer_secret(child, "New password: ", CHOSEN)
    answer_secret(child, "New password again: ", CHOSEN)
    child.expect_exact(BOB_WELCOME.strip())
    assert finish(child) == 0
    assert activated.account(BOB)["mustChangePassword"] is False


def test_must_change_wrong_password_is_a_plain_failure(activated):
    """A wrong password on a must-change account is the usual refusal: no new-password prompt."""
    must_change(activated)
    result = activated.login(BOB, WRONG_PASSWORD)
    assert (result.code, result.stdout, result.stderr) == (1, "", INVALID + "\n")
