"""`accounts user add`: the form from a pipe, flags and a terminal, its rules and refusals."""

import pytest

from conftest import (BOB, BOB_EMAIL, BOB_FULL_NAME, BOB_PASSWORD, EMAIL_RULE, FILL, FULL_NAME,
                      INPUT_ENDED, MATCH, NOT_ACTIVATED, PERSONAL, SHORT, USERNAME, USERNAME_RULE,
                      answer, answer_secret, finish, form, screen)
from userhelp import BOB_WELCOME, kinds, public_again


# Said at a terminal before the first password, as in the Activation Form.
RULES = ("Choose a password of 15 to 1,024 characters (a few unrelated words work well); not "
         "your user name, name or e-mail, not easy to guess (a common password, a keyboard row, a "
         "repeat, a run like 12345, a date), not on the administrator's list.")


def bob_lines(username=BOB, full_name=BOB_FULL_NAME, email=BOB_EMAIL, password=BOB_PASSWORD,
              again=None):
    """Five lines of standard input for `accounts user add`."""
    return form(username, full_name, email, password, again)


# user add

def test_add_from_pipe(activated):
    """Five lines on a pipe add an account: `Account added: bob.` on stdout, nothing on stderr,
    and both accounts can log in."""
    result = activated.run("user", "add", input=bob_lines())
    assert (result.code, result.stdout, result.stderr) == (0, "Account added: bob.\n", "")
    assert activated.login(BOB, BOB_PASSWORD).stdout == BOB_WELCOME
    assert activated.login().stdout == f"Welcome back {FULL_NAME}!\n"


def test_add_flags_skip_lines(activated):
    """--full-name skips its line; the other four fields come from stdin in the form's order."""
    result = activated.run("user", "add", "--full-name", BOB_FULL_NAME,
                           input=f"{BOB}\n{BOB_EMAIL}\n{BOB_PASSWORD}\n{BOB_PASSWORD}\n")
    assert (result.code, result.stdout, result.stderr) == (0, "Account added: bob.\n", "")
    assert activated.login(BOB, BOB_PASSWORD).stdout == BOB_WELCOME


def test_add_password_stdin(activated):
    """With every field a flag, --password-stdin reads one line, used for both password fields."""
    result = activated.run("user", "add", "--username", BOB, "--full-name", BOB_FULL_NAME,
                           "--email", BOB_EMAIL, "--password-stdin", input=BOB_PASSWORD + "\n")
    assert (result.code, result.stdout, result.stderr) == (0, "Account added: bob.\n", "")
    assert activated.login(BOB, BOB_PASSWORD).code == 0


def test_add_logs_account_added(activated):
    """Adding an account writes one account_added event naming it."""
    activated.add_user()
    assert [(e["event"], e["user"]) for e in activated.events()] == [
        ("activation", USERNAME), ("account_added", BOB)]


def test_add_on_public_device(device):
    """user add on a Public device says to activate first, exit 1, and adds nobody."""
    public_again(device)
    result = device.run("user", "add", input=bob_lines())
    assert (result.code, result.stdout, result.stderr) == (1, "", NOT_ACTIVATED + "\n")
    assert device.status()["state"] == "Public"
    assert "account_added" not in kinds(device)


@pytest.mark.empty_database
def test_add_without_database_creates_nothing(device):
    """user add where no database exists refuses, exit 1, and creates no file."""
    result = device.run("user", "add", input=bob_lines())
    assert (result.code, result.stdout) == (1, "")
    assert result.stderr != ""
    assert not device.db.exists()


@pytest.mark.parametrize("taken", ["alice", "ALICE", "Alice"])
def test_add_taken_name_case_insensitive(activated, taken):
    """A name whose key is taken, in any case, is refused with the name as typed, exit 1."""
    result = activated.run("user", "add", input=bob_lines(username=taken))
    assert (result.code, result.stdout, result.stderr) == (
        1, "", f"User name {taken} is already taken!\n")
    assert [a["username"] for a in activated.accounts()] == [USERNAME]


def test_add_taken_by_another_added_account(activated):
    """A second `Bob` after `bob` is refused too."""
    activated.add_user()
    result = activated.run("user", "add", input=bob_lines(username="Bob", email="b2@example.org"))
    assert (result.code, result.stderr) == (1, "User name Bob is already taken!\n")
    assert [a["username"] for a in activated.accounts()] == [USERNAME, BOB]


