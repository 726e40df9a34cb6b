"""Sessions: a login lasts until logout, expiry or an administrator ends it. The client
keeps a 256-bit token in `$XDG_STATE_HOME/accounts/session`; the database keeps only its SHA-256."""

import datetime
import hashlib
import json
import os
import pathlib
import re
import shutil
import stat

import pytest

from conftest import (BOB, BOB_FULL_NAME, BOB_PASSWORD, FULL_NAME, NEW_PASSWORD, NOBODY_UID,
                      PASSWORD, USERNAME, WRONG_PASSWORD, finish, form, new_store, screen)

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
HEADER = ("ID      USER NAME         STARTED                   LAST SEEN                 ENDS"
          "                      2FA")
WHOAMI_KEYS = ["loggedIn", "username", "fullName", "session", "startedAt", "lastSeenAt",
               "expiresAt", "idleUntil", "secondFactor"]
LIST_KEYS = ["session", "username", "startedAt", "lastSeenAt", "expiresAt", "idleUntil",
             "secondFactor"]
COLUMNS = ["id", "token_hash", "account_id", "created_at", "last_seen_at", "expires_at",
           "idle_seconds", "idle_until", "second_factor"]


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
    """(database, token) from a session file, after checking its three lines exactly."""
    lines = path.read_text().split("\n")
    assert len(lines) == 4 and lines[3] == "", lines
    assert lines[0] == "accounts-session 1"
    assert lines[1].startswith("database ") and lines[2].startswith("token "), lines
    token = lines[2][len("token "):]
    assert TOKEN.match(token), token
    return lines[1][len("database "):], token


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


# login starts a session.

def test_login_writes_the_session_file(activated):
    """login writes `accounts-session 1`, the absolute database path and a 64-hex-digit token,
    mode 0600, in a folder made 0700, with no temporary file left beside it."""
    result = activated.login()
    assert (result.code, result.stdout, result.stderr) == (0, WELCOME + "\n", "")
    path = activated.session_file
    database, token = read_session_file(path)
    assert database == str(activated.db)
    info = os.lstat(path)
    assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600
    assert info.st_uid == os.geteuid()
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert os.listdir(path.parent) == ["session"]


def test_database_stores_only_the_hash_of_the_token(activated):
    """The session row holds SHA-256 of the token's 32 bytes as a 32-byte BLOB; the token itself
    is stored nowhere in the row."""
    assert activated.login().code == 0
    _, token = read_session_file(activated.session_file)
    rows = activated.query("SELECT * FROM session")
    assert len(rows) == 1
    (row,) = sessions(activated)
    assert row["token_hash"] == hashlib.sha256(bytes.fromhex(token)).digest()
    # A blob reads as bytes (text would read as str) from both stores.
    assert [(type(h), len(h)) for (h,) in activated.query("SELECT token_hash FROM session")] == [
        (bytes, 32)]
    for value in rows[0]:
        assert value != bytes.fromhex(token)
        assert token not in str(value) and token.upper() not in str(value)
    assert row["username"] == USERNAME and row["second_factor"] == 0


def test_session_row_times_default(activated):
    """By default a session lasts 24 hours at most and 1 hour without use; all four times are
    UTC timestamps, and the session starts with the login (last seen = started)."""
    before = now() - datetime.timedelta(seconds=1)
    row = logged_in(activated)
    after = now() + datetime.timedelta(seconds=1)
    created = parse(row["created_at"])
    assert before <= created <= after
    assert row["last_seen_at"] == row["created_at"]
    assert close_to(parse(row["expires_at"]) - created, 24 * 3600)
    assert row["idle_seconds"] == 3600
    assert close_to(parse(row["idle_until"]) - parse(row["last_seen_at"]), 3600)


def test_second_login_replaces_the_token_and_ends_the_previous_session(activated):
    """A second login writes a new token, and the session the old one named is deleted."""
    first = logged_in(activated)
    _, old_token = read_session_file(activated.session_file)
    second = logged_in(activated)
    _, new_token = read_session_file(activated.session_file)
    assert new_token != old_token
    assert [r["token_hash"] for r in sessions(activated)] == [token_hash(new_token)]
    assert first["token_hash"] == token_hash(old_token) != second["token_hash"]


def test_login_as_another_account_ends_the_clients_previous_session(two):
    """The session the client's file named is ended even when the next login is another
    account's; sessions of other clients stay."""
    logged_in(two, BOB, BOB_PASSWORD)
    elsewhere = Client(two, "elsewhere")
    elsewhere.login(BOB, BOB_PASSWORD)
    alices = logged_in(two)
    assert [r["id"] for r in sessions(two, BOB)] == [elsewhere.row()["id"]]
    assert alices["username"] == USERNAME
    assert whoami(two).out_lines[0] == f"Logged in as {USERNAME} ({FULL_NAME})."


@pytest.mark.sqlite_only  # a relative SQLite path made absolute
def test_relative_database_path_is_written_absolute(activated):
    """With a relative --database, the session file still names the database by absolute path,
    and a command given the absolute path sees the session."""
    env = activated.env(database=False)
    relative = os.path.relpath(activated.db, activated.root)
    result = activated.run("login", "--database", relative, input=f"{USERNAME}\n{PASSWORD}\n",
                           env=env)
    assert result.code == 0, result
    assert read_session_file(activated.session_file)[0] == str(activated.db)
    assert whoami(activated).code == 0


@pytest.mark.sqlite_only  # the SQLite path as the session file records it
def test_session_is_found_however_the_database_is_named(activated):
    """A login with `--database ./x/accounts.sqlite3`: the session file records the canonical
    path (the folder's real path and the file's name), so the session is found from another
    folder (`../x/accounts.sqlite3`), through a link to the folder, and by the absolute path."""
    env = activated.env(database=False)
    folder = activated.db.parent
    result = activated.run("login", "--database", f"./{folder.name}/./{activated.db.name}",
                           input=f"{USERNAME}\n{PASSWORD}\n", env=env)
    assert result.code == 0, result
    assert read_session_file(activated.session_file)[0] == str(activated.db)
    elsewhere = activated.root / "elsewhere"
    elsewhere.mkdir()
    (activated.root / "link").symlink_to(folder)
    for database, cwd in [(f"../{folder.name}/{activated.db.name}", elsewhere),
                          (f"link/{activated.db.name}", activated.root),
                          (str(activated.root / "link" / ".." / folder.name / activated.db.name),
                           elsewhere),
                          (str(activated.db), elsewhere)]:
        result = activated.run("whoami", "--database", database, env=env, cwd=str(cwd))
        assert (result.code, result.stderr) == (0, ""), (database, result)
        assert result.out_lines[0] == f"Logged in as {USERNAME} ({FULL_NAME}).", result


