"""What the session tests share: the session table's rows, the session file, other clients
of the same database, moving a session's times, and the fixture `two` (alice and bob).

Sessions: a login lasts until logout, expiry or an administrator ends it. The client
keeps a 256-bit token in `$XDG_STATE_HOME/accounts/session`; the database keeps only its SHA-256."""

import datetime
import hashlib
import json
import pathlib
import re

import pytest

from conftest import BOB_FULL_NAME, FULL_NAME, PASSWORD, USERNAME, form, new_store
from constants import POSTGRESQL


NOT_LOGGED_IN = "Not logged in.\n"
LOGGED_OUT = "Logged out.\n"
WELCOME = f"Welcome back {FULL_NAME}!"
BOB_WELCOME = f"Welcome back {BOB_FULL_NAME}!"
LOGIN_ENDED = "Input ended before the login was complete; you are not logged in.\n"
FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"
NO_SUCH = 5
STORAGE = 3
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
TOKEN = re.compile(r"^[0-9a-f]{64}$")
STORE_ID = re.compile(r"^[0-9a-f]{32}$")
HEADER = ("ID      USER NAME         STARTED                   LAST SEEN                 ENDS"
          "                      2FA  HOST")
WHOAMI_KEYS = ["loggedIn", "username", "fullName", "session", "startedAt", "lastSeenAt",
               "expiresAt", "idleUntil", "secondFactor"]
LIST_KEYS = ["session", "username", "startedAt", "lastSeenAt", "expiresAt", "idleUntil",
             "secondFactor", "host"]
COLUMNS = ["id", "token_hash", "account_id", "created_at", "last_seen_at", "expires_at",
           "idle_seconds", "idle_until", "second_factor", "host"]


# Helpers.

def parse(text) -> datetime.datetime:
    """A stored UTC timestamp (`2026-11-23T12:56:46.455Z`) as an aware datetime."""
    assert ISO_UTC.match(text), text
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc)


