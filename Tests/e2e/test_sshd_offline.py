"""A fleet host logs people in over SSH while its PostgreSQL server is away: Debian's sshd with
docs/pam.md's sshd service whose pam_accounts.so lines name a store URI with nothing listening
at its socket folder and the host's login cache (`login_cache=`, docs/offline.md). The people
are accounts of a store on the shared server, served to NSS as user records in /run/userdb, each
logged in once online by `accounts login` with the cache (which writes their entry); the client
types keyboard-interactive as a person does: the password, then the verification code where the
account has a second factor.

Oracles: ssh's transcript and exit code, sqlite3 reading the cache's queued events, and the
server's audit log (`log --json`) once a command reaches the server again."""

import json
import pathlib
import sqlite3
import time
from dataclasses import dataclass

import pytest

from cachehelp import away_uri
from conftest import BOB_PASSWORD, WRONG_PASSWORD, Result, form
from hostusers import USERDB, account_with_home, unique_name, user_records
from pammodule import PAM_CODES, pam_strerror
from pamstack import sshd_service
from pgcluster import Client, pg  # noqa: F401
from secondfactor import enable, oath
from sshd import REFUSED_CODE, Sshd, prompt, refused_transcript, running_sshd, typed_in

# One store, cache and sshd for the module (the store is a database of its own on the shared
# server, dropped when the module ends), on one worker under Scripts/test's `--dist loadgroup`.
pytestmark = [pytest.mark.postgresql_only, pytest.mark.xdist_group("sshd_offline")]


@dataclass
class Host:
    client: Client
    cache: pathlib.Path
    sshd: Sshd


@pytest.fixture(scope="module")
def host(pg, tmp_path_factory):  # noqa: F811
    """The store activated, its user records in /run/userdb, the login cache on, and an sshd
    whose PAM service finds the server away."""
    root = tmp_path_factory.mktemp("sshd-offline")
    database = pg.create_database("sshdcache")
    client = Client(root / "host", pg.uri(database))
    cache = root / "cache" / "login-cache.sqlite3"
    client.settings["ACCOUNTS_LOGIN_CACHE"] = str(cache)
    module_options = [f"database={away_uri(root / 'no-server')}", f"login_cache={cache}",
                      "timeout=300"]
    try:
        # An owner of its own name: its user record must not make NSS answer for the name the
        # other tests' accounts share.
        owner = unique_name("owner")
        activated = client.run("activate", input=form(username=owner))
        assert (activated.code, activated.stderr) == (0, ""), activated
        enabled = client.run("store", "cache", "enable")
        assert (enabled.code, enabled.stderr) == (0, ""), enabled
        with user_records(client), sshd_service(None, module_options) as service, \
                running_sshd(service, userdb=USERDB) as server:
            yield Host(client, cache, server)
    finally:
        pg.drop_database(database)


def server_tried_again(host):
    """Moves the cache's "server away" mark (left by the module's last offline login) into the
    past, as 30 seconds passing would: the next command tries the server again."""
    with sqlite3.connect(host.cache) as db:
        db.execute("UPDATE cache_setting SET unreachable_until = '2000-01-01T00:00:00.000Z'")


def logged_in_online(host, name, code=None):
    """`accounts login` of NAME on the server, which writes NAME's entry in the cache."""
    server_tried_again(host)
    lines = [name, BOB_PASSWORD] + ([code] if code is not None else [])
    result = host.client.run("login", input="".join(line + "\n" for line in lines))
    assert result.code == 0, result
    with sqlite3.connect(host.cache) as db:
        assert db.execute("SELECT username FROM cached_login WHERE username_key = ?",
                          (name,)).fetchall() == [(name,)]


def refusal_logged(host, name, code: str):
    """sshd logs PAM's refusal as `PAM: <libpam's sentence for the code> for NAME from HOST`."""
    host.sshd.wait_for_log(f"PAM: {pam_strerror(PAM_CODES[code])} for {name} from ")


def where(host) -> str:
    return f"pam service={host.sshd.service} rhost=127.0.0.1 tty=ssh"


