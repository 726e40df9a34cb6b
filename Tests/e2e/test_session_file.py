"""The session file: login writes it and the database keeps only the token's hash, a file
the program refuses (mode, owner, link) or finds damaged, and a file naming another database."""

import datetime
import hashlib
import os
import stat

import pytest

from conftest import BOB, BOB_PASSWORD, FULL_NAME, NOBODY_UID, PASSWORD, USERNAME, WRONG_PASSWORD
from sessionhelp import (Client, STORAGE, WELCOME, assert_asks_to_log_in,  # noqa: F401
                         assert_not_logged_in, bare, close_to, logged_in, now, other_database,
                         parse, read_session_file, sessions, token_hash, two, whoami)


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
