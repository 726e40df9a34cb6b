"""`accounts log` filters: --user, --event, --since, --limit with them, --json; and
the line format with the new event kinds."""

import datetime
import json

import pytest

from conftest import (BOB, BOB_PASSWORD, NEW_PASSWORD, PASSWORD, USERNAME, WRONG_PASSWORD)

KINDS = ["activation", "login_success", "login_failure", "lockout", "unlock", "reset",
         "account_added", "account_edited", "account_disabled", "account_enabled",
         "account_removed", "password_changed", "password_set", "ownership_moved"]


def log(device, *args):
    """`log --json` with filters: the events as dicts, after checking exit 0 and no stderr."""
    result = device.run("log", "--json", *args)
    assert (result.code, result.stderr) == (0, ""), result
    return [json.loads(line) for line in result.out_lines]


def history(device):
    """Nine events of two accounts and a stranger, in this order:
    1 activation alice, 2 account_added bob, 3 login_failure bob, 4 login_failure Bob,
    5 login_success alice, 6 account_disabled bob, 7 login_failure mallory,
    8 account_enabled bob, 9 login_success bob."""
    device.activate()
    device.add_user()
    assert device.login(BOB, WRONG_PASSWORD).code == 1
    assert device.login("Bob", WRONG_PASSWORD).code == 1
    assert device.login().code == 0
    assert device.run("user", "disable", BOB).code == 0
    assert device.login("mallory", WRONG_PASSWORD).code == 1
    assert device.run("user", "enable", BOB).code == 0
    assert device.login(BOB, BOB_PASSWORD).code == 0
    events = log(device)
    assert [e["event"] for e in events] == [
        "activation", "account_added", "login_failure", "login_failure", "login_success",
        "account_disabled", "login_failure", "account_enabled", "login_success"]
    return events


def set_times(device, times):
    """Gives the events with ids 1..n the UTC times given, in order (the clock cannot be
    moved, the stored times can)."""
    assert device.query("SELECT count(*) FROM audit_event") == [(len(times),)]
    for number, when in enumerate(times, start=1):
        device.execute("UPDATE audit_event SET occurred_at = ? WHERE id = ?", when, number)