BAD_FORMS = [
    ("mismatch", bob_lines(again=BOB_PASSWORD + "!"), MATCH),
    ("empty-full-name", bob_lines(full_name=""), FILL + "\nEmpty: Full name."),
    ("empty-passwords", bob_lines(password="", again=""), FILL + "\nEmpty: Password, Password again."),
    ("bad-user-name", bob_lines(username="bob builder"), USERNAME_RULE),
    ("bad-email", bob_lines(email="bob.example.org"), EMAIL_RULE),
    ("short-password", bob_lines(password="short"), SHORT),
    ("password-is-own-name", bob_lines(password="bobbobbobbobbob"), PERSONAL),
    ("password-is-own-full-name", bob_lines(password="Bob Builder BOBBUILDER"), PERSONAL),
]


@pytest.mark.parametrize("stdin, message", [c[1:] for c in BAD_FORMS],
                         ids=[c[0] for c in BAD_FORMS])
def test_add_form_rules(activated, stdin, message):
    """user add applies the Activation Form's rules with its exact messages: exit 1, no account
    added, no event."""
    result = activated.run("user", "add", input=stdin)
    assert (result.code, result.stdout, result.stderr) == (1, "", message + "\n")
    assert [a["username"] for a in activated.accounts()] == [USERNAME]
    assert kinds(activated) == ["activation"]


def test_add_input_ends_early(activated):
    """Input ending before all fields were given adds nobody, exit 1, with the form's sentence."""
    result = activated.run("user", "add", input=f"{BOB}\n{BOB_FULL_NAME}\n")
    assert (result.code, result.stdout, result.stderr) == (1, "", INPUT_ENDED + "\n")
    assert [a["username"] for a in activated.accounts()] == [USERNAME]


def test_add_at_terminal(activated):
    """At a terminal user add shows the Activation Form's transcript: the five prompts in order,
    the password rules before the first password, the passwords with echo off and never shown,
    then `Account added: bob.`"""
    child = activated.spawn("user", "add")
    answer(child, "User name: ", BOB)
    answer(child, "Full name: ", BOB_FULL_NAME)
    answer(child, "E-mail address: ", BOB_EMAIL)
    answer_secret(child, "Password: ", BOB_PASSWORD)
    answer_secret(child, "Password again: ", BOB_PASSWORD)
    assert finish(child) == 0
    assert screen(child) == (
        f"User name: {BOB}\nFull name: {BOB_FULL_NAME}\nE-mail address: {BOB_EMAIL}\n"
        f"{RULES}\nPassword: \nPassword again: \nAccount added: bob.\n")
    assert BOB_PASSWORD not in child.logfile_read.getvalue()
    assert activated.login(BOB, BOB_PASSWORD).stdout == BOB_WELCOME


def test_add_at_terminal_reasks_after_mismatch(activated):
    """At a terminal a mismatch says `Passwords must match!` and asks again, as the Activation
    Form does; the second answer adds the account."""
    child = activated.spawn("user", "add")
    answer(child, "User name: ", BOB)
    answer(child, "Full name: ", BOB_FULL_NAME)
    answer(child, "E-mail address: ", BOB_EMAIL)
    answer_secret(child, "Password: ", BOB_PASSWORD)
    answer_secret(child, "Password again: ", BOB_PASSWORD + " but not")
    child.expect_exact(MATCH)
    answer(child, f"User name [{BOB}]: ", "")
    answer(child, f"Full name [{BOB_FULL_NAME}]: ", "")
    answer(child, f"E-mail address [{BOB_EMAIL}]: ", "")
    answer_secret(child, "Password: ", BOB_PASSWORD)
    answer_secret(child, "Password again: ", BOB_PASSWORD)
    child.expect_exact("Account added: bob.")
    assert finish(child) == 0
    assert BOB_PASSWORD not in child.logfile_read.getvalue()
    assert activated.login(BOB, BOB_PASSWORD).code == 0


def test_added_account_is_not_the_owner(activated):
    """An added account is not the owner; the activated one still is."""
    activated.add_user()
    owners = {a["username"]: a["owner"] for a in activated.accounts()}
    assert owners == {USERNAME: True, BOB: False}
