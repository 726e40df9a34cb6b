"""`accounts user list` and `user show` (text and JSON), and `reset` over several accounts."""

import json
import re

import pytest

from conftest import (BOB, BOB_EMAIL, BOB_FULL_NAME, BOB_PASSWORD, EMAIL, FULL_NAME, NEW_PASSWORD,
                      USERNAME, WRONG_PASSWORD, answer, finish, screen, store_execute)
from userhelp import NO_SUCH, kinds, lock, public_again


ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
JSON_KEYS = ["username", "fullName", "email", "owner", "disabled", "locked", "lockedUntil",
             "mustChangePassword", "failures", "createdAt", "lastLogin", "expiresAt", "expired",
             "groups", "uid", "home", "shell"]


# user list

def test_list_text(activated):
    """user list: a header line, then one line per account ordered by user name key, with the
    status words and `never` or the last login's UTC time."""
    activated.add_user("Zed", "Zed Zebra", "zed@example.org", NEW_PASSWORD)
    activated.add_user()
    activated.add_user("Carol", "Carol Danvers", "carol@example.org", "violet harbor lantern quietly")
    assert activated.login().code == 0
    result = activated.run("user", "list")
    assert (result.code, result.stderr) == (0, "")
    header, *rows = result.out_lines
    assert re.match(r"^USER NAME +FULL NAME +E-MAIL +STATUS +LAST LOGIN$", header), header
    assert [row.split()[0] for row in rows] == ["alice", "bob", "Carol", "Zed"]
    alice, bob, carol, zed = rows
    assert FULL_NAME in alice and EMAIL in alice
    assert alice.split()[-2] == "owner" and ISO_UTC.match(alice.split()[-1]), alice
    assert bob.split()[-2:] == ["-", "never"], bob
    assert "Carol Danvers" in carol and "carol@example.org" in carol


def test_list_status_words(activated):
    """STATUS joins owner, disabled, locked, must-change in that order, `-` when none applies."""
    activated.add_user()
    activated.add_user("carol", "Carol Danvers", "carol@example.org", "violet harbor lantern quietly")
    assert activated.run("user", "disable", BOB).code == 0
    assert activated.run("user", "passwd", BOB, "--must-change", "--password-stdin",
                         input=NEW_PASSWORD + "\n").code == 0
    lock(activated, BOB)
    lock(activated, USERNAME)
    rows = activated.run("user", "list").out_lines[1:]
    statuses = {row.split()[0]: row.split()[-2] for row in rows}
    assert statuses == {"alice": "owner,locked", "bob": "disabled,locked,must-change",
                        "carol": "-"}


def test_list_json_keys_and_values(activated):
    """user list --json: no header, one parseable object per line, every key present in order."""
    activated.add_user()
    assert activated.login().code == 0
    assert activated.login(BOB, WRONG_PASSWORD).code == 1
    assert activated.login(BOB, WRONG_PASSWORD).code == 1
    result = activated.run("user", "list", "--json")
    assert (result.code, result.stderr) == (0, "")
    assert len(result.out_lines) == 2
    alice, bob = [json.loads(line) for line in result.out_lines]
    assert list(alice) == JSON_KEYS and list(bob) == JSON_KEYS
    assert ISO_UTC.match(alice["createdAt"]) and ISO_UTC.match(alice["lastLogin"])
    assert ISO_UTC.match(bob["createdAt"])
    assert {k: v for k, v in alice.items() if k not in ("createdAt", "lastLogin")} == {
        "username": USERNAME, "fullName": FULL_NAME, "email": EMAIL, "owner": True,
        "disabled": False, "locked": False, "lockedUntil": None, "mustChangePassword": False,
        "failures": 0, "expiresAt": None, "expired": False, "groups": [], "uid": None,
        "home": f"/home/{USERNAME}", "shell": "/bin/bash"}
    assert {k: v for k, v in bob.items() if k != "createdAt"} == {
        "username": BOB, "fullName": BOB_FULL_NAME, "email": BOB_EMAIL, "owner": False,
        "disabled": False, "locked": False, "lockedUntil": None, "mustChangePassword": False,
        "failures": 2, "lastLogin": None, "expiresAt": None, "expired": False, "groups": [],
        "uid": None, "home": f"/home/{BOB}", "shell": "/bin/bash"}


def test_list_json_locked_and_disabled(activated):
    """A locked account has locked true and lockedUntil a UTC time; disabled and mustChange show."""
    activated.add_user()
    lock(activated, BOB)
    assert activated.run("user", "disable", BOB).code == 0
    assert activated.run("user", "passwd", BOB, "--must-change", "--password-stdin",
                         input=NEW_PASSWORD + "\n").code == 0
    bob = activated.accounts()[1]
    assert list(bob) == JSON_KEYS
    assert (bob["locked"], bob["disabled"], bob["mustChangePassword"]) == (False, True, True)
    lock(activated, BOB, NEW_PASSWORD)
    bob = activated.accounts()[1]
    assert bob["locked"] is True and ISO_UTC.match(bob["lockedUntil"]), bob


@pytest.mark.parametrize("args", [["user", "list"], ["user", "list", "--json"]],
                         ids=["text", "json"])
@pytest.mark.empty_database
def test_list_public_device_prints_nothing(device, args):
    """On a Public device, with or without a database, user list prints nothing, exit 0."""
    result = device.run(*args)
    assert (result.code, result.stdout, result.stderr) == (0, "", "")
    assert not device.db.exists()
    public_again(device)
    result = device.run(*args)
    assert (result.code, result.stdout, result.stderr) == (0, "", "")