def stamp(moment: datetime.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def ids(events, everything):
    """The 1-based positions of `events` in the whole log."""
    return [everything.index(e) + 1 for e in events]


FIXED_TIMES = [
    "2026-11-20T08:00:00.000Z", "2026-11-21T09:00:00.000Z", "2026-11-22T23:59:59.999Z",
    "2026-11-23T00:00:00.001Z", "2026-11-23T09:59:59.999Z", "2026-11-23T10:00:00.001Z",
    "2026-11-23T11:00:00.000Z", "2026-11-24T00:00:00.000Z", "2026-11-25T12:00:00.000Z"]


# --user

@pytest.mark.parametrize("name", ["bob", "BOB", "Bob"])
def test_user_matches_the_key(device, name):
    """--user matches the user name's key in any case: bob's events, including a failure typed
    as `Bob`, and nobody else's."""
    everything = history(device)
    events = log(device, "--user", name)
    assert ids(events, everything) == [2, 3, 4, 6, 8, 9]
    assert {e["user"] for e in events} == {"bob", "Bob"}


def test_user_unknown_name(device):
    """--user also finds a name that never was an account; a name with no event prints
    nothing, exit 0."""
    everything = history(device)
    assert ids(log(device, "--user", "mallory"), everything) == [7]
    result = device.run("log", "--user", "nobody")
    assert (result.code, result.stdout, result.stderr) == (0, "", "")


# --event

def test_event_filter(device):
    """--event keeps one kind."""
    everything = history(device)
    assert ids(log(device, "--event", "login_failure"), everything) == [3, 4, 7]
    assert ids(log(device, "--event", "account_disabled"), everything) == [6]
    assert log(device, "--event", "reset") == []


def test_user_and_event_combine(device):
    """--user and --event together keep the events matching both."""
    everything = history(device)
    assert ids(log(device, "--user", "bob", "--event", "login_failure"), everything) == [3, 4]
    assert ids(log(device, "--event", "login_success", "--user", "ALICE"), everything) == [5]


@pytest.mark.parametrize("value", ["logins", "", "user_added", "login-success", "login success"])
def test_unknown_event_kind_is_a_usage_error(device, value):
    """An --event that is not a kind: exit 2, nothing on stdout, and stderr names every kind."""
    history(device)
    result = device.run("log", "--event", value)
    assert (result.code, result.stdout) == (2, "")
    for kind in KINDS:
        assert kind in result.stderr, (kind, result.stderr)


def test_every_kind_is_accepted_and_filters(device):
    """Each of the fourteen kinds is accepted by --event and shows only its own events; a
    history with all of them gives each at least one."""
    device.activate()
    device.add_user()
    assert device.run("user", "edit", BOB, "--full-name", "Robert Builder").code == 0
    assert device.run("user", "disable", BOB).code == 0
    assert device.run("user", "enable", BOB).code == 0
    assert device.run("user", "passwd", BOB, "--password-stdin",
                      input=NEW_PASSWORD + "\n").code == 0
    assert device.run("passwd", input=f"{USERNAME}\n{PASSWORD}\n{BOB_PASSWORD}\n"
                                      f"{BOB_PASSWORD}\n").code == 0
    assert device.run("user", "edit", BOB, "--owner").code == 0
    assert device.run("user", "remove", USERNAME, "--yes").code == 0
    for _ in range(5):
        device.login(BOB, WRONG_PASSWORD)
    assert device.run("unlock", BOB).code == 0
    assert device.login(BOB, NEW_PASSWORD).code == 0
    assert device.run("reset", "--yes").code == 0
    everything = log(device)
    seen = 0
    for kind in KINDS:
        events = log(device, "--event", kind)
        assert events, kind
        assert {e["event"] for e in events} == {kind}
        seen += len(events)
    assert seen == len(everything)


# --since

@pytest.mark.parametrize("since, expected", [
    ("2026-11-23", [4, 5, 6, 7, 8, 9]),
    ("2026-11-24", [8, 9]),
    ("2026-11-23T10:00:00Z", [6, 7, 8, 9]),
    ("2026-11-21T09:00:01Z", [3, 4, 5, 6, 7, 8, 9]),
    ("2026-11-26", []),
    ("2000-01-01", [1, 2, 3, 4, 5, 6, 7, 8, 9]),
], ids=["date", "next-date", "date-time", "date-time-2", "after-all", "before-all"])
def test_since_date_and_time(device, since, expected):
    """--since a date means that UTC midnight; a date and time ending in Z means that instant."""
    history(device)
    set_times(device, FIXED_TIMES)
    everything = log(device)
    assert ids(log(device, "--since", since), everything) == expected


def test_since_boundary_is_included(device):
    """An event at exactly the --since instant is kept."""
    history(device)
    times = list(FIXED_TIMES)
    times[3] = "2026-11-23T00:00:00.000Z"
    times[5] = "2026-11-23T10:00:00.000Z"
    set_times(device, times)
    everything = log(device)
    assert ids(log(device, "--since", "2026-11-23"), everything) == [4, 5, 6, 7, 8, 9]
    assert ids(log(device, "--since", "2026-11-23T10:00:00Z"), everything) == [6, 7, 8, 9]


@pytest.mark.parametrize("age, expected", [
    ("90s", [8, 9]), ("30m", [6, 7, 8, 9]), ("2h", [4, 5, 6, 7, 8, 9]),
    ("7d", [2, 3, 4, 5, 6, 7, 8, 9])])
def test_since_age(device, age, expected):
    """--since an age (90s, 30m, 2h, 7d) keeps the events newer than now minus that age."""
    history(device)
    now = datetime.datetime.now(datetime.timezone.utc)
    ago = [datetime.timedelta(days=10), datetime.timedelta(days=6), datetime.timedelta(hours=3),
           datetime.timedelta(hours=1), datetime.timedelta(minutes=40),
           datetime.timedelta(minutes=20), datetime.timedelta(seconds=200),
           datetime.timedelta(seconds=30), datetime.timedelta(seconds=5)]
    set_times(device, [stamp(now - a) for a in ago])
    everything = log(device)
    assert ids(log(device, "--since", age), everything) == expected


@pytest.mark.parametrize("value", [
    "yesterday", "5w", "-2h", "+2h", "2h30m", "1.5h", "90", "", "d", "2026/11/23",
    # Shaped like a date or time, but no such day or time exists.
    "2026-13-45", "2026-02-30", "2026-11-31", "0000-00-00", "2026-11-23T25:00:00Z",
    "2026-11-23T10:61:00Z"])
def test_bad_since_is_a_usage_error(device, value):
    """A --since that is neither a date, a UTC date and time nor an age (an impossible date or
    time included: it is not read as a later one): exit 2, nothing on stdout, a message on
    stderr."""
    history(device)
    result = device.run("log", "--since", value)
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr.strip() != ""


# --limit with filters, --json, the line format

def test_limit_with_filters_is_newest_oldest_first(device):
    """--limit N with filters: the newest N matching events, printed oldest first."""
    everything = history(device)
    assert ids(log(device, "--event", "login_failure", "--limit", "2"), everything) == [4, 7]
    assert ids(log(device, "--user", "bob", "--limit", "3"), everything) == [6, 8, 9]
    assert ids(log(device, "--user", "bob", "--event", "login_failure", "--limit", "1"),
               everything) == [4]
    assert ids(log(device, "--user", "bob", "--limit", "100"), everything) == [2, 3, 4, 6, 8, 9]


def test_limit_with_since(device):
    """--since and --limit together: the newest N of the events since then."""
    history(device)
    set_times(device, FIXED_TIMES)
    everything = log(device)
    assert ids(log(device, "--since", "2026-11-23", "--limit", "2"), everything) == [8, 9]
    assert ids(log(device, "--since", "2026-11-23", "--user", "bob", "--event",
                   "login_failure"), everything) == [4]


def test_json_lines_have_every_key(device):
    """With filters, every --json line is an object with time, event, user, detail and host, in
    that order."""
    history(device)
    result = device.run("log", "--json", "--user", "bob", "--event", "login_failure")
    assert result.code == 0
    for line in result.out_lines:
        event = json.loads(line)
        assert list(event) == ["time", "event", "user", "detail", "host", "offline"]
        assert event["detail"] == "invalid user name or password"


def test_text_lines_match_json(device):
    """Each text line is `<time>  <kind padded to 16>  <user>  (<detail>)  on <host>`, the same
    events as --json, with or without filters."""
    history(device)
    for filters in ([], ["--user", "bob"], ["--event", "account_disabled"]):
        text = device.run("log", *filters)
        assert (text.code, text.stderr) == (0, "")
        expected = []
        for e in log(device, *filters):
            line = f"{e['time']}  {e['event']:<16}  {e['user'] or '-'}"
            line += f"  ({e['detail']})" if e["detail"] is not None else ""
            expected.append(line + (f"  on {e['host']}" if e["host"] is not None else ""))
        assert text.out_lines == expected


@pytest.mark.empty_database
def test_filters_on_a_missing_database(device):
    """Filters on a device with no database print nothing, exit 0, and create nothing."""
    result = device.run("log", "--user", "bob", "--event", "login_failure", "--since", "7d",
                        "--limit", "3")
    assert (result.code, result.stdout, result.stderr) == (0, "", "")
    assert not device.db.exists()
