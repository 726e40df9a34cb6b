"""`accounts user edit` (names, e-mail, ownership) and `user disable` / `user enable`."""

import pytest

from conftest import (BOB, BOB_FULL_NAME, BOB_PASSWORD, EMAIL, EMAIL_RULE, FILL, FULL_NAME, INVALID,
                      TOO_MANY, USERNAME, USERNAME_RULE, WRONG_PASSWORD)
from userhelp import BOB_WELCOME, NO_SUCH, kinds


# user edit

def test_edit_without_flag_is_a_usage_error(activated):
    """user edit NAME with no flag is a usage error, exit 2, nothing changed."""
    result = activated.run("user", "edit", USERNAME)
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr.strip() != ""
    assert kinds(activated) == ["activation"]


def test_edit_full_name(activated):
    """--full-name changes the name Home shows; `Account edited: alice.`; event detail `full name`."""
    result = activated.run("user", "edit", USERNAME, "--full-name", "Alice P. Liddell")
    assert (result.code, result.stdout, result.stderr) == (0, "Account edited: alice.\n", "")
    assert activated.login().stdout == "Welcome back Alice P. Liddell!\n"
    event = activated.events()[1]
    assert (event["event"], event["user"], event["detail"]) == (
        "account_edited", USERNAME, "full name")


def test_edit_two_fields(activated):
    """--full-name and --email together: one line, one event whose detail lists both fields."""
    activated.add_user()
    result = activated.run("user", "edit", BOB, "--full-name", "Robert Builder",
                           "--email", "robert@example.org")
    assert (result.code, result.stdout, result.stderr) == (0, "Account edited: bob.\n", "")
    shown = activated.account(BOB)
    assert (shown["fullName"], shown["email"]) == ("Robert Builder", "robert@example.org")
    assert activated.events()[-1]["detail"] == "full name, e-mail"


def test_edit_same_values_changes_nothing(activated):
    """Values equal to the stored ones: `Nothing to change for alice.`, exit 0, no event."""
    result = activated.run("user", "edit", USERNAME, "--full-name", FULL_NAME, "--email", EMAIL)
    assert (result.code, result.stdout, result.stderr) == (
        0, "Nothing to change for alice.\n", "")
    assert kinds(activated) == ["activation"]


def test_edit_rename(activated):
    """--username renames: `Account edited: robert.` (the new name); the new name logs in, the old
    one no longer does, and the event says `user name bob -> robert`."""
    activated.add_user()
    result = activated.run("user", "edit", BOB, "--username", "robert")
    assert (result.code, result.stderr) == (0, "")
    assert result.stdout == "Account edited: robert.\n"
    assert activated.login("robert", BOB_PASSWORD).stdout == BOB_WELCOME
    assert activated.login(BOB, BOB_PASSWORD).stderr == INVALID + "\n"
    assert activated.run("user", "show", BOB).code == NO_SUCH
    edited = [e for e in activated.events() if e["event"] == "account_edited"]
    assert len(edited) == 1 and edited[0]["detail"] == "user name bob -> robert"


@pytest.mark.parametrize("new", ["alice", "ALICE"])
def test_edit_rename_to_taken_name(activated, new):
    """Renaming to a name whose key is taken is refused, exit 1, nothing changed."""
    activated.add_user()
    result = activated.run("user", "edit", BOB, "--username", new)
    assert (result.code, result.stdout, result.stderr) == (
        1, "", f"User name {new} is already taken!\n")
    assert [a["username"] for a in activated.accounts()] == [USERNAME, BOB]


@pytest.mark.parametrize("flag, value, message", [
    ("--full-name", "", FILL), ("--email", "  ", FILL), ("--username", "", FILL),
    ("--email", "bob.example.org", EMAIL_RULE), ("--username", "bob builder", USERNAME_RULE)],
    ids=["empty-full-name", "blank-email", "empty-user-name", "bad-email", "bad-user-name"])
def test_edit_field_rules(activated, flag, value, message):
    """edit applies the form's field rules; an empty value is `Please fill all fields!`; exit 1."""
    activated.add_user()
    result = activated.run("user", "edit", BOB, flag, value)
    assert (result.code, result.stdout) == (1, "")
    assert result.err_lines[0] == message, result.stderr
    assert activated.account(BOB)["fullName"] == BOB_FULL_NAME
    assert kinds(activated) == ["activation", "account_added"]


