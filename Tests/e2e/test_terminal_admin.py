"""The account commands that ask nothing, run at a terminal as a person types them: the same
answers and exit codes as through a pipe, and `verify` reading its password with echo off."""

import json

import pytest

from conftest import BOB, BOB_PASSWORD, PASSWORD, answer_secret, finish, screen

# The front end: the same code on either store, so these run once, in the sqlite run.
pytestmark = pytest.mark.front_end


def at_terminal(device, *args):
    """Runs `accounts ARGS` on a pseudo-terminal; returns (exit code, what the screen showed)."""
    child = device.spawn(*args)
    return finish(child), screen(child)


@pytest.fixture
def two(activated):
    activated.add_user()
    return activated


def test_user_list_at_terminal(two):
    """`user list` at a terminal: the header and one line per account, as through a pipe."""
    code, shown = at_terminal(two, "user", "list")
    piped = two.run("user", "list")
    assert code == 0 and piped.code == 0
    assert shown == piped.stdout
    lines = shown.splitlines()
    assert lines[0].split()[:3] == ["USER", "NAME", "FULL"]
    assert [line.split()[0] for line in lines[1:]] == ["alice", BOB]
    assert "owner" in lines[1]


def test_user_list_json_and_show_at_terminal(two):
    """`user list --json` and `user show --json` at a terminal print the same objects."""
    code, shown = at_terminal(two, "user", "list", "--json")
    assert code == 0
    objects = [json.loads(line) for line in shown.splitlines()]
    assert [o["username"] for o in objects] == ["alice", BOB]
    code, shown = at_terminal(two, "user", "show", BOB, "--json")
    assert code == 0 and json.loads(shown) == objects[1]


def test_user_show_unknown_at_terminal(two):
    """An unknown account at a terminal: one sentence and exit 5."""
    code, shown = at_terminal(two, "user", "show", "nobody")
    assert (code, shown) == (5, "No account named nobody.\n")


@pytest.mark.parametrize("args,said", [
    (("user", "edit", BOB, "--full-name", "Robert Builder"), f"Account edited: {BOB}.\n"),
    (("user", "edit", BOB, "--owner"), f"Ownership moved to {BOB}.\n"),
    (("user", "disable", BOB), f"Account disabled: {BOB}.\n"),
    (("user", "enable", BOB), f"{BOB} is not disabled; nothing changed.\n"),
    (("unlock", BOB), f"{BOB} was not locked and had no failed logins; nothing to clear.\n"),
])
def test_changes_at_terminal(two, args, said):
    """Each administrator change at a terminal says one sentence and exits 0."""
    assert at_terminal(two, *args) == (0, said)


def test_verify_at_terminal_reads_with_echo_off(two):
    """`verify` at a terminal reads the password with echo off and prints nothing more."""
    child = two.spawn("verify", "--username", BOB, "--password-stdin")
    answer_secret(child, "Password: ", BOB_PASSWORD)
    assert finish(child) == 0
    assert BOB_PASSWORD not in screen(child)
    assert screen(child) == "Password: \n"
    child = two.spawn("verify", "--username", BOB, "--password-stdin")
    answer_secret(child, "Password: ", PASSWORD)
    assert finish(child) == 1
    assert screen(child) == "Password: \n"


def test_log_filters_at_terminal(two):
    """`log` with filters at a terminal shows the matching events, as through a pipe."""
    code, shown = at_terminal(two, "log", "--user", "BOB", "--event", "account_added")
    assert code == 0
    lines = shown.splitlines()
    assert len(lines) == 1 and "account_added" in lines[0] and BOB in lines[0]
    code, shown = at_terminal(two, "log", "--since", "2026-02-30")
    assert code == 2 and "--since must be" in shown
