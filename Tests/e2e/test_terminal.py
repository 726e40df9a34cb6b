"""At a terminal (pexpect on a pty): prompts, echo, re-asking, Ctrl-C, Ctrl-D and the bare command."""

import shlex

import pexpect
import pytest

from conftest import (BIN, EMAIL, FULL_NAME, INPUT_ENDED, INVALID, PASSWORD, TOO_MANY, USERNAME,
                      WRONG_PASSWORD, answer, answer_secret, ctrl_c_at_secret, finish, pty_echo,
                      screen)

# The front end: the same code on either store, so these run once, in the sqlite run.
pytestmark = pytest.mark.front_end

WELCOME = f"Welcome back {FULL_NAME}!"
# At a terminal the password rules are said before the first Password prompt.
RULES = ("Choose a password of 15 to 1,024 characters (a few unrelated words work well); not "
         "your user name, name or e-mail, not easy to guess (a common password, a keyboard row, a "
         "repeat, a run like 12345, a date), not on the administrator's list.")
FORM_TRANSCRIPT = (
    f"User name: {USERNAME}\n"
    f"Full name: {FULL_NAME}\n"
    f"E-mail address: {EMAIL}\n"
    f"{RULES}\n"
    "Password: \n"
    "Password again: \n")


def fill_form(child, username=USERNAME, full_name=FULL_NAME, email=EMAIL, password=PASSWORD,
              again=None):
    answer(child, "User name: ", username)
    answer(child, "Full name: ", full_name)
    answer(child, "E-mail address: ", email)
    answer_secret(child, "Password: ", password)
    answer_secret(child, "Password again: ", password if again is None else again)


def shell_echo_works(sh):
    """In the bash on the pty, a typed command is echoed back and runs."""
    sh.sendline("echo MARK_$((40+2))")
    sh.expect_exact("echo MARK_")
    sh.expect_exact("MARK_42")
    sh.expect_exact("PROMPT$ ")
    return True


def run_in_shell(sh, *args):
    sh.sendline(" ".join(shlex.quote(a) for a in (BIN, *args)) + "; echo RC=$?")


def test_activate_prompts_in_order(device):
    """At a terminal activate asks the five prompts in order; passwords are never shown."""
    child = device.spawn("activate")
    fill_form(child)
    assert finish(child) == 0
    assert screen(child) == FORM_TRANSCRIPT + "Device activated for alice.\n"
    assert PASSWORD not in child.logfile_read.getvalue()
    assert device.login().stdout == WELCOME + "\n"


def test_activate_at_terminal_default_iterations(device):
    """At a terminal with the default 1,200,000 iterations activation works end to end."""
    child = device.spawn("activate", fast=False)
    fill_form(child)
    assert finish(child) == 0
    assert device.stored_hash().startswith("pbkdf2_sha256$1200000$")


def test_echo_off_at_both_password_prompts(device):
    """Echo is on at the text prompts and off at Password and Password again (termios)."""
    child = device.spawn("activate")
    for prompt, text in (("User name: ", USERNAME), ("Full name: ", FULL_NAME),
                         ("E-mail address: ", EMAIL)):
        child.expect_exact(prompt)
        assert pty_echo(child)
        child.sendline(text)
    for prompt in ("Password: ", "Password again: "):
        child.expect_exact(prompt)
        assert child.waitnoecho(timeout=5)
        assert not pty_echo(child)
        child.sendline(PASSWORD)
    child.expect_exact("Device activated for alice.")
    assert finish(child) == 0
    assert PASSWORD not in child.logfile_read.getvalue()


def test_login_prompts_and_echo(activated):
    """login at a terminal asks User name (echo on) then Password (echo off), then shows Home."""
    child = activated.spawn("login")
    answer(child, "User name: ", USERNAME)
    answer_secret(child, "Password: ", PASSWORD)
    assert finish(child) == 0
    assert screen(child) == f"User name: alice\nPassword: \n{WELCOME}\n"
    assert PASSWORD not in child.logfile_read.getvalue()


def test_wrong_password_at_terminal_not_echoed(activated):
    """A wrong password typed at a terminal is refused with exit 1 and never shown."""
    child = activated.spawn("login")
    answer(child, "User name: ", USERNAME)
    answer_secret(child, "Password: ", WRONG_PASSWORD)
    assert finish(child) == 1
    assert screen(child) == f"User name: alice\nPassword: \n{INVALID}\n"