def queued(host, name) -> list:
    """NAME's queued offline events: (kind, detail), oldest first."""
    with sqlite3.connect(host.cache) as db:
        return db.execute("SELECT kind, detail FROM queued_event WHERE username_key = ? "
                          "ORDER BY at, rowid", (name,)).fetchall()


def delivered(host, name) -> list:
    """NAME's offline events in the server's audit log: (kind, detail), oldest first."""
    result = host.client.run("log", "--json")
    assert result.code == 0, result
    return [(e["event"], e["detail"]) for e in map(json.loads, result.out_lines)
            if e["user"] == name and e["offline"]]


def logged_in(name, *questions) -> Result:
    """The questions answered, then `id -un`'s line: the session ran as NAME."""
    return Result(0, "".join(prompt(name, q) + "\r\n" for q in questions) + f"{name}\r\n", "")


def test_a_cached_person_logs_in_with_the_password_and_a_wrong_one_is_refused(host):
    name = unique_name("cached")
    with account_with_home(host.client, name):
        logged_in_online(host, name)
        ran = typed_in(host.sshd, name, "id -un", ("Password", BOB_PASSWORD))
        assert ran == logged_in(name, "Password")
        refused = typed_in(host.sshd, name, "id -un", ("Password", WRONG_PASSWORD))
        assert refused == Result(REFUSED_CODE, refused_transcript(name, "Password"), "")
    refusal_logged(host, name, "PAM_AUTH_ERR")
    assert queued(host, name) == [
        ("login_success", f"password; {where(host)}"),
        ("login_failure", f"invalid user name or password; {where(host)}")]


def test_a_password_then_a_code_and_the_same_code_again_is_a_replay(host):
    name = unique_name("totp")
    with account_with_home(host.client, name):
        enrollment = enable(host.client, username=name, password=BOB_PASSWORD)
        assert enrollment.result.code == 0, enrollment.result
        # The step after the one that turned the factor on (within the window a code is taken).
        logged_in_online(host, name, oath(enrollment.key, time.time() + 30))
        # The entry's last step moved back, as if the online login was minutes ago.
        with sqlite3.connect(host.cache) as db:
            db.execute("UPDATE cached_login SET last_step = last_step - 10 "
                       "WHERE username_key = ?", (name,))
        code = oath(enrollment.key)
        answers = [("Password", BOB_PASSWORD), ("Verification code", code)]
        ran = typed_in(host.sshd, name, "id -un", *answers)
        assert ran == logged_in(name, "Password", "Verification code")
        again = typed_in(host.sshd, name, "id -un", *answers)
        assert again == Result(REFUSED_CODE,
                               refused_transcript(name, "Password", "Verification code"), "")
    assert queued(host, name) == [
        ("login_success", f"password and TOTP code; {where(host)}"),
        ("login_failure", f"verification code replayed; {where(host)}")]


def test_a_person_never_seen_on_this_host_is_refused_and_nothing_is_counted(host):
    """An account NSS knows that never logged in here: the cache cannot answer for it, so the
    login is refused without calling the password wrong (PAM_AUTHINFO_UNAVAIL, as sshd logs
    it; no failure queued)."""
    name = unique_name("stranger")
    with account_with_home(host.client, name):
        refused = typed_in(host.sshd, name, "id -un", ("Password", BOB_PASSWORD))
        assert refused == Result(REFUSED_CODE, refused_transcript(name, "Password"), "")
    refusal_logged(host, name, "PAM_AUTHINFO_UNAVAIL")
    assert queued(host, name) == []


def test_the_queued_events_reach_the_server_once_it_is_back(host):
    name = unique_name("queued")
    with account_with_home(host.client, name):
        logged_in_online(host, name)
        assert typed_in(host.sshd, name, "id -un", ("Password", WRONG_PASSWORD)).code == \
            REFUSED_CODE
        assert typed_in(host.sshd, name, "id -un", ("Password", BOB_PASSWORD)) == \
            logged_in(name, "Password")
    events = [("login_failure", f"invalid user name or password; {where(host)}"),
              ("login_success", f"password; {where(host)}")]
    assert queued(host, name) == events
    server_tried_again(host)
    for _ in range(2):
        synced = host.client.run("userdb", "sync")
        assert synced.code == 0, synced
        assert queued(host, name) == []
        assert delivered(host, name) == events
