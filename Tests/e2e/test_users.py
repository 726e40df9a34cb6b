"""`accounts user ...`: the administrator's commands over several accounts."""

import json
import re

import pytest

from conftest import (BOB, BOB_EMAIL, BOB_FULL_NAME, BOB_PASSWORD, EMAIL, EMAIL_RULE, FILL,
                      FULL_NAME, INPUT_ENDED, INVALID, MATCH, NEW_PASSWORD, NOT_ACTIVATED,
                      PERSONAL, SHORT, TOO_MANY, USERNAME, USERNAME_RULE,
                      WRONG_PASSWORD, answer, answer_secret, ctrl_c_at_secret, finish, form, screen,
                      store_execute)

NO_SUCH = 5
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
BOB_WELCOME = f"Welcome back {BOB_FULL_NAME}!\n"
JSON_KEYS = ["username", "fullName", "email", "owner", "disabled", "locked", "lockedUntil",
             "mustChangePassword", "failures", "createdAt", "lastLogin"]
# Said at a terminal before the first password, as in the Activation Form.
RULES = ("Choose a password of 15 to 1,024 characters (a few unrelated words work well); not "
         "your user name, name or e-mail, not easy to guess (a common password, a keyboard row, a "
         "repeat, a run like 12345, a date), not on the administrator's list.")
REMOVE_REFUSED = ("Refusing to remove an account without confirmation: run it at a terminal or "
                  "pass --yes.\n")


def bob_lines(username=BOB, full_name=BOB_FULL_NAME, email=BOB_EMAIL, password=BOB_PASSWORD,
              again=None):
    """Five lines of standard input for `accounts user add`."""
    return form(username, full_name, email, password, again)


def kinds(device):
    return [e["event"] for e in device.events()]


def public_again(device):
    """An activated device reset to Public: the database exists and holds no account."""
    device.activate()
    assert device.run("reset", "--yes").code == 0
    return device


def lock(device, name, password=WRONG_PASSWORD):
    results = [device.login(name, password) for _ in range(5)]
    assert [r.code for r in results] == [1, 1, 1, 1, 4]


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
        "failures": 0}
    assert {k: v for k, v in bob.items() if k != "createdAt"} == {
        "username": BOB, "fullName": BOB_FULL_NAME, "email": BOB_EMAIL, "owner": False,
        "disabled": False, "locked": False, "lockedUntil": None, "mustChangePassword": False,
        "failures": 2, "lastLogin": None}


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
    """user show prints the twelve lines of one account on stdout, exit 0 (the last two: its
    second factor and its live sessions)."""
    activated.add_user()
    result = activated.run("user", "show", BOB)
    assert (result.code, result.stderr) == (0, "")
    lines = result.out_lines
    assert len(lines) == 12, lines
    assert lines[:8] == [
        "User name: bob", "Full name: Bob Builder", "E-mail address: bob@example.org",
        "Owner: no", "Disabled: no", "Must change password: no", "Locked: no", "Failed logins: 0"]
    assert re.fullmatch(r"Created: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", lines[8]), lines[8]
    assert lines[9] == "Last login: never"
    assert lines[10:] == ["Two-factor: off", "Sessions: 0"]


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