def test_prompts_go_to_stderr(activated):
    """At a terminal the prompts are written to stderr, Home to stdout."""
    err = activated.root / "stderr.txt"
    command = f"{shlex.quote(BIN)} login 2>{shlex.quote(str(err))}"
    child = pexpect.spawn("bash", ["-c", command], env=activated.env(), dimensions=(24, 200),
                          encoding="utf-8", timeout=10)
    child.sendline(USERNAME)
    assert child.waitnoecho(timeout=5)
    child.sendline(PASSWORD)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    out = child.before.replace("\r\n", "\n")
    assert out == f"{USERNAME}\n{WELCOME}\n"
    assert err.read_text() == "User name: Password: \n"


def test_reask_keeps_defaults_on_return(device):
    """A failing form at a terminal shows the message and asks again with [defaults]; Return keeps them."""
    child = device.spawn("activate")
    fill_form(child, again=PASSWORD + " but different")
    child.expect_exact("Passwords must match!")
    answer(child, f"User name [{USERNAME}]: ", "")
    answer(child, f"Full name [{FULL_NAME}]: ", "")
    answer(child, f"E-mail address [{EMAIL}]: ", "")
    answer_secret(child, "Password: ", PASSWORD)
    answer_secret(child, "Password again: ", PASSWORD)
    assert finish(child) == 0
    assert screen(child) == (
        FORM_TRANSCRIPT + "Passwords must match!\n"
        f"User name [{USERNAME}]: \nFull name [{FULL_NAME}]: \nE-mail address [{EMAIL}]: \n"
        "Password: \nPassword again: \nDevice activated for alice.\n")
    assert device.login().stdout == WELCOME + "\n"


def test_reask_typed_value_replaces_default(device):
    """At the re-ask a typed value replaces the default; several failures re-ask each time."""
    child = device.spawn("activate")
    fill_form(child, username="al ice")
    child.expect_exact("User name must be 1 to 64 letters, digits, '.', '_' or '-'!")
    answer(child, "User name [al ice]: ", "alice")
    answer(child, f"Full name [{FULL_NAME}]: ", "")
    answer(child, f"E-mail address [{EMAIL}]: ", "")
    answer_secret(child, "Password: ", "short")
    answer_secret(child, "Password again: ", "short")
    child.expect_exact("Password must be at least 15 characters!")
    answer(child, "User name [alice]: ", "")
    answer(child, f"Full name [{FULL_NAME}]: ", "Alice P. Liddell")
    answer(child, f"E-mail address [{EMAIL}]: ", "")
    answer_secret(child, "Password: ", PASSWORD)
    answer_secret(child, "Password again: ", PASSWORD)
    child.expect_exact("Device activated for alice.")
    assert finish(child) == 0
    assert "short" not in child.logfile_read.getvalue()
    assert device.login().stdout == "Welcome back Alice P. Liddell!\n"


def test_reask_after_blank_field(device):
    """After `Please fill all fields!` a blank field is asked again with no default."""
    child = device.spawn("activate")
    fill_form(child, full_name="")
    child.expect_exact("Please fill all fields!")
    answer(child, f"User name [{USERNAME}]: ", "")
    answer(child, "Full name: ", FULL_NAME)
    answer(child, f"E-mail address [{EMAIL}]: ", "")
    answer_secret(child, "Password: ", PASSWORD)
    answer_secret(child, "Password again: ", PASSWORD)
    assert finish(child) == 0
    assert device.login().stdout == WELCOME + "\n"


def test_ctrl_c_at_password_exits_130(activated):
    """Ctrl-C at the login Password prompt ends the process with exit status 130."""
    child = activated.spawn("login")
    answer(child, "User name: ", USERNAME)
    ctrl_c_at_secret(child, "Password: ")
    assert finish(child) == 130
    assert INVALID not in screen(child)
    assert [e["event"] for e in activated.events()] == ["activation"]


def test_ctrl_c_during_activation_stores_nothing(device):
    """Ctrl-C at `Password again` exits 130 and leaves the device Public with no activation."""
    child = device.spawn("activate")
    answer(child, "User name: ", USERNAME)
    answer(child, "Full name: ", FULL_NAME)
    answer(child, "E-mail address: ", EMAIL)
    answer_secret(child, "Password: ", PASSWORD)
    ctrl_c_at_secret(child, "Password again: ")
    assert finish(child) == 130
    device.assert_nothing_stored()