@pytest.mark.sqlite_only  # the SQLite path as the session file records it
def test_session_file_of_an_earlier_version(activated):
    """Session files written before paths were recorded canonical: one naming the database by
    an absolute path that is not canonical (`/…/./x/../x/accounts.sqlite3`) is still this
    database's session; one naming it by a relative path (written by hand: no version wrote
    one) names no database, so it is not a login here (exit 1, the file kept as it is), and a
    login replaces it."""
    logged_in(activated)
    _, token = read_session_file(activated.session_file)
    folder = activated.db.parent
    roundabout = f"{folder}/./../{folder.name}/{activated.db.name}"
    activated.session_file.write_text(
        f"accounts-session 1\ndatabase {roundabout}\ntoken {token}\n")
    result = whoami(activated)
    assert (result.code, result.stderr) == (0, ""), result
    assert result.out_lines[0] == f"Logged in as {USERNAME} ({FULL_NAME}).", result

    relative = f"accounts-session 1\ndatabase {folder.name}/{activated.db.name}\ntoken {token}\n"
    activated.session_file.write_text(relative)
    for cwd in (activated.root, folder):
        assert_not_logged_in(activated.run("whoami", cwd=str(cwd)))
    assert activated.session_file.read_text() == relative
    assert activated.login().code == 0
    assert read_session_file(activated.session_file)[0] == str(activated.db)
    assert whoami(activated).code == 0