# user show

def test_show_text(activated):
    """user show prints the fourteen lines of one account on stdout, exit 0 (the last four: its
    expiry, its groups, its second factor and its live sessions)."""
    activated.add_user()
    result = activated.run("user", "show", BOB)
    assert (result.code, result.stderr) == (0, "")
    lines = result.out_lines
    assert len(lines) == 17, lines
    assert lines[:8] == [
        "User name: bob", "Full name: Bob Builder", "E-mail address: bob@example.org",
        "Owner: no", "Disabled: no", "Must change password: no", "Locked: no", "Failed logins: 0"]
    assert re.fullmatch(r"Created: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", lines[8]), lines[8]
    assert lines[9] == "Last login: never"
    assert lines[10:] == ["Expires: never", "Groups: -",
                          "UID: - (given with its first user record)", "Home: /home/bob",
                          "Shell: /bin/bash", "Two-factor: off", "Sessions: 0"]


def test_show_owner_disabled_locked(activated):
    """show says `Owner: yes` for the owner; `Disabled: since <ts>`, `Locked: until <ts>` and the
    last login's time for a disabled, locked account."""
    assert "Owner: yes" in activated.run("user", "show", USERNAME).out_lines
    activated.add_user()
    assert activated.login(BOB, BOB_PASSWORD).code == 0
    lock(activated, BOB)
    assert activated.run("user", "disable", BOB).code == 0
    result = activated.run("user", "show", BOB)
    assert (result.code, result.stderr) == (0, "")
    fields = dict(line.split(": ", 1) for line in result.out_lines)
    assert fields["Owner"] == "no"
    assert re.fullmatch(r"since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", fields["Disabled"])
    assert re.fullmatch(r"until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", fields["Locked"])
    assert ISO_UTC.match(fields["Last login"]), fields


def test_show_failed_logins(activated):
    """`Failed logins: N` counts the wrong passwords since the last success."""
    for _ in range(3):
        assert activated.login(USERNAME, WRONG_PASSWORD).code == 1
    assert "Failed logins: 3" in activated.run("user", "show", USERNAME).out_lines


def test_show_json_is_the_list_object(activated):
    """user show --json prints the same object as that account's line of list --json."""
    activated.add_user()
    assert activated.login(BOB, WRONG_PASSWORD).code == 1
    result = activated.run("user", "show", BOB, "--json")
    assert (result.code, result.stderr) == (0, "")
    assert len(result.out_lines) == 1
    assert result.out_lines[0] == activated.run("user", "list", "--json").out_lines[1]
    assert list(json.loads(result.stdout)) == JSON_KEYS


def test_show_name_is_case_insensitive(activated):
    """user show finds an account by its user name key, as login does."""
    result = activated.run("user", "show", "ALICE")
    assert result.code == 0
    assert result.out_lines[0] == "User name: alice"


@pytest.mark.parametrize("args", [
    ["user", "show", "mallory"], ["user", "show", "mallory", "--json"],
    ["user", "edit", "mallory", "--full-name", "Mal"], ["user", "disable", "mallory"],
    ["user", "enable", "mallory"], ["user", "remove", "mallory", "--yes"],
    ["user", "passwd", "mallory", "--password-stdin"]],
    ids=["show", "show-json", "edit", "disable", "enable", "remove", "passwd"])
def test_unknown_account_exits_5(activated, args):
    """Every `user` command naming no account says `No account named mallory.`, exit 5, and
    changes nothing."""
    result = activated.run(*args, input=NEW_PASSWORD + "\n")
    assert (result.code, result.stdout, result.stderr) == (
        NO_SUCH, "", "No account named mallory.\n")
    assert kinds(activated) == ["activation"]


# Several accounts and reset.

def test_reset_deletes_every_account(activated):
    """reset --yes deletes every account; after a new activation only the new owner exists."""
    activated.add_user()
    result = activated.run("reset", "--yes")
    assert (result.code, result.stdout, result.stderr) == (
        0, "Device reset: it is Public again and its accounts were deleted.\n", "")
    assert activated.query("SELECT count(*) FROM account") == [(0,)]
    assert activated.run("user", "list").stdout == ""
    activated.activate(BOB, BOB_FULL_NAME, BOB_EMAIL, BOB_PASSWORD)
    assert [(a["username"], a["owner"]) for a in activated.accounts()] == [(BOB, True)]
    assert activated.login().code == 1


def test_reset_warning_counts_accounts(activated):
    """At a terminal the reset warning counts the accounts."""
    activated.add_user()
    activated.add_user("carol", "Carol Danvers", "carol@example.org", "violet harbor lantern quietly")
    child = activated.spawn("reset")
    answer(child, 'Type "reset" to confirm: ', "no")
    assert finish(child) == 1
    assert screen(child).startswith(
        "This deletes every account (3) and makes this device Public again.\n")
    assert len(activated.accounts()) == 3


def test_account_list_and_show_escape_a_tampered_user_name(activated):
    """A user name with an escape sequence, written into the database behind the program's back,
    is shown escaped by `user list` and `user show`."""
    store_execute(activated.db, "UPDATE account SET username = ?", "al\x1b[2Jice")
    for args in (("user", "list"), ("user", "show", "alice")):
        result = activated.run(*args)
        assert result.code == 0, result
        assert "al\\u{1b}[2Jice" in result.stdout, result.stdout
        assert "\x1b" not in result.stdout + result.stderr
