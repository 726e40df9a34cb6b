"""Administrator commands: reset and the audit log."""

import json
import re

import pytest

from conftest import PASSWORD, WRONG_PASSWORD, finish, form, screen, store_execute

RESET_DONE = "Device reset: it is Public again and its accounts were deleted."
ALREADY_PUBLIC = "This device is already Public; nothing to reset."
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


@pytest.mark.empty_database
def test_reset_public_device(device):
    """reset on a Public device says so and exits 0."""
    result = device.run("reset", input="")
    assert (result.code, result.stdout, result.stderr) == (0, ALREADY_PUBLIC + "\n", "")
    assert device.run("reset", "--yes").stdout == ALREADY_PUBLIC + "\n"


def test_reset_without_terminal_refuses(activated):
    """reset from a pipe without --yes refuses, exit 1, and changes nothing."""
    result = activated.run("reset", input="reset\n")
    assert result.code == 1
    assert result.stdout == ""
    assert result.stderr == (
        "Refusing to reset without confirmation: run it at a terminal or pass --yes.\n")
    assert "Refusing to reset without confirmation" in result.stderr
    assert activated.status()["state"] == "Activated"
    assert activated.login().code == 0


def test_reset_yes(activated):
    """reset --yes makes the device Public, deletes the user, exit 0."""
    result = activated.run("reset", "--yes")
    assert (result.code, result.stdout, result.stderr) == (0, RESET_DONE + "\n", "")
    assert activated.status()["state"] == "Public"
    assert activated.login().stderr == (
        "This device is not activated yet. Run `accounts activate` to activate it.\n")
    assert activated.run("reset", "-y").stdout == ALREADY_PUBLIC + "\n"


def test_reset_clears_lock(activated):
    """A reset clears failed-login counts: a re-activated alice is not locked."""
    for _ in range(5):
        activated.login("alice", WRONG_PASSWORD)
    assert activated.run("reset", "--yes").code == 0
    activated.activate()
    assert activated.login().code == 0


def test_reset_at_terminal_wrong_word(activated):
    """At a terminal, typing anything but `reset` cancels: exit 1, still Activated."""
    child = activated.spawn("reset")
    child.expect_exact('Type "reset" to confirm: ')
    child.sendline("yes")
    assert finish(child) == 1
    assert screen(child) == (
        "This deletes every account (1) and makes this device Public again.\n"
        'Type "reset" to confirm: yes\n'
        "Reset cancelled; nothing was changed.\n")
    assert activated.status()["state"] == "Activated"


def test_reset_at_terminal_confirmed(activated):
    """At a terminal, typing `reset` resets: exit 0, Public."""
    child = activated.spawn("reset")
    child.expect_exact('Type "reset" to confirm: ')
    child.sendline("reset")
    assert finish(child) == 0
    assert screen(child).endswith('Type "reset" to confirm: reset\n' + RESET_DONE + "\n")
    assert activated.status()["state"] == "Public"


def test_reset_at_terminal_end_of_input(activated):
    """At a terminal, Ctrl-D at the reset question cancels: exit 1, still Activated, and the
    sentence starts a line of its own."""
    child = activated.spawn("reset")
    child.expect_exact('Type "reset" to confirm: ')
    child.sendeof()
    assert finish(child) == 1
    assert ('Type "reset" to confirm: \n'
            "Input ended before the reset was confirmed; nothing was changed.\n") in screen(child)
    assert activated.status()["state"] == "Activated"


def run_history(device):
    """activation, success, 5 failures + lockout, unlock, reset."""
    device.activate()
    assert device.login().code == 0
    for _ in range(5):
        device.login("alice", WRONG_PASSWORD)
    assert device.run("unlock", "alice").code == 0
    assert device.run("reset", "--yes").code == 0


EXPECTED_KINDS = (["activation", "login_success"] + ["login_failure"] * 5
                  + ["lockout", "unlock", "reset"])


def test_log_order_and_fields(device):
    """log --json lists events oldest first with time, event, user (and detail) keys."""
    run_history(device)
    events = device.events()
    assert [e["event"] for e in events] == EXPECTED_KINDS
    times = [e["time"] for e in events]
    assert all(ISO_UTC.match(t) for t in times), times
    assert times == sorted(times)
    for event in events:
        assert {"time", "event", "user"} <= set(event) <= {
            "time", "event", "user", "detail", "host", "offline"}
        assert event["user"] == "alice"
    assert events[2]["detail"] == "invalid user name or password"
    assert events[7]["detail"].startswith("locked until ")


def test_log_text(device):
    """Plain `log` prints one line per event: UTC time, event, user."""
    run_history(device)
    result = device.run("log")
    assert result.code == 0
    lines = result.out_lines
    assert len(lines) == len(EXPECTED_KINDS)
    for line, kind in zip(lines, EXPECTED_KINDS):
        fields = line.split()
        assert ISO_UTC.match(fields[0]), line
        assert fields[1:3] == [kind, "alice"], line


def test_log_limit(device):
    """--limit N shows only the newest N events, still oldest first."""
    run_history(device)
    everything = device.run("log", "--json").out_lines
    newest = device.run("log", "--json", "--limit", "3").out_lines
    assert newest == everything[-3:]
    assert [json.loads(line)["event"] for line in newest] == ["lockout", "unlock", "reset"]
    assert device.run("log", "--limit", "1").out_lines == device.run("log").out_lines[-1:]


def test_log_never_shows_secrets(device):
    """Neither log nor log --json contains any password typed or a pbkdf2_sha256 hash."""
    run_history(device)
    device.login("mallory", "mallorys secret guess")
    text = device.run("log").stdout + device.run("log", "--json").stdout
    for secret in (PASSWORD, WRONG_PASSWORD, "mallorys secret guess", "pbkdf2_sha256", "$"):
        assert secret not in text


def test_log_survives_reset(activated):
    """The audit log keeps the activation after a reset and a second activation."""
    activated.run("reset", "--yes")
    activated.run("activate", input=form("bob", "Bob Builder", "bob@example.org",
                                         "can we fix it yes we can"))
    kinds_users = [(e["event"], e["user"]) for e in activated.events()]
    assert kinds_users == [("activation", "alice"), ("reset", "alice"), ("activation", "bob")]


def test_log_records_unknown_names(activated):
    """A failed login with an unknown name is logged with the name as typed."""
    activated.login("Mallory", PASSWORD)
    last = activated.events()[-1]
    assert (last["event"], last["user"]) == ("login_failure", "Mallory")


def test_reset_warning_counts_the_accounts(activated):
    """The reset warning at a terminal counts the accounts and shows no raw escape."""
    store_execute(activated.db, "UPDATE account SET username = ?", "al\x1b[2Jice")
    child = activated.spawn("reset")
    child.expect_exact('Type "reset" to confirm: ')
    child.sendline("no")
    assert finish(child) == 1
    shown = child.logfile_read.getvalue()
    assert "This deletes every account (1) and makes this device Public again." in shown
    assert "\x1b" not in shown


@pytest.mark.sqlite_only  # the SQLite file's free pages (a PostgreSQL server's files are its own)
def test_reset_leaves_no_trace_of_the_hash(activated):
    """After reset the deleted user's hash is overwritten, not left in a free page."""
    salt = activated.stored_hash().split("$")[2]
    assert activated.run("reset", "--yes").code == 0
    for file in activated.db.parent.iterdir():
        assert salt.encode() not in file.read_bytes(), file


def test_log_json_always_has_every_key(activated):
    for event in activated.events():
        assert list(event) == ["time", "event", "user", "detail", "host", "offline"]
    assert activated.events()[0]["detail"] is None