@pytest.mark.parametrize("state", [None, "relative/state"], ids=["unset", "relative"])
def test_session_file_without_absolute_xdg_state_home(activated, state):
    """XDG_STATE_HOME unset or relative: the session file is ~/.local/state/accounts/session."""
    env = activated.env(XDG_STATE_HOME=state)
    assert activated.login(env=env).code == 0
    path = activated.home / ".local" / "state" / "accounts" / "session"
    assert read_session_file(path)[0] == str(activated.db)
    assert stat.S_IMODE(os.lstat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert not activated.session_file.exists()
    assert not (activated.root / "relative").exists()
    assert whoami(activated, env=env).code == 0


def test_no_session_leaves_no_file_and_no_row(activated):
    """`login --no-session` shows Home but starts no session: no file, no row."""
    result = activated.run("login", "--no-session", input=f"{USERNAME}\n{PASSWORD}\n")
    assert (result.code, result.stdout, result.stderr) == (0, WELCOME + "\n", "")
    assert not activated.session_file.exists()
    assert not activated.session_file.parent.exists() or \
        os.listdir(activated.session_file.parent) == []
    assert sessions(activated) == []
    assert_not_logged_in(whoami(activated))


def test_no_session_does_not_touch_the_current_session(activated):
    """`login --no-session` after a login leaves the session file byte for byte, and its row."""
    row = logged_in(activated)
    before = activated.session_file.read_bytes()
    result = activated.run("login", "--no-session", "--username", USERNAME, "--password-stdin",
                           input=PASSWORD + "\n")
    assert result.code == 0, result
    assert activated.session_file.read_bytes() == before
    assert [r["id"] for r in sessions(activated)] == [row["id"]]


def test_failed_login_starts_no_session(activated):
    """A wrong password writes no session file and no row."""
    assert activated.login(USERNAME, WRONG_PASSWORD).code == 1
    assert not activated.session_file.exists()
    assert sessions(activated) == []


# Bare `accounts`.

def test_bare_with_live_session_prints_home_without_prompt(activated):
    """With a live session, bare `accounts` through a pipe with empty stdin prints Home (the
    session's start as Last login), asks nothing, exit 0."""
    row = logged_in(activated)
    assert_home_without_prompt(bare(activated), row)
    assert_home_without_prompt(bare(activated), row)


def test_bare_with_live_session_at_terminal(activated):
    """At a terminal too, a live session goes straight to Home: no `User name: ` prompt."""
    row = logged_in(activated)
    child = activated.spawn()
    assert finish(child) == 0
    shown = screen(child)
    assert "User name" not in shown and "Password" not in shown
    lines = shown.splitlines()
    assert lines[0] == WELCOME
    assert re.fullmatch("Last login: " + long_time(parse(row["created_at"])), lines[1]), lines
    assert len(lines) == 2, lines


def test_bare_with_live_session_shows_failures_since(activated):
    """Home from a session shows the failures line as usual: a failed login (elsewhere) after
    the session began is counted."""
    row = logged_in(activated)
    elsewhere = Client(activated, "elsewhere")
    assert activated.login(USERNAME, WRONG_PASSWORD, env=elsewhere.env()).code == 1
    result = bare(activated)
    assert (result.code, result.stderr) == (0, ""), result
    assert result.out_lines[0] == WELCOME
    assert re.fullmatch("Last login: " + long_time(parse(row["created_at"])),
                        result.out_lines[1])
    assert result.out_lines[2:] == ["1 failed attempt since your last login"]


def test_bare_without_session_asks_to_log_in(activated):
    """Without a session file bare `accounts` is the Login of today."""
    assert_asks_to_log_in(bare(activated))
    child = activated.spawn()
    child.expect_exact("User name: ")
    child.sendeof()
    assert finish(child) == 1


def test_bare_login_starts_a_session(activated):
    """A successful login in the bare flow writes a session file; the next bare run asks nothing."""
    result = bare(activated, f"{USERNAME}\n{PASSWORD}\n")
    assert (result.code, result.stdout) == (0, WELCOME + "\n"), result
    _, token = read_session_file(activated.session_file)
    (row,) = sessions(activated)
    assert row["token_hash"] == token_hash(token)
    assert_home_without_prompt(bare(activated), row)


def test_use_within_a_minute_does_not_write_last_seen(activated):
    """Last use is written at most once a minute: using a fresh session leaves its row as it was."""
    row = logged_in(activated)
    assert bare(activated).code == 0
    assert whoami(activated).code == 0
    assert sessions(activated) == [row]


def test_use_after_a_minute_moves_the_idle_end(activated):
    """A session last used two minutes ago: using it writes last_seen_at (now) and moves
    idle_until to last_seen_at + idle_seconds; the absolute end does not move."""
    row = logged_in(activated)
    t = now()
    age(activated, row["id"], t - datetime.timedelta(minutes=2),
        t - datetime.timedelta(minutes=2), parse(row["expires_at"]),
        t + datetime.timedelta(minutes=58))
    before = now() - datetime.timedelta(seconds=1)
    assert bare(activated).code == 0
    (used,) = sessions(activated)
    seen = parse(used["last_seen_at"])
    assert before <= seen <= now() + datetime.timedelta(seconds=1)
    assert close_to(parse(used["idle_until"]) - seen, 3600)
    assert used["expires_at"] == row["expires_at"]


# whoami.

def test_whoami_text(activated):
    """whoami: `Logged in as alice (Alice Liddell).` and when the session ends, exit 0."""
    logged_in(activated)
    result = whoami(activated)
    (row,) = sessions(activated)
    assert (result.code, result.stderr) == (0, ""), result
    lines = result.out_lines
    assert len(lines) == 2, lines
    assert lines[0] == f"Logged in as {USERNAME} ({FULL_NAME})."
    match = re.fullmatch(
        r"The session ends at (" + long_time(parse(row["expires_at"]))
        + r"), or sooner after (.+) without use\.", lines[1])
    assert match, lines[1]
    assert match.group(2) in durations(3600), match.group(2)


def test_whoami_text_names_the_idle_setting(activated):
    """With ACCOUNTS_SESSION_IDLE=15m, whoami says `or sooner after 15 minutes without use.`"""
    env = activated.env(ACCOUNTS_SESSION_IDLE="15m")
    assert activated.login(env=env).code == 0
    result = whoami(activated)
    assert result.code == 0, result
    assert result.out_lines[1].endswith(", or sooner after 15 minutes without use."), result


def test_whoami_json(two):
    """whoami --json: one line, every key in order, values equal to the session row."""
    logged_in(two, BOB, BOB_PASSWORD)
    result = whoami(two, "--json")
    (row,) = sessions(two)
    assert (result.code, result.stderr) == (0, ""), result
    assert len(result.out_lines) == 1
    obj = json.loads(result.stdout)
    assert list(obj) == WHOAMI_KEYS
    assert obj == {
        "loggedIn": True, "username": BOB, "fullName": BOB_FULL_NAME, "session": row["id"],
        "startedAt": row["created_at"], "lastSeenAt": row["last_seen_at"],
        "expiresAt": row["expires_at"], "idleUntil": row["idle_until"], "secondFactor": False}
    assert type(obj["session"]) is int


def test_whoami_follows_an_edited_account(two):
    """Editing the account (new user name and full name) keeps its session; whoami shows the
    account as it is now."""
    row = logged_in(two, BOB, BOB_PASSWORD)
    result = two.run("user", "edit", BOB, "--username", "robert", "--full-name", "Robert Builder")
    assert result.code == 0, result
    assert whoami(two).out_lines[0] == "Logged in as robert (Robert Builder)."
    assert json.loads(whoami(two, "--json").stdout)["session"] == row["id"]


def test_whoami_not_logged_in(activated):
    """No session file: stderr `Not logged in.` exit 1; --json: `{"loggedIn":false}` exit 1."""
    assert_not_logged_in(whoami(activated))
    result = whoami(activated, "--json")
    assert (result.code, result.stdout) == (1, '{"loggedIn":false}\n'), result


def test_whoami_without_database(device):
    """No database at all: not logged in, and no database is made."""
    assert_not_logged_in(whoami(device))
    result = whoami(device, "--json")
    assert (result.code, result.stdout) == (1, '{"loggedIn":false}\n'), result
    assert_not_logged_in(device.run("logout"))
    assert_not_logged_in(device.run("logout", "--all"))
    assert not device.db.exists()


def test_whoami_with_a_session_file_but_no_database(device):
    """A session file naming a database that is not there: not logged in, nothing made."""
    device.session_file.parent.mkdir(mode=0o700)
    device.session_file.write_text(
        f"accounts-session 1\ndatabase {device.db}\ntoken {'ab' * 32}\n")
    device.session_file.chmod(0o600)
    assert_not_logged_in(whoami(device))
    assert not device.db.exists()


def test_whoami_unknown_token(activated):
    """A session file for this database whose token has no row: not logged in, exit 1."""
    logged_in(activated)
    activated.session_file.write_text(
        f"accounts-session 1\ndatabase {activated.db}\ntoken {'cd' * 32}\n")
    assert_not_logged_in(whoami(activated))
    result = whoami(activated, "--json")
    assert (result.code, result.stdout) == (1, '{"loggedIn":false}\n'), result


# logout.

def test_logout_ends_the_session(activated):
    """logout: `Logged out.` exit 0; file and row removed; event logout; next bare run logs in."""
    logged_in(activated)
    result = activated.run("logout")
    assert (result.code, result.stdout, result.stderr) == (0, LOGGED_OUT, ""), result
    assert not activated.session_file.exists()
    assert sessions(activated) == []
    text = activated.run("log", "--event", "logout")
    assert text.code == 0, text
    assert len(text.out_lines) == 1
    assert re.match(r"^\S+  logout\s+alice", text.out_lines[0]), text.out_lines
    assert [e["user"] for e in events(activated, "logout")] == [USERNAME]
    assert_asks_to_log_in(bare(activated))
    assert_not_logged_in(whoami(activated))


def test_logout_when_not_logged_in(activated):
    """logout without a session file: stderr `Not logged in.` exit 1, no event."""
    assert_not_logged_in(activated.run("logout"))
    assert events(activated, "logout") == []


def test_logout_of_an_expired_session(activated):
    """logout of a session that already expired still says `Logged out.`, exit 0, and removes
    the file and the row."""
    row = logged_in(activated)
    expire_absolutely(activated, row["id"])
    result = activated.run("logout")
    assert (result.code, result.stdout, result.stderr) == (0, LOGGED_OUT, ""), result
    assert not activated.session_file.exists()
    assert sessions(activated) == []


def test_logout_all_ends_every_session_of_the_account(two):
    """logout --all from one of three clients ends all three of alice's sessions (`Logged out:
    3 sessions ended.`) and not bob's."""
    clients = [Client(two, name) for name in ("a", "b", "c")]
    for client in clients:
        client.login()
    bobs = Client(two, "bob")
    bobs.login(BOB, BOB_PASSWORD)
    assert len(sessions(two, USERNAME)) == 3
    result = clients[0].run("logout", "--all")
    assert (result.code, result.stdout, result.stderr) == (
        0, "Logged out: 3 sessions ended.\n", ""), result
    assert sessions(two, USERNAME) == []
    assert not clients[0].session_file.exists()
    for client in clients[1:]:
        assert_not_logged_in(client.run("whoami"))
    assert bobs.row() is not None
    assert bobs.run("whoami").out_lines[0] == f"Logged in as {BOB} ({BOB_FULL_NAME})."


def test_logout_all_with_one_session_is_singular(activated):
    """logout --all with only its own session: `Logged out: 1 session ended.`"""
    logged_in(activated)
    result = activated.run("logout", "--all")
    assert (result.code, result.stdout, result.stderr) == (
        0, "Logged out: 1 session ended.\n", ""), result
    assert sessions(activated) == []


def test_logout_all_needs_a_live_session(activated):
    """logout --all with an expired session, or none: `Not logged in.` exit 1, the other
    sessions of the account stay."""
    other = Client(activated, "other")
    other.login()
    assert_not_logged_in(activated.run("logout", "--all"))
    row = logged_in(activated)
    expire_idle(activated, row["id"])
    assert_not_logged_in(activated.run("logout", "--all"))
    assert other.row() is not None


# Expiry, without waiting.

@pytest.mark.parametrize("expire", [expire_absolutely, expire_idle], ids=["absolute", "idle"])
def test_expired_session_is_not_logged_in(activated, expire):
    """A session past its absolute or its idle end: whoami says `Not logged in.` exit 1."""
    row = logged_in(activated)
    expire(activated, row["id"])
    assert_not_logged_in(whoami(activated))
    result = whoami(activated, "--json")
    assert (result.code, result.stdout) == (1, '{"loggedIn":false}\n'), result


@pytest.mark.parametrize("expire", [expire_absolutely, expire_idle], ids=["absolute", "idle"])
def test_expired_session_bare_asks_to_log_in_and_removes_the_file(activated, expire):
    """Bare `accounts` with an expired session: the Login of today, and the stale file is gone."""
    row = logged_in(activated)
    expire(activated, row["id"])
    assert_asks_to_log_in(bare(activated))
    assert not activated.session_file.exists()


@pytest.mark.parametrize("expire", [expire_absolutely, expire_idle], ids=["absolute", "idle"])
def test_expired_session_bare_login_starts_a_new_one(activated, expire):
    """Bare `accounts` with an expired session and a right login: Home, a new token, and the
    expired row is gone."""
    row = logged_in(activated)
    _, old = read_session_file(activated.session_file)
    expire(activated, row["id"])
    result = bare(activated, f"{USERNAME}\n{PASSWORD}\n")
    assert (result.code, result.out_lines[0]) == (0, WELCOME), result
    _, new = read_session_file(activated.session_file)
    assert new != old
    assert [r["token_hash"] for r in sessions(activated)] == [token_hash(new)]


def test_unknown_token_bare_removes_the_file(activated):
    """A session file whose token has no row (revoked): bare `accounts` logs in as today and
    removes the file."""
    row = logged_in(activated)
    assert activated.run("session", "revoke", str(row["id"])).code == 0
    assert activated.session_file.exists()
    assert_asks_to_log_in(bare(activated))
    assert not activated.session_file.exists()


# Settings.

@pytest.mark.parametrize("value,seconds", [
    ("300", 300), ("5m", 300), ("900", 900), ("15m", 900), ("2h", 7200), ("86400", 86400),
    ("24h", 86400), ("1440m", 86400)])
def test_lifetime_setting(activated, value, seconds):
    """ACCOUNTS_SESSION_LIFETIME sets the stored absolute end: expires_at - created_at."""
    assert activated.login(env=activated.env(ACCOUNTS_SESSION_LIFETIME=value)).code == 0
    (row,) = sessions(activated)
    assert close_to(parse(row["expires_at"]) - parse(row["created_at"]), seconds)
    assert row["idle_seconds"] == 3600


@pytest.mark.parametrize("value,seconds", [
    ("300", 300), ("5m", 300), ("600", 600), ("10m", 600), ("3600", 3600), ("60m", 3600),
    ("1h", 3600)])
def test_idle_setting(activated, value, seconds):
    """ACCOUNTS_SESSION_IDLE sets idle_seconds and idle_until = last_seen_at + that."""
    assert activated.login(env=activated.env(ACCOUNTS_SESSION_IDLE=value)).code == 0
    (row,) = sessions(activated)
    assert row["idle_seconds"] == seconds
    assert close_to(parse(row["idle_until"]) - parse(row["last_seen_at"]), seconds)
    assert close_to(parse(row["expires_at"]) - parse(row["created_at"]), 86400)


def test_setting_applies_when_the_session_starts(activated):
    """The stored values stay: a later command with another setting does not change the row."""
    assert activated.login(env=activated.env(ACCOUNTS_SESSION_IDLE="10m",
                                              ACCOUNTS_SESSION_LIFETIME="1h")).code == 0
    (row,) = sessions(activated)
    assert whoami(activated, env=activated.env(ACCOUNTS_SESSION_IDLE="20m",
                                               ACCOUNTS_SESSION_LIFETIME="2h")).code == 0
    assert bare(activated, env=activated.env(ACCOUNTS_SESSION_IDLE="20m")).code == 0
    assert sessions(activated) == [row]
    assert row["idle_seconds"] == 600


@pytest.mark.parametrize("name,value", [
    ("ACCOUNTS_SESSION_LIFETIME", "299"), ("ACCOUNTS_SESSION_LIFETIME", "4m"),
    ("ACCOUNTS_SESSION_LIFETIME", "86401"), ("ACCOUNTS_SESSION_LIFETIME", "25h"),
    ("ACCOUNTS_SESSION_LIFETIME", "0"), ("ACCOUNTS_SESSION_LIFETIME", "-1h"),
    ("ACCOUNTS_SESSION_LIFETIME", "1d"), ("ACCOUNTS_SESSION_LIFETIME", "abc"),
    ("ACCOUNTS_SESSION_LIFETIME", "1.5h"),
    ("ACCOUNTS_SESSION_IDLE", "299"), ("ACCOUNTS_SESSION_IDLE", "4m"),
    ("ACCOUNTS_SESSION_IDLE", "3601"), ("ACCOUNTS_SESSION_IDLE", "61m"),
    ("ACCOUNTS_SESSION_IDLE", "2h"), ("ACCOUNTS_SESSION_IDLE", "0"),
    ("ACCOUNTS_SESSION_IDLE", "ten minutes"), ("ACCOUNTS_SESSION_IDLE", "10x")])
def test_unusable_session_setting(activated, name, value):
    """A session setting out of range or not a duration: exit 2, one sentence naming the setting
    and the value; no session started."""
    result = activated.login(env=activated.env(**{name: value}))
    assert (result.code, result.stdout) == (2, ""), result
    assert len(result.err_lines) == 1, result
    assert result.stderr.startswith(f"{name} must be "), result
    assert result.stderr.endswith(f'not "{value}".\n'), result
    assert not activated.session_file.exists()
    assert sessions(activated) == []


# The session file refused.

def make_group_readable(device):
    device.session_file.chmod(0o644)
    return device.session_file


def give_to_nobody(device):
    os.chown(device.session_file, NOBODY_UID, NOBODY_UID)
    return device.session_file


def make_symlink(device):
    """The session file is a symbolic link to a private copy of the real one."""
    target = device.root / "elsewhere"
    target.mkdir(mode=0o700)
    real = target / "session"
    os.rename(device.session_file, real)
    os.symlink(real, device.session_file)
    return real


REFUSALS = [make_group_readable, give_to_nobody, make_symlink]
REFUSAL_IDS = ["mode-0644", "other-owner", "symlink"]
READERS = [[], ["whoami"], ["logout"], ["2fa", "status"]]
READER_IDS = ["bare", "whoami", "logout", "2fa-status"]


@pytest.mark.parametrize("args", READERS, ids=READER_IDS)
@pytest.mark.parametrize("spoil", REFUSALS, ids=REFUSAL_IDS)
def test_refused_session_file(activated, spoil, args):
    """A session file with a group/other bit, of another owner, or a symlink is refused by the
    commands that read it: exit 3, one sentence naming the file and telling to remove it; the
    file and the session stay."""
    row = logged_in(activated)
    kept = spoil(activated)
    before = kept.read_bytes()
    result = activated.run(*args, input="")
    assert (result.code, result.stdout) == (STORAGE, ""), result
    assert len(result.err_lines) == 1, result
    line = result.err_lines[0]
    assert str(activated.session_file) in line, line
    assert "remove" in line.lower(), line
    assert os.path.lexists(activated.session_file)
    assert kept.read_bytes() == before
    assert [r["id"] for r in sessions(activated)] == [row["id"]]


@pytest.mark.parametrize("spoil", REFUSALS, ids=REFUSAL_IDS)
def test_login_replaces_a_refused_session_file(activated, spoil):
    """login does not read a refused session file; it replaces it with a private regular file of
    ours holding a new token (a symlink's target is left alone)."""
    logged_in(activated)
    kept = spoil(activated)
    before = kept.read_bytes()
    _, old_token = read_session_file(kept)
    result = activated.login()
    assert (result.code, result.out_lines[0], result.stderr) == (0, WELCOME, ""), result
    info = os.lstat(activated.session_file)
    assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600
    assert info.st_uid == os.geteuid()
    _, token = read_session_file(activated.session_file)
    assert token != old_token
    if kept != activated.session_file:
        assert kept.read_bytes() == before
    assert whoami(activated).code == 0


@pytest.mark.parametrize("content", [
    "garbage\n", "accounts-session 2\ndatabase {db}\ntoken {token}\n",
    "accounts-session 1\ndatabase {db}\ntoken {short}\n",
    "accounts-session 1\ndatabase {db}\ntoken {upper}\n", ""],
    ids=["garbage", "version-2", "short-token", "uppercase-token", "empty"])
@pytest.mark.parametrize("args", READERS[:3], ids=READER_IDS[:3])
def test_damaged_session_file(activated, content, args):
    """A private session file that is not the contract's three lines is damaged: exit 3, one
    sentence naming the file; it stays as it is."""
    row = logged_in(activated)
    _, token = read_session_file(activated.session_file)
    activated.session_file.write_text(content.format(
        db=activated.db, token=token, short=token[:-2], upper=token.upper()))
    before = activated.session_file.read_bytes()
    result = activated.run(*args, input="")
    assert (result.code, result.stdout) == (STORAGE, ""), result
    assert len(result.err_lines) == 1 and str(activated.session_file) in result.stderr, result
    assert activated.session_file.read_bytes() == before
    assert [r["id"] for r in sessions(activated)] == [row["id"]]


def test_login_replaces_a_damaged_session_file(activated):
    """login replaces a damaged session file with a good one."""
    logged_in(activated)
    activated.session_file.write_text("garbage\n")
    assert activated.login().code == 0
    assert read_session_file(activated.session_file)[0] == str(activated.db)
    assert whoami(activated).code == 0


# A session file naming another database.

def test_session_of_another_database_is_ignored(activated):
    """A session file naming another database: whoami, logout and bare `accounts` there say not
    logged in / ask to log in, and leave the file as it is."""
    row = logged_in(activated)
    _, env = other_database(activated)
    before = activated.session_file.read_bytes()
    assert_not_logged_in(whoami(activated, env=env))
    result = whoami(activated, "--json", env=env)
    assert (result.code, result.stdout) == (1, '{"loggedIn":false}\n'), result
    assert_not_logged_in(activated.run("logout", env=env))
    assert_asks_to_log_in(bare(activated, env=env))
    assert activated.session_file.read_bytes() == before
    assert [r["id"] for r in sessions(activated)] == [row["id"]]
    assert whoami(activated).code == 0


def test_login_on_another_database_keeps_the_first_databases_session(activated):
    """A login on another database replaces the file (it now names that database); the session
    on the first database is not ended, only no longer this client's."""
    row = logged_in(activated)
    other, env = other_database(activated)
    assert activated.login(env=env).code == 0
    assert read_session_file(activated.session_file)[0] == str(other)
    assert [r["id"] for r in sessions(activated)] == [row["id"]]
    assert_not_logged_in(whoami(activated))
    assert whoami(activated, env=env).code == 0


# Sessions end.

def test_passwd_ends_the_other_sessions(activated):
    """passwd ends every other session of the account; this client's session stays."""
    here = logged_in(activated)
    others = [Client(activated, name) for name in ("b", "c")]
    for client in others:
        client.login()
    result = activated.run("passwd", input=f"{USERNAME}\n{PASSWORD}\n{NEW_PASSWORD}\n"
                                           f"{NEW_PASSWORD}\n")
    assert (result.code, result.stdout) == (0, f"Password changed for {USERNAME}.\n"), result
    assert [r["id"] for r in sessions(activated)] == [here["id"]]
    assert whoami(activated).code == 0
    for client in others:
        assert_not_logged_in(client.run("whoami"))


def test_passwd_from_a_client_of_another_account(two):
    """passwd for alice from a client holding bob's session ends all of alice's sessions and
    none of bob's."""
    bobs = logged_in(two, BOB, BOB_PASSWORD)
    alices = [Client(two, name) for name in ("b", "c")]
    for client in alices:
        client.login()
    result = two.run("passwd", input=f"{USERNAME}\n{PASSWORD}\n{NEW_PASSWORD}\n{NEW_PASSWORD}\n")
    assert result.code == 0, result
    assert [r["id"] for r in sessions(two)] == [bobs["id"]]


def test_user_passwd_ends_every_session_of_the_account(two):
    """`user passwd alice` ends all of alice's sessions, this client's too; bob's stay."""
    logged_in(two)
    other = Client(two, "other")
    other.login()
    bobs = Client(two, "bob")
    bobs.login(BOB, BOB_PASSWORD)
    result = two.run("user", "passwd", USERNAME, "--password-stdin", input=NEW_PASSWORD + "\n")
    assert (result.code, result.stdout) == (0, f"Password set for {USERNAME}.\n"), result
    assert sessions(two, USERNAME) == []
    assert_not_logged_in(whoami(two))
    assert_not_logged_in(other.run("whoami"))
    assert bobs.row() is not None


def test_login_that_must_change_the_password_ends_the_others(two):
    """The login that must change the password ends every other session of the account."""
    older = Client(two, "older")
    older.login(BOB, BOB_PASSWORD)
    two.execute("UPDATE account SET must_change_password = ? WHERE username_key = ?", True, BOB)
    alices = Client(two, "alice")
    alices.login()
    result = two.run("login", input=f"{BOB}\n{BOB_PASSWORD}\n{NEW_PASSWORD}\n{NEW_PASSWORD}\n")
    assert (result.code, result.out_lines[0]) == (0, BOB_WELCOME), result
    assert result.stderr == "You must choose a new password before you continue.\n"
    _, token = read_session_file(two.session_file)
    assert [r["token_hash"] for r in sessions(two, BOB)] == [token_hash(token)]
    assert alices.row() is not None
    assert_not_logged_in(older.run("whoami"))


def test_user_disable_ends_the_accounts_sessions(two):
    """`user disable bob` ends bob's sessions (whoami: not logged in); alice's stay."""
    alices = logged_in(two)
    bobs = Client(two, "bob")
    bobs.login(BOB, BOB_PASSWORD)
    assert two.run("user", "disable", BOB).code == 0
    assert [r["id"] for r in sessions(two)] == [alices["id"]]
    assert_not_logged_in(bobs.run("whoami"))
    assert_asks_to_log_in(bobs.run(input=""))


def test_session_of_a_disabled_account_is_not_live(two):
    """A session row whose account is disabled (even if the row was somehow kept) does not
    log anyone in: whoami says not logged in, the bare flow asks to log in."""
    logged_in(two, BOB, BOB_PASSWORD)
    two.execute("UPDATE account SET disabled_at = ? WHERE username_key = ?", stamp(now()), BOB)
    assert_not_logged_in(whoami(two))
    assert_asks_to_log_in(bare(two))


def test_user_remove_ends_the_accounts_sessions(two):
    """`user remove bob --yes` deletes bob's sessions with him, leaves the foreign keys whole,
    and alice's sessions stay."""
    alices = logged_in(two)
    bobs = [Client(two, name) for name in ("b1", "b2")]
    for client in bobs:
        client.login(BOB, BOB_PASSWORD)
    assert two.run("user", "remove", BOB, "--yes").code == 0
    assert [r["id"] for r in sessions(two)] == [alices["id"]]
    assert two.query("SELECT count(*) FROM session") == [(1,)]
    assert two.foreign_key_violations() == []
    for client in bobs:
        assert_not_logged_in(client.run("whoami"))


def test_reset_ends_every_session(two):
    """`reset --yes` deletes every session with the accounts; whoami then says not logged in."""
    logged_in(two)
    bobs = Client(two, "bob")
    bobs.login(BOB, BOB_PASSWORD)
    assert two.run("reset", "--yes").code == 0
    assert two.query("SELECT count(*) FROM session") == [(0,)]
    assert_not_logged_in(whoami(two))
    assert_not_logged_in(bobs.run("whoami"))
    result = whoami(two, "--json")
    assert (result.code, result.stdout) == (1, '{"loggedIn":false}\n'), result


def test_user_show_counts_live_sessions(two):
    """`user show` ends with `Two-factor: off` and `Sessions: N` (live sessions of that account)."""
    for name in ("b1", "b2"):
        Client(two, name).login(BOB, BOB_PASSWORD)
    logged_in(two)
    result = two.run("user", "show", BOB)
    assert result.code == 0, result
    assert result.out_lines[-2:] == ["Two-factor: off", "Sessions: 2"]
    assert two.run("session", "revoke", "--user", BOB).code == 0
    assert two.run("user", "show", BOB).out_lines[-1] == "Sessions: 0"
    assert two.run("user", "show", USERNAME).out_lines[-1] == "Sessions: 1"


# session list.

def list_line(row, ends, two_factor="no"):
    return (f"{row['id']:<6}  {row['username']:<16}  {row['created_at']:<24}  "
            f"{row['last_seen_at']:<24}  {ends:<24}  {two_factor}")


def test_session_list_text(two):
    """session list: the exact header, then one line per live session by id: id, user name,
    started, last seen, ends = the earlier of the two ends, 2FA."""
    logged_in(two)
    bobs = Client(two, "bob")
    bobs.login(BOB, BOB_PASSWORD)
    first, second = sessions(two)
    soon = now() + datetime.timedelta(minutes=10)
    two.execute("UPDATE session SET expires_at = ? WHERE id = ?", stamp(soon), first["id"])
    first, second = sessions(two)
    result = two.run("session", "list")
    assert (result.code, result.stderr) == (0, ""), result
    assert result.out_lines == [
        HEADER,
        list_line(first, first["expires_at"]),
        list_line(second, second["idle_until"])]


def test_session_list_json(two):
    """session list --json: no header, one object per line, every key in order, from the rows."""
    logged_in(two)
    Client(two, "bob").login(BOB, BOB_PASSWORD)
    result = two.run("session", "list", "--json")
    assert (result.code, result.stderr) == (0, ""), result
    objects = [json.loads(line) for line in result.out_lines]
    for obj in objects:
        assert list(obj) == LIST_KEYS
    assert objects == [
        {"session": r["id"], "username": r["username"], "startedAt": r["created_at"],
         "lastSeenAt": r["last_seen_at"], "expiresAt": r["expires_at"],
         "idleUntil": r["idle_until"], "secondFactor": False}
        for r in sessions(two)]


def test_session_list_shows_the_rows_second_factor(two):
    """A session that began with a second factor shows `yes` / true."""
    row = logged_in(two)
    two.execute("UPDATE session SET second_factor = ? WHERE id = ?", True, row["id"])
    result = two.run("session", "list")
    assert result.out_lines[1].endswith("  yes"), result.out_lines
    result = two.run("session", "list", "--json")
    assert json.loads(result.stdout)["secondFactor"] is True


def test_session_list_live_only(two):
    """Expired sessions (absolute or idle) are not listed."""
    a = Client(two, "a")
    b = Client(two, "b")
    c = Client(two, "c")
    a.login()
    b.login()
    c.login(BOB, BOB_PASSWORD)
    expire_absolutely(two, a.row()["id"])
    expire_idle(two, b.row()["id"])
    result = two.run("session", "list")
    assert result.code == 0, result
    live = c.row()
    assert result.out_lines == [HEADER, list_line(live, live["idle_until"])]
    result = two.run("session", "list", "--json")
    assert [json.loads(line)["session"] for line in result.out_lines] == [live["id"]]


def test_session_list_user(two):
    """--user lists one account's sessions (any case of the name)."""
    logged_in(two)
    bobs = Client(two, "bob")
    bobs.login(BOB, BOB_PASSWORD)
    row = bobs.row()
    for name in (BOB, "BOB"):
        result = two.run("session", "list", "--user", name)
        assert (result.code, result.stderr) == (0, ""), result
        assert result.out_lines == [HEADER, list_line(row, row["idle_until"])]
        result = two.run("session", "list", "--user", name, "--json")
        assert [json.loads(line)["username"] for line in result.out_lines] == [BOB]


def test_session_list_unknown_user(two):
    """--user with an unknown name: `No account named mallory.` exit 5."""
    result = two.run("session", "list", "--user", "mallory")
    assert (result.code, result.stdout, result.stderr) == (
        NO_SUCH, "", "No account named mallory.\n")
    result = two.run("session", "list", "--user", "mallory", "--json")
    assert (result.code, result.stdout, result.stderr) == (
        NO_SUCH, "", "No account named mallory.\n")


def test_session_list_empty(two):
    """No sessions: the header only (text), nothing (--json); exit 0."""
    assert two.run("session", "list").stdout == HEADER + "\n"
    result = two.run("session", "list", "--json")
    assert (result.code, result.stdout, result.stderr) == (0, "", "")
    result = two.run("session", "list", "--user", BOB)
    assert (result.code, result.stdout, result.stderr) == (0, HEADER + "\n", "")


def test_session_list_without_database(device):
    """No database: header only / nothing, exit 0, and no database made."""
    result = device.run("session", "list")
    assert (result.code, result.stdout, result.stderr) == (0, HEADER + "\n", "")
    result = device.run("session", "list", "--json")
    assert (result.code, result.stdout, result.stderr) == (0, "", "")
    assert not device.db.exists()


def test_session_list_on_public_device(device):
    """A Public device (after reset): header only / nothing, exit 0."""
    device.activate()
    assert device.login().code == 0
    assert device.run("reset", "--yes").code == 0
    result = device.run("session", "list")
    assert (result.code, result.stdout, result.stderr) == (0, HEADER + "\n", "")
    result = device.run("session", "list", "--json")
    assert (result.code, result.stdout, result.stderr) == (0, "", "")


# session revoke.

def test_session_revoke_id(two):
    """session revoke ID: `Session <id> of bob ended.` exit 0; the row is gone, whoami there is
    not logged in, one session_revoked event with detail `session <id>`."""
    alices = logged_in(two)
    bobs = Client(two, "bob")
    bobs.login(BOB, BOB_PASSWORD)
    row = bobs.row()
    result = two.run("session", "revoke", str(row["id"]))
    assert (result.code, result.stdout, result.stderr) == (
        0, f"Session {row['id']} of {BOB} ended.\n", "")
    assert [r["id"] for r in sessions(two)] == [alices["id"]]
    assert_not_logged_in(bobs.run("whoami"))
    assert [(e["user"], e["detail"]) for e in events(two, "session_revoked")] == [
        (BOB, f"session {row['id']}")]


def test_session_revoke_unknown_id(two):
    """An unknown session id: stderr `No session <id>.` exit 5; nothing ended, no event."""
    row = logged_in(two)
    unknown = row["id"] + 1000
    result = two.run("session", "revoke", str(unknown))
    assert (result.code, result.stdout, result.stderr) == (NO_SUCH, "", f"No session {unknown}.\n")
    assert [r["id"] for r in sessions(two)] == [row["id"]]
    assert events(two, "session_revoked") == []


def test_session_revoke_expired_id(two):
    """An expired session's id: `No session <id>.` exit 5, as if unknown."""
    row = logged_in(two)
    expire_idle(two, row["id"])
    result = two.run("session", "revoke", str(row["id"]))
    assert (result.code, result.stdout, result.stderr) == (
        NO_SUCH, "", f"No session {row['id']}.\n")
    assert events(two, "session_revoked") == []


def test_session_revoke_user(two):
    """session revoke --user bob: `Ended 2 sessions of bob.`; one event per session; alice's
    stay."""
    alices = logged_in(two)
    bobs = [Client(two, name) for name in ("b1", "b2")]
    for client in bobs:
        client.login(BOB, BOB_PASSWORD)
    ids = [client.row()["id"] for client in bobs]
    result = two.run("session", "revoke", "--user", BOB)
    assert (result.code, result.stdout, result.stderr) == (0, f"Ended 2 sessions of {BOB}.\n", "")
    assert [r["id"] for r in sessions(two)] == [alices["id"]]
    assert sorted((e["user"], e["detail"]) for e in events(two, "session_revoked")) == sorted(
        (BOB, f"session {i}") for i in ids)


def test_session_revoke_user_counts(two):
    """--user says `1 session` in the singular and `0 sessions` when there is none, exit 0."""
    Client(two, "bob").login(BOB, BOB_PASSWORD)
    result = two.run("session", "revoke", "--user", BOB)
    assert (result.code, result.stdout, result.stderr) == (0, f"Ended 1 session of {BOB}.\n", "")
    result = two.run("session", "revoke", "--user", BOB)
    assert (result.code, result.stdout, result.stderr) == (0, f"Ended 0 sessions of {BOB}.\n", "")
    assert len(events(two, "session_revoked")) == 1


def test_session_revoke_unknown_user(two):
    """--user with an unknown name: `No account named mallory.` exit 5."""
    result = two.run("session", "revoke", "--user", "mallory")
    assert (result.code, result.stdout, result.stderr) == (
        NO_SUCH, "", "No account named mallory.\n")


@pytest.mark.parametrize("args", [[], ["1", "--user", BOB]], ids=["neither", "both"])
def test_session_revoke_needs_exactly_one(two, args):
    """session revoke with neither an ID nor --user, or both: usage error, exit 2, nothing ended."""
    row = logged_in(two, BOB, BOB_PASSWORD)
    result = two.run("session", "revoke", *args)
    assert (result.code, result.stdout) == (2, ""), result
    assert result.stderr != ""
    assert [r["id"] for r in sessions(two)] == [row["id"]]


# Schema v3.

def test_schema_v3_tables(activated):
    """After activation the database is at v3: session, second_factor and recovery_code exist,
    STRICT (recovery_code WITHOUT ROWID), with the contract's columns and the new audit kinds.
    PostgreSQL: the same tables and columns in the schema `accounts`, from its own migration v1."""
    if activated.postgresql:
        assert "v1" in activated.migrations(), activated.migrations()
    else:
        tables = dict(activated.query("SELECT name, sql FROM sqlite_master WHERE type = 'table'"))
        for name in ("session", "second_factor", "recovery_code"):
            assert name in tables, sorted(tables)
            assert "STRICT" in tables[name].upper()
        assert "WITHOUT ROWID" in tables["recovery_code"].upper()
        assert {"v1", "v2", "v3"} <= activated.migrations(), activated.migrations()
    assert activated.columns("session") == COLUMNS
    assert activated.columns("second_factor") == [
        "account_id", "sealed_secret", "key_id", "last_step", "enabled_at"]
    assert activated.columns("recovery_code") == ["account_id", "code_hash", "used_at"]
    kinds = {r[0] for r in activated.query("SELECT name FROM audit_kind")}
    assert {"logout", "session_revoked", "second_factor_enabled", "second_factor_disabled",
            "second_factor_reset", "recovery_codes_made", "recovery_code_used"} <= kinds


def test_session_rows_cascade_with_the_account(two):
    """The session table's account_id cascades: removing an account with sessions leaves
    `PRAGMA foreign_key_check` empty and no orphan row."""
    for name in ("b1", "b2", "b3"):
        Client(two, name).login(BOB, BOB_PASSWORD)
    assert len(sessions(two, BOB)) == 3
    assert two.run("user", "remove", BOB, "--yes").code == 0
    assert two.foreign_key_violations() == []
    assert two.query("SELECT count(*) FROM session WHERE account_id NOT IN "
                     "(SELECT id FROM account)") == [(0,)]
    assert two.foreign_keys("session") == [("account", "account_id", "id", "CASCADE")]


@pytest.mark.sqlite_only  # upgrading a file an old SQLite release made
def test_v1_database_upgrades_to_the_latest_on_login(device):
    """A v1 database (the fixture) is upgraded through v2 and v3 (sessions) to the latest schema
    by a login, which then starts a session; the v1 account and its history are kept."""
    folder = device.root / "v1"
    folder.mkdir(mode=0o700)
    device.db = folder / "accounts.sqlite3"
    shutil.copyfile(FIXTURES / "v1.sqlite3", device.db)
    os.chmod(device.db, 0o600)
    events_before = device.query("SELECT count(*) FROM audit_event")[0][0]
    result = device.login()
    assert (result.code, result.stderr) == (0, ""), result
    assert result.out_lines == [WELCOME, "Last login: Mon Nov 23 12:56:46 UTC 2026"]
    assert device.migrations() == {"v1", "v2", "v3", "v4"}
    (row,) = sessions(device)
    assert row["token_hash"] == token_hash(read_session_file(device.session_file)[1])
    assert [a["username"].lower() for a in device.accounts()] == [USERNAME]
    assert device.query("SELECT count(*) FROM audit_event")[0][0] == events_before + 1
    assert whoami(device).code == 0
