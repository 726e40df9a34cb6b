"""`accounts user remove`: confirmed with --yes or at a terminal, the owner, the last account."""

from conftest import BOB, BOB_PASSWORD, INVALID, USERNAME, WRONG_PASSWORD, answer, finish, screen
from userhelp import NO_SUCH


REMOVE_REFUSED = ("Refusing to remove an account without confirmation: run it at a terminal or "
                  "pass --yes.\n")


# user remove

def test_remove_yes(activated):
    """remove --yes deletes the account: `Account removed: bob.`, event account_removed, and the
    name no longer logs in or shows."""
    activated.add_user()
    result = activated.run("user", "remove", BOB, "--yes")
    assert (result.code, result.stdout, result.stderr) == (0, "Account removed: bob.\n", "")
    assert activated.login(BOB, BOB_PASSWORD).stderr == INVALID + "\n"
    assert activated.run("user", "show", BOB).code == NO_SUCH
    assert [a["username"] for a in activated.accounts()] == [USERNAME]
    assert (activated.events()[2]["event"], activated.events()[2]["user"]) == (
        "account_removed", BOB)


def test_remove_from_pipe_without_yes_refuses(activated):
    """From a pipe without --yes, remove refuses even when `remove` is piped in: exit 1, kept."""
    activated.add_user()
    result = activated.run("user", "remove", BOB, input="remove\n")
    assert (result.code, result.stdout, result.stderr) == (1, "", REMOVE_REFUSED)
    assert [a["username"] for a in activated.accounts()] == [USERNAME, BOB]


def test_remove_at_terminal_wrong_word(activated):
    """At a terminal anything but `remove` cancels: the exact transcript, exit 1, account kept."""
    activated.add_user()
    child = activated.spawn("user", "remove", BOB)
    answer(child, 'Type "remove" to confirm: ', "yes")
    assert finish(child) == 1
    assert screen(child) == (
        "This deletes the account bob.\n"
        'Type "remove" to confirm: yes\n'
        "Removal cancelled; nothing was changed.\n")
    assert [a["username"] for a in activated.accounts()] == [USERNAME, BOB]


def test_remove_at_terminal_confirmed(activated):
    """At a terminal typing `remove` removes the account, exit 0."""
    activated.add_user()
    child = activated.spawn("user", "remove", BOB)
    answer(child, 'Type "remove" to confirm: ', "remove")
    assert finish(child) == 0
    assert screen(child) == (
        "This deletes the account bob.\n"
        'Type "remove" to confirm: remove\n'
        "Account removed: bob.\n")
    assert [a["username"] for a in activated.accounts()] == [USERNAME]


def test_remove_at_terminal_end_of_input(activated):
    """At a terminal Ctrl-D at the remove question cancels: exit 1, on a line of its own, the
    account kept."""
    activated.add_user()
    child = activated.spawn("user", "remove", BOB)
    child.expect_exact('Type "remove" to confirm: ')
    child.sendeof()
    assert finish(child) == 1
    assert screen(child).startswith('This deletes the account bob.\nType "remove" to confirm: \n')
    assert [a["username"] for a in activated.accounts()] == [USERNAME, BOB]


def test_remove_at_terminal_ctrl_c(activated):
    """Ctrl-C at the remove question exits 130 and removes nothing."""
    activated.add_user()
    child = activated.spawn("user", "remove", BOB)
    child.expect_exact('Type "remove" to confirm: ')
    child.sendintr()
    assert finish(child) == 130
    assert [a["username"] for a in activated.accounts()] == [USERNAME, BOB]


def test_remove_owner_while_others_exist(activated):
    """The owner cannot be removed while another account exists: exit 1, both kept."""
    activated.add_user()
    result = activated.run("user", "remove", USERNAME, "--yes")
    assert (result.code, result.stdout, result.stderr) == (
        1, "", "alice owns this device; first move ownership with "
               "`accounts user edit OTHER --owner`.\n")
    assert [a["username"] for a in activated.accounts()] == [USERNAME, BOB]


def test_remove_last_account(activated):
    """The last account cannot be removed: the sentence points to reset, exit 1, still
    Activated."""
    result = activated.run("user", "remove", USERNAME, "--yes")
    assert (result.code, result.stdout, result.stderr) == (
        1, "", "alice is the last account; run `accounts reset` to make the device Public "
               "instead.\n")
    assert activated.status()["state"] == "Activated"
    assert activated.login().code == 0


def test_remove_deletes_the_failed_login_tally(activated):
    """Removing an account deletes its failed-login tally: a new bob starts at 0 failures."""
    activated.add_user()
    for _ in range(3):
        assert activated.login(BOB, WRONG_PASSWORD).code == 1
    assert activated.account(BOB)["failures"] == 3
    assert activated.run("user", "remove", BOB, "--yes").code == 0
    assert activated.query("SELECT count(*) FROM login_throttle WHERE username_key = 'bob'") == [
        (0,)]
    activated.add_user()
    assert activated.account(BOB)["failures"] == 0
