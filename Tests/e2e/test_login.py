"""`accounts login` from a pipe: Home, wrong credentials, normalization, lockout and unlock."""

import datetime
import re
import resource

import pytest

from conftest import (FULL_NAME, INVALID, NOT_ACTIVATED, PASSWORD, TOO_MANY, USERNAME,
                      WRONG_PASSWORD, form, store_execute)

WELCOME = f"Welcome back {FULL_NAME}!"


def last_success_time(device) -> datetime.datetime:
    events = [e for e in device.events() if e["event"] == "login_success"]
    return datetime.datetime.strptime(events[-1]["time"], "%Y-%m-%dT%H:%M:%S.%fZ")


def test_first_login_shows_only_welcome(activated):
    """The first login prints exactly `Welcome back <Full name>!` on stdout and exits 0; its
    login_success says it passed the password alone."""
    result = activated.login()
    assert (result.code, result.stdout, result.stderr) == (0, WELCOME + "\n", "")
    assert [e["detail"] for e in activated.events() if e["event"] == "login_success"] == [
        "password"]


def test_login_with_flags(activated):
    """`login --username U --password-stdin` reads only the password from stdin."""
    result = activated.run("login", "--username", "alice", "--password-stdin",
                           input=PASSWORD + "\n")
    assert (result.code, result.stdout, result.stderr) == (0, WELCOME + "\n", "")


def test_username_flag_reads_password_line(activated):
    """`login --username U` without --password-stdin still reads the password line from stdin."""
    result = activated.run("login", "--username", "alice", input=PASSWORD + "\n")
    assert (result.code, result.stdout) == (0, WELCOME + "\n")


def test_username_is_case_insensitive(activated):
    """ALICE and Alice log in as alice."""
    assert activated.login("ALICE").stdout == WELCOME + "\n"
    assert activated.login(" Alice ").code == 0


def test_password_is_case_sensitive(activated):
    """The password's case matters."""
    result = activated.login("alice", PASSWORD.upper())
    assert (result.code, result.stderr) == (1, INVALID + "\n")


def test_password_nfkc_normalized(device):
    """A password typed with e + U+0301 logs in when stored as U+00E9, and the other way round."""
    decomposed = "cafe\u0301 au lait, s'il vous plait"
    composed = "caf\u00e9 au lait, s'il vous plait"
    device.activate(password=decomposed)
    assert device.login("alice", composed).stdout == WELCOME + "\n"
    assert device.login("alice", decomposed).code == 0
    assert device.login("alice", "cafe au lait, s'il vous plait").code == 1


def test_password_fullwidth_compatibility(device):
    """NFKC also maps full-width letters: ｐａｓｓ… equals pass…."""
    device.activate(password="passphrase for wonderland")
    fullwidth = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c
                        for c in "passphrase for wonderland")
    assert device.login("alice", fullwidth).code == 0


def test_wrong_password(activated):
    """A wrong password prints `Invalid user name or password!` on stderr, exit 1."""
    result = activated.login("alice", WRONG_PASSWORD)
    assert (result.code, result.stdout, result.stderr) == (1, "", INVALID + "\n")


def test_unknown_name_same_as_wrong_password(activated):
    """An unknown name and a wrong password give byte-identical stdout, stderr and exit code."""
    unknown = activated.login("mallory", PASSWORD)
    wrong = activated.login("alice", WRONG_PASSWORD)
    assert (unknown.code, unknown.stdout, unknown.stderr) == (wrong.code, wrong.stdout, wrong.stderr)
    assert wrong.code == 1


def test_unknown_and_known_lockout_look_alike(activated):
    """Locking an unknown name looks exactly like locking the real one (times aside)."""
    def five(name):
        return [activated.login(name, WRONG_PASSWORD) for _ in range(5)]

    def shape(r):
        return (r.code, r.stdout, re.sub(r"\d", "#", r.stderr))

    assert [shape(r) for r in five("mallory")] == [shape(r) for r in five("alice")]


@pytest.mark.empty_database
def test_login_on_public_device(device):
    """login on a Public device says to run activate, exit 1, and creates no database."""
    result = device.login()
    assert (result.code, result.stdout, result.stderr) == (1, "", NOT_ACTIVATED + "\n")
    assert not device.db.exists()


def test_login_blank_password(activated):
    """An empty password line is refused as an unfilled field, exit 1."""
    result = activated.login("alice", "")
    assert (result.code, result.stderr) == (1, "Please fill all fields!\nEmpty: Password.\n")


