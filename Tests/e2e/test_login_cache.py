"""`accounts store cache enable|status|disable`: this host's login cache of a PostgreSQL store, a
file of root's (mode 0600) that ACCOUNTS_LOGIN_CACHE may place elsewhere; refused on an SQLite
store, to another user than root, and when it is not private.

Oracles: the file's mode and owner (os.stat), sqlite3 reading the file."""

import json
import os
import sqlite3
import stat
import subprocess

import pytest

from conftest import NOBODY, nobody_binary
from pgcluster import activate, client, pg, pgdb  # noqa: F401

pytestmark = pytest.mark.postgresql_only

NOT_ENABLED = ("This host keeps no login cache ({} does not exist); turn it on with accounts "
               "store cache enable.")


@pytest.fixture
def cache_path(client):
    """Where this client's cache lives (ACCOUNTS_LOGIN_CACHE, in a folder not yet made)."""
    path = client.root / "cache" / "login-cache.sqlite3"
    client.settings["ACCOUNTS_LOGIN_CACHE"] = str(path)
    return path


def enabled_sentence(path, days):
    unit = "day" if days == 1 else "days"
    return (f"This host now keeps a login cache at {path}: a person who logged in here within "
            f"{days} {unit} can log in while the server is away.\n")


def test_enable_makes_a_private_file_and_status_tells_it(client, cache_path):
    activate(client)
    result = client.run("store", "cache", "enable")
    assert (result.code, result.stdout, result.stderr) == (
        0, enabled_sentence(cache_path, 7), ""), result
    info = os.stat(cache_path)
    assert stat.S_IMODE(info.st_mode) == 0o600 and info.st_uid == 0, oct(info.st_mode)
    assert stat.S_IMODE(os.stat(cache_path.parent).st_mode) == 0o700
    status = client.run("store", "cache", "status")
    assert (status.code, status.stderr) == (0, ""), status
    assert status.out_lines == [f"Cache: {cache_path}", "Days: 7", "Entries: 0", "Oldest: -",
                                "Queued events: 0", "Last contact: -"], status
    as_json = client.run("store", "cache", "status", "--json")
    assert as_json.code == 0, as_json
    assert json.loads(as_json.stdout) == {"path": str(cache_path), "days": 7, "entries": 0,
                                          "oldest": None, "queuedEvents": 0,
                                          "lastContact": None}
    with sqlite3.connect(cache_path) as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = "
                                               "'table'")}
    assert {"cached_login", "queued_event", "cache_setting"} <= tables, tables


def test_enable_again_changes_the_days_and_keeps_the_file(client, cache_path):
    assert client.run("store", "cache", "enable").code == 0
    inode = os.stat(cache_path).st_ino
    result = client.run("store", "cache", "enable", "--days", "1")
    assert (result.code, result.stdout) == (0, enabled_sentence(cache_path, 1)), result
    assert os.stat(cache_path).st_ino == inode
    assert "Days: 1" in client.run("store", "cache", "status").out_lines


@pytest.mark.parametrize("days", ["0", "366", "seven"])
def test_days_out_of_range_are_refused(client, cache_path, days):
    result = client.run("store", "cache", "enable", "--days", days)
    assert result.code == 2 and result.stdout == "", result
    assert not cache_path.exists()


def test_disable_removes_it_and_status_then_says_it_is_off(client, cache_path):
    assert client.run("store", "cache", "enable").code == 0
    result = client.run("store", "cache", "disable")
    assert (result.code, result.stderr) == (0, ""), result
    assert result.stdout == (f"The login cache {cache_path} is removed: nobody can log in here "
                             "while the server is away.\n")
    assert not cache_path.exists()
    for command in (["status"], ["disable"]):
        again = client.run("store", "cache", *command)
        assert (again.code, again.stdout) == (1, ""), again
        assert again.err_lines == [NOT_ENABLED.format(cache_path)], again


def test_a_cache_others_may_read_is_refused(client, cache_path):
    assert client.run("store", "cache", "enable").code == 0
    os.chmod(cache_path, 0o644)
    result = client.run("store", "cache", "status")
    assert (result.code, result.stdout) == (3, ""), result
    assert result.err_lines == [
        f"Cannot use the database {cache_path}: other users may read or write {cache_path} "
        f"(mode 644). Run `chmod 600 {cache_path}` to make it private."], result


def test_an_sqlite_store_has_no_cache(client, cache_path, tmp_path):
    store = tmp_path / "own.sqlite3"
    result = client.run("store", "cache", "enable", "--database", str(store))
    assert (result.code, result.stdout) == (1, ""), result
    assert result.err_lines == [
        f"A login cache keeps a PostgreSQL server's logins, and {store} is a file of this host: "
        "name a postgresql:// store with --database or ACCOUNTS_DATABASE."], result
    assert not cache_path.exists() and not store.exists()


def test_another_user_than_root_is_refused(client, tmp_path):
    assert NOBODY, "the suite runs as root (the PAM module's tests need it too)"
    folder = tmp_path / "open"
    folder.mkdir(mode=0o755)
    os.chmod(tmp_path, 0o755)
    env = client.env(ACCOUNTS_LOGIN_CACHE=str(folder / "cache.sqlite3"),
                     HOME=str(folder), XDG_CONFIG_HOME=str(folder), XDG_STATE_HOME=str(folder),
                     XDG_DATA_HOME=str(folder))
    result = subprocess.run([*NOBODY, nobody_binary(), "store", "cache", "enable"],
                            capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
    assert (result.returncode, result.stdout) == (1, ""), result
    assert result.stderr == ("The login cache is root's (it must be owned by root): run this "
                             "command as root.\n"), result