def stamp(moment: datetime.datetime) -> str:
    """An aware datetime as the stored timestamp text."""
    moment = moment.astimezone(datetime.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def long_time(moment: datetime.datetime) -> str:
    """A regular expression for a time shown like date(1): `Sat Nov 21 23:25:24 UTC 2026`."""
    return rf"{moment:%a %b} +{moment.day} {moment:%H:%M:%S} UTC {moment:%Y}"


def durations(seconds) -> set:
    """The ways a person-facing duration of whole minutes may be spelt."""
    minutes = seconds // 60
    spelt = {"1 minute" if minutes == 1 else f"{minutes} minutes"}
    if seconds % 3600 == 0:
        hours = seconds // 3600
        spelt.add("1 hour" if hours == 1 else f"{hours} hours")
    return spelt


def close_to(delta: datetime.timedelta, seconds) -> bool:
    """A stored difference equals `seconds`, give or take the timestamps' last millisecond."""
    return abs(delta.total_seconds() - seconds) <= 0.001


def sessions(device, username=None) -> list:
    """The rows of the `session` table (as dicts, by id), optionally one account's."""
    sql = ("SELECT s.*, a.username FROM session s JOIN account a ON a.id = s.account_id"
           + (" WHERE a.username_key = ?" if username else "") + " ORDER BY s.id")
    return device.query_dicts(sql, *((username,) if username else ()))


def read_session_file(path) -> tuple:
    """(database, token) from a session file, after checking its lines exactly: three, and in a
    postgresql run a fourth before the token naming the store's identity."""
    database, _, token = read_session_lines(path)
    return database, token


def read_session_lines(path) -> tuple:
    """(database, store id or None, token) from a session file, its lines checked exactly."""
    lines = path.read_text().split("\n")
    store = None
    if POSTGRESQL:
        assert len(lines) == 5 and lines[4] == "", lines
        assert lines[2].startswith("store "), lines
        store = lines.pop(2)[len("store "):]
        assert STORE_ID.match(store), store
    assert len(lines) == 4 and lines[3] == "", lines
    assert lines[0] == "accounts-session 1"
    assert lines[1].startswith("database ") and lines[2].startswith("token "), lines
    token = lines[2][len("token "):]
    assert TOKEN.match(token), token
    return lines[1][len("database "):], store, token


def token_hash(token) -> bytes:
    return hashlib.sha256(bytes.fromhex(token)).digest()


class Client:
    """Another client of the same database: its own XDG_STATE_HOME, so its own session file."""

    def __init__(self, device, name):
        self.device = device
        self.state = device.root / f"state-{name}"
        self.state.mkdir(mode=0o700, exist_ok=True)

    @property
    def session_file(self):
        return self.state / "accounts" / "session"

    def env(self, **extra):
        return self.device.env(XDG_STATE_HOME=str(self.state), **extra)

    def run(self, *args, input=None):
        return self.device.run(*args, input=input, env=self.env())

    def login(self, username=USERNAME, password=PASSWORD):
        result = self.device.login(username, password, env=self.env())
        assert result.code == 0, result
        return result

    def token(self):
        return read_session_file(self.session_file)[1]

    def row(self):
        """This client's session row, or None when it is gone."""
        wanted = token_hash(self.token())
        found = [r for r in sessions(self.device) if r["token_hash"] == wanted]
        return found[0] if found else None


def logged_in(device, username=USERNAME, password=PASSWORD):
    """Logs in on the device's own client; returns its session row."""
    result = device.login(username, password)
    assert result.code == 0, result
    _, token = read_session_file(device.session_file)
    rows = [r for r in sessions(device) if r["token_hash"] == token_hash(token)]
    assert len(rows) == 1, rows
    return rows[0]


def whoami(device, *args, env=None):
    return device.run("whoami", *args, env=env)


def bare(device, input=None, env=None):
    """Bare `accounts` through a pipe (stdin empty unless `input`)."""
    return device.run(input="" if input is None else input, env=env)


def assert_not_logged_in(result):
    assert (result.code, result.stdout, result.stderr) == (1, "", NOT_LOGGED_IN), result


def assert_home_without_prompt(result, row):
    """Home straight from a live session: Welcome, then the session's start as Last login."""
    assert (result.code, result.stderr) == (0, ""), result
    lines = result.out_lines
    assert len(lines) == 2, lines
    assert lines[0] == WELCOME
    assert re.fullmatch("Last login: " + long_time(parse(row["created_at"])), lines[1]), lines


def assert_asks_to_log_in(result):
    """The Login of today, through a pipe whose input is empty."""
    assert (result.code, result.stdout, result.stderr) == (1, "", LOGIN_ENDED), result


def age(device, row_id, created, last_seen, expires, idle_until):
    """Moves one session's times (all four, kept consistent) to the given moments."""
    device.execute(
        "UPDATE session SET created_at = ?, last_seen_at = ?, expires_at = ?, idle_until = ?"
        " WHERE id = ?", stamp(created), stamp(last_seen), stamp(expires), stamp(idle_until),
        row_id)


def expire_absolutely(device, row_id):
    """The session began 25 hours ago and was used a minute ago: past its absolute end only."""
    t = now()
    age(device, row_id, t - datetime.timedelta(hours=25), t - datetime.timedelta(minutes=1),
        t - datetime.timedelta(hours=1), t + datetime.timedelta(minutes=59))


def expire_idle(device, row_id):
    """The session was last used two hours ago: past its idle end only."""
    t = now()
    age(device, row_id, t - datetime.timedelta(hours=2), t - datetime.timedelta(hours=2),
        t + datetime.timedelta(hours=22), t - datetime.timedelta(hours=1))


def events(device, kind):
    result = device.run("log", "--event", kind, "--json")
    assert (result.code, result.stderr) == (0, ""), result
    return [json.loads(line) for line in result.out_lines]


def other_database(device):
    """A second activated database beside the device's; returns the env that uses it
    (same HOME and XDG_STATE_HOME, so the same session file)."""
    path = new_store(device.root / "y" / "other.sqlite3")
    env = device.env(ACCOUNTS_DATABASE=str(path))
    result = device.run("activate", input=form(), env=env)
    assert result.code == 0, result
    return path, env


@pytest.fixture
def two(activated):
    activated.add_user()
    return activated