def test_ctrl_c_at_user_name_exits_130(activated):
    """Ctrl-C at the User name prompt also exits 130."""
    child = activated.spawn("login")
    child.expect_exact("User name: ")
    child.sendintr()
    assert finish(child) == 130


def test_echo_probe_detects_echo_off(device):
    """Control for the echo checks: with `stty -echo` the shell does not echo the typed command."""
    sh = device.shell()
    sh.sendline("stty -echo")
    sh.expect_exact("PROMPT$ ")
    sh.sendline("echo MARK_$((40+2))")
    sh.expect_exact("MARK_42")
    assert "echo MARK_" not in sh.before
    sh.sendline("stty echo")
    sh.expect_exact("PROMPT$ ")
    assert shell_echo_works(sh)


def shell_at_login_password(device):
    """A shell on a pty running `accounts login`, waiting at the password prompt with echo off."""
    sh = device.shell()
    run_in_shell(sh, "login")
    sh.expect_exact("User name: ")
    sh.sendline(USERNAME)
    sh.expect_exact("Password: ")
    assert sh.waitnoecho(timeout=5)
    return sh


def test_echo_restored_after_ctrl_c(activated):
    """After Ctrl-C at the password prompt (exit 130) the shell's terminal echoes again."""
    sh = shell_at_login_password(activated)
    sh.sendintr()
    sh.expect_exact("RC=130")
    sh.expect_exact("PROMPT$ ")
    assert shell_echo_works(sh)


def test_echo_restored_after_normal_run(activated):
    """After a successful login the shell's terminal echoes again."""
    sh = shell_at_login_password(activated)
    sh.sendline(PASSWORD)
    sh.expect_exact(WELCOME)
    sh.expect_exact("RC=0")
    sh.expect_exact("PROMPT$ ")
    assert shell_echo_works(sh)
    assert PASSWORD not in sh.logfile_read.getvalue()


def test_echo_restored_after_ctrl_d_at_password(device):
    """Ctrl-D at the activation Password prompt exits 1 and the shell's terminal echoes again."""
    sh = device.shell()
    run_in_shell(sh, "activate")
    for prompt, text in (("User name: ", USERNAME), ("Full name: ", FULL_NAME),
                         ("E-mail address: ", EMAIL)):
        sh.expect_exact(prompt)
        sh.sendline(text)
    sh.expect_exact("Password: ")
    assert sh.waitnoecho(timeout=5)
    sh.sendeof()
    sh.expect_exact(INPUT_ENDED)
    sh.expect_exact("RC=1")
    sh.expect_exact("PROMPT$ ")
    assert shell_echo_works(sh)
    device.assert_nothing_stored()


def test_ctrl_d_at_prompt_cancels(device):
    """Ctrl-D at a text prompt cancels with the input-ended message, exit 1, nothing stored."""
    child = device.spawn("activate")
    answer(child, "User name: ", USERNAME)
    child.expect_exact("Full name: ")
    child.sendeof()
    assert finish(child) == 1
    # The sentence is on a line of its own, not run onto the prompt.
    assert screen(child).endswith("Full name: \n" + INPUT_ENDED + "\n")
    device.assert_nothing_stored()


def test_ctrl_d_at_login_password(activated):
    """Ctrl-D at the login Password prompt exits 1 and records no login."""
    child = activated.spawn("login")
    answer(child, "User name: ", USERNAME)
    child.expect_exact("Password: ")
    assert child.waitnoecho(timeout=5)
    child.sendeof()
    assert finish(child) == 1
    assert screen(child).endswith(
        "Password: \nInput ended before the login was complete; you are not logged in.\n")
    assert [e["event"] for e in activated.events()] == ["activation"]


# The bare `accounts` command.

def test_bare_public_device_walks_all_screens(device):
    """Bare accounts on a Public device: activation question, form, `Log in to continue.`, login, Home."""
    child = device.spawn(fast=False)
    child.expect_exact("This device is not activated yet.")
    answer(child, "Activate now? [Y/n] ", "")
    fill_form(child)
    child.expect_exact("Log in to continue.")
    answer(child, "User name: ", USERNAME)
    answer_secret(child, "Password: ", PASSWORD)
    assert finish(child) == 0
    assert screen(child) == (
        "This device is not activated yet.\nActivate now? [Y/n] \n" + FORM_TRANSCRIPT
        + "Device activated for alice.\nLog in to continue.\nUser name: alice\nPassword: \n"
        + WELCOME + "\n")
    assert device.status()["state"] == "Activated"
    assert device.stored_hash().startswith("pbkdf2_sha256$1200000$")