def test_login_input_ends_early(activated):
    """login with only the user name on stdin ends early: exit 1, and says what really
    happened (nobody is logged in; nothing about a form being stored)."""
    result = activated.run("login", input="alice\n")
    assert (result.code, result.stdout, result.stderr) == (
        1, "", "Input ended before the login was complete; you are not logged in.\n")


def test_home_failed_attempt_lines(activated):
    """Home shows a Last login line, then `1 failed attempt` / `N failed attempts` since it."""
    assert activated.login().out_lines == [WELCOME]
    assert activated.login("alice", WRONG_PASSWORD).code == 1
    lines = activated.login().out_lines
    assert len(lines) == 3, lines
    assert lines[0] == WELCOME
    assert lines[1].startswith("Last login: ")
    assert lines[2] == "1 failed attempt since your last login"
    for _ in range(3):
        assert activated.login("ALICE", WRONG_PASSWORD).code == 1
    lines = activated.login().out_lines
    assert (lines[0], lines[2]) == (WELCOME, "3 failed attempts since your last login")
    lines = activated.login().out_lines
    assert len(lines) == 2 and lines[1].startswith("Last login: "), lines


def test_home_last_login_format_utc(activated):
    """`Last login:` shows the previous login like date(1) in UTC: `Sat Nov 21 23:25:24 UTC 2026`."""
    assert activated.login().code == 0
    previous = last_success_time(activated)
    result = activated.login()
    assert result.code == 0
    expected = re.compile(
        rf"^Last login: {previous:%a %b} +{previous.day} {previous:%H:%M:%S} UTC {previous:%Y}$")
    assert expected.match(result.out_lines[1]), result.out_lines


def test_lockout_across_processes_and_unlock(activated):
    """Five failures (one process each) lock the name, exit 4, even for the right password; unlock clears it."""
    for _ in range(4):
        result = activated.login("alice", WRONG_PASSWORD)
        assert (result.code, result.stdout, result.stderr) == (1, "", INVALID + "\n")
    fifth = activated.login("alice", WRONG_PASSWORD)
    assert fifth.code == 4
    assert fifth.stdout == ""
    assert len(fifth.err_lines) == 2, fifth.stderr
    assert fifth.err_lines[0] == INVALID
    assert TOO_MANY in fifth.err_lines[1]

    for password in (PASSWORD, WRONG_PASSWORD):
        later = activated.login("ALICE", password)
        assert later.code == 4
        assert later.stdout == ""
        assert len(later.err_lines) == 1 and TOO_MANY in later.err_lines[0], later.stderr

    unlock = activated.run("unlock", "alice")
    assert (unlock.code, unlock.stderr) == (0, "")
    assert unlock.stdout == "Unlocked alice: its lock and failed-login count are cleared.\n"
    result = activated.login()
    assert (result.code, result.out_lines[0]) == (0, WELCOME)


def test_lockout_message_mentions_too_many_attempts(activated):
    """The lock message contains `Too many failed attempts` and exit code 4."""
    results = [activated.login("alice", WRONG_PASSWORD) for _ in range(5)]
    assert [r.code for r in results] == [1, 1, 1, 1, 4]
    assert TOO_MANY in results[-1].stderr


def test_lock_message_until_time_in_utc(activated):
    """The lock message names the first lock's length and its end as a UTC clock time."""
    results = [activated.login("alice", WRONG_PASSWORD) for _ in range(5)]
    line = results[-1].err_lines[-1]
    assert re.fullmatch(
        r"Too many failed attempts! Try again in 1 minute, after \d\d:\d\d:\d\d UTC\.", line), line


def test_unknown_name_lockout_is_per_name(activated):
    """An unknown name locks after 5 failures (exit 4) without locking the real user."""
    codes = [activated.login("mallory", PASSWORD).code for _ in range(5)]
    assert codes == [1, 1, 1, 1, 4]
    assert TOO_MANY in activated.login("mallory", PASSWORD).stderr
    assert activated.login().stdout == WELCOME + "\n"


def test_success_resets_consecutive_count(activated):
    """Failures interrupted by a success do not lock: 4 wrong, right, 4 wrong all exit 1."""
    for _ in range(4):
        assert activated.login("alice", WRONG_PASSWORD).code == 1
    assert activated.login().code == 0
    for _ in range(4):
        assert activated.login("alice", WRONG_PASSWORD).code == 1
    assert activated.login().code == 0