def test_edit_owner_moves_ownership(activated):
    """--owner moves ownership: `Ownership moved to bob.`, event ownership_moved; then alice may
    be removed and bob may not."""
    activated.add_user()
    result = activated.run("user", "edit", BOB, "--owner")
    assert (result.code, result.stdout, result.stderr) == (0, "Ownership moved to bob.\n", "")
    assert {a["username"]: a["owner"] for a in activated.accounts()} == {
        USERNAME: False, BOB: True}
    assert kinds(activated)[-1] == "ownership_moved"
    assert activated.run("user", "show", BOB).out_lines[3] == "Owner: yes"
    assert activated.run("user", "remove", USERNAME, "--yes").stdout == "Account removed: alice.\n"


def test_edit_owner_of_the_owner_changes_nothing(activated):
    """--owner on the owner: `Nothing to change for alice.`, exit 0, no event."""
    result = activated.run("user", "edit", USERNAME, "--owner")
    assert (result.code, result.stdout, result.stderr) == (
        0, "Nothing to change for alice.\n", "")
    assert kinds(activated) == ["activation"]


def test_edit_fields_and_owner_together(activated):
    """A field and --owner at once print both sentences and log both events."""
    activated.add_user()
    result = activated.run("user", "edit", BOB, "--full-name", "Robert Builder", "--owner")
    assert (result.code, result.stderr) == (0, "")
    assert result.out_lines == ["Account edited: bob.", "Ownership moved to bob."]
    assert sorted(kinds(activated)[-2:]) == ["account_edited", "ownership_moved"]


# user disable / enable

def test_disable_and_enable(activated):
    """disable then enable: the exact sentences, the events, and login refused then allowed."""
    activated.add_user()
    result = activated.run("user", "disable", BOB)
    assert (result.code, result.stdout, result.stderr) == (0, "Account disabled: bob.\n", "")
    assert activated.account(BOB)["disabled"] is True
    result = activated.run("user", "enable", BOB)
    assert (result.code, result.stdout, result.stderr) == (0, "Account enabled: bob.\n", "")
    assert activated.account(BOB)["disabled"] is False
    assert activated.login(BOB, BOB_PASSWORD).stdout == BOB_WELCOME
    assert [(e["event"], e["user"]) for e in activated.events()][2:4] == [
        ("account_disabled", BOB), ("account_enabled", BOB)]


def test_disable_twice_and_enable_twice(activated):
    """Disabling a disabled account or enabling an enabled one says nothing changed, no event."""
    activated.add_user()
    result = activated.run("user", "enable", BOB)
    assert (result.code, result.stdout, result.stderr) == (
        0, "bob is not disabled; nothing changed.\n", "")
    assert activated.run("user", "disable", BOB).code == 0
    result = activated.run("user", "disable", BOB)
    assert (result.code, result.stdout, result.stderr) == (
        0, "bob is already disabled; nothing changed.\n", "")
    assert kinds(activated) == ["activation", "account_added", "account_disabled"]


def test_disabled_login_looks_like_a_wrong_password(activated):
    """A disabled account's right password gets `Invalid user name or password!`, exit 1,
    byte-identical to a wrong password; the log says `account disabled`."""
    activated.add_user()
    assert activated.run("user", "disable", BOB).code == 0
    disabled = activated.login(BOB, BOB_PASSWORD)
    assert (disabled.code, disabled.stdout, disabled.stderr) == (1, "", INVALID + "\n")
    last = activated.events()[-1]
    assert (last["event"], last["user"], last["detail"]) == (
        "login_failure", BOB, "account disabled")
    wrong = activated.login(USERNAME, WRONG_PASSWORD)
    assert (wrong.code, wrong.stdout, wrong.stderr) == (disabled.code, disabled.stdout,
                                                        disabled.stderr)


def test_disabled_login_counts_toward_lockout(activated):
    """Five logins of a disabled account, right password each time, lock the name: exit 4."""
    activated.add_user()
    assert activated.run("user", "disable", BOB).code == 0
    results = [activated.login(BOB, BOB_PASSWORD) for _ in range(5)]
    assert [r.code for r in results] == [1, 1, 1, 1, 4]
    assert TOO_MANY in results[-1].stderr
    assert activated.account(BOB)["locked"] is True