def test_bare_answer_y(device):
    """`y` at the activation question also starts the form."""
    child = device.spawn()
    answer(child, "Activate now? [Y/n] ", "y")
    fill_form(child)
    answer(child, "User name: ", USERNAME)
    answer_secret(child, "Password: ", PASSWORD)
    child.expect_exact(WELCOME)
    assert finish(child) == 0


def test_bare_answer_n_cancels(device):
    """`n` at the activation question cancels: exit 1, nothing stored."""
    child = device.spawn()
    answer(child, "Activate now? [Y/n] ", "n")
    assert finish(child) == 1
    assert screen(child) == (
        "This device is not activated yet.\nActivate now? [Y/n] n\n"
        "Activation cancelled; nothing was stored.\n")
    device.assert_nothing_stored()


def test_bare_unclear_answer_asks_again(device):
    """At a terminal an unclear answer to the activation question asks it again."""
    child = device.spawn()
    answer(child, "Activate now? [Y/n] ", "maybe")
    answer(child, "Activate now? [Y/n] ", "no")
    assert finish(child) == 1
    assert screen(child).endswith("Activation cancelled; nothing was stored.\n")


def test_bare_ctrl_c_at_question(device):
    """Ctrl-C at the activation question exits 130 with nothing stored."""
    child = device.spawn()
    child.expect_exact("Activate now? [Y/n] ")
    child.sendintr()
    assert finish(child) == 130
    device.assert_nothing_stored()


def test_bare_activated_device_goes_to_login(activated):
    """Bare accounts on an activated device goes straight to the login prompts."""
    child = activated.spawn()
    answer(child, "User name: ", USERNAME)
    answer_secret(child, "Password: ", PASSWORD)
    assert finish(child) == 0
    assert screen(child) == f"User name: alice\nPassword: \n{WELCOME}\n"


def test_bare_three_attempts_at_terminal(activated):
    """At a terminal bare accounts allows 3 login attempts, then exits 1."""
    child = activated.spawn()
    for _ in range(3):
        answer(child, "User name: ", USERNAME)
        answer_secret(child, "Password: ", WRONG_PASSWORD)
    assert finish(child) == 1
    assert screen(child) == f"User name: alice\nPassword: \n{INVALID}\n" * 3
    assert WRONG_PASSWORD not in child.logfile_read.getvalue()


def test_bare_third_attempt_succeeds(activated):
    """A right password on the third attempt reaches Home, which counts the 2 failures since
    activation (there was no login before them)."""
    child = activated.spawn()
    for password in (WRONG_PASSWORD, "another wrong guess", PASSWORD):
        answer(child, "User name: ", USERNAME)
        answer_secret(child, "Password: ", password)
    assert finish(child) == 0
    text = screen(child)
    assert text.count(INVALID) == 2
    assert text.endswith(f"{INVALID}\nUser name: alice\nPassword: \n{WELCOME}\n"
                         "2 failed attempts since activation\n")


def test_locked_name_is_told_before_the_password(activated):
    """At a terminal a locked name is refused right after the user name: no Password prompt."""
    for _ in range(5):
        activated.login(USERNAME, WRONG_PASSWORD)
    child = activated.spawn("login")
    child.expect_exact("User name: ")
    child.sendline(USERNAME)
    assert finish(child) == 4
    shown = screen(child)
    assert TOO_MANY in shown and "Password" not in shown


def test_terminal_names_the_empty_fields(device):
    child = device.spawn("activate")
    for prompt, text in (("User name: ", USERNAME), ("Full name: ", ""), ("E-mail address: ", "")):
        child.expect_exact(prompt)
        child.sendline(text)
    for prompt in ("Password: ", "Password again: "):
        child.expect_exact(prompt)
        child.sendline(PASSWORD)
    child.expect_exact("Please fill all fields!\r\nEmpty: Full name, E-mail address.\r\n")
    child.expect_exact(f"User name [{USERNAME}]: ")
    child.sendeof()
    assert finish(child) == 1