def test_unlock_case_insensitive_and_nothing_to_clear(activated):
    """unlock works on any case of the name; with nothing to clear it says so, exit 0."""
    for _ in range(5):
        activated.login("alice", WRONG_PASSWORD)
    assert activated.run("unlock", "ALICE").code == 0
    assert activated.login().code == 0
    again = activated.run("unlock", "alice")
    assert (again.code, again.stdout) == (
        0, "alice was not locked and had no failed logins; nothing to clear.\n")


def test_reactivated_user_after_reset(activated):
    """After reset and a new activation only the new user can log in."""
    assert activated.run("reset", "--yes").code == 0
    result = activated.run("activate", input=form("bob", "Bob Builder", "bob@example.org",
                                                  "can we fix it yes we can"))
    assert result.code == 0
    assert activated.login().code == 1
    assert activated.login("bob", "can we fix it yes we can").stdout == "Welcome back Bob Builder!\n"


def test_home_escapes_a_tampered_full_name(activated):
    store_execute(activated.db, "UPDATE account SET full_name = ?", "Eve\x1b]0;pwned\x07\x1b[31m\u202e")
    result = activated.login()
    assert result.code == 0
    assert result.stdout == "Welcome back Eve\\u{1b}]0;pwned\\u{7}\\u{1b}[31m\\u{202e}!\n"


def test_tampered_counter_still_counts_and_locks(activated):
    """failures at the largest value its column holds (SQLite: Int64.max; PostgreSQL: that of
    the column's type): no crash, the attempt is counted and locks the name."""
    assert activated.login(USERNAME, WRONG_PASSWORD).code == 1
    largest = 2**63 - 1
    if activated.postgresql:
        (kind,) = activated.query(
            "SELECT data_type::text FROM information_schema.columns WHERE table_schema = "
            "'accounts' AND table_name = 'login_throttle' AND column_name = 'failures'")[0]
        largest = {"bigint": 2**63 - 1, "integer": 2**31 - 1, "smallint": 2**15 - 1}[kind]
    store_execute(activated.db, "UPDATE login_throttle SET failures = ?", largest)
    result = activated.login(USERNAME, WRONG_PASSWORD)
    assert result.code == 4, result
    assert result.err_lines[0] == INVALID and TOO_MANY in result.err_lines[1]
    assert "Fatal error" not in result.stderr
    assert [e["event"] for e in activated.events()][-2:] == ["login_failure", "lockout"]


def test_absurd_iteration_count_is_a_damaged_hash(activated):
    """A stored count of 2^31-1 would cost minutes: the usual answer at the usual cost, and the
    log tells the administrator the hash is damaged."""
    stored = activated.stored_hash().split("$")
    store_execute(activated.db, "UPDATE account SET password_hash = ?",
           "$".join([stored[0], str(2**31 - 1), stored[2], stored[3]]))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = activated.login()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert (result.code, result.stderr) == (1, INVALID + "\n")
    assert after.ru_utime - before.ru_utime < 10  # 2^31-1 iterations would take ~30 minutes
    last = activated.events()[-1]
    assert last["event"] == "login_failure"
    assert "stored password hash is damaged" in last["detail"]
    assert "stored password hash is damaged" in activated.run("log").stdout


def test_impossible_names_are_not_stored(activated):
    """An 8,000-character name at the prompt gets the usual answer and is not written."""
    result = activated.login("n" * 8000, WRONG_PASSWORD)
    assert (result.code, result.stderr) == (1, INVALID + "\n")
    assert activated.query("SELECT count(*) FROM login_throttle") == [(0,)]
    assert activated.query("SELECT max(length(username)) FROM audit_event") == [(5,)]


def test_first_login_counts_failures_since_activation(activated):
    assert activated.login(USERNAME, WRONG_PASSWORD).code == 1
    assert activated.login().out_lines == [
        f"Welcome back {FULL_NAME}!", "1 failed attempt since activation"]


@pytest.mark.empty_database
def test_unlock_on_a_missing_database_creates_nothing(device):
    result = device.run("unlock", USERNAME)
    assert (result.code, result.stdout) == (1, "")
    assert result.stderr == (
        f"No database exists at {device.db}; nothing was changed. Check --database or "
        "ACCOUNTS_DATABASE.\n")
    assert device.nothing_created()


def test_unlock_refuses_an_impossible_name(activated):
    result = activated.run("unlock", "two words")
    assert (result.code, result.stderr) == (
        1, "User name must be 1 to 64 letters, digits, '.', '_' or '-'!\n")
    assert [e["event"] for e in activated.events()] == ["activation"]
