"""What the `accounts store copy` tests share: the sample accounts, reading an SQLite store row
by row, the Copied line, and the rich SQLite store made with the binary (activation, several
accounts with an id gap, a disabled and a must-change account, imported crypt(3) hashes, tallies
and a lock, sessions with the last one deleted, two second factors with a used recovery code, the
audit log), built once per module by the fixture `rich`."""

import json
import pathlib
import sqlite3
import subprocess

import pyotp
import pytest

from conftest import BOB, BOB_FULL_NAME, BOB_PASSWORD, PASSWORD, USERNAME, form
from pgcluster import Client, normal_sqlite
from secondfactor import enable, recovered, rewind


ACTIVATED = f"Device activated for {USERNAME}.\n"
AUTHORIZED = "You are successfully authorized."
MUST_CHOOSE = "You must choose a new password before you continue."
TABLES = ["account", "account_group", "activation", "audit_event", "audit_kind",
          "group_member", "home_path", "login_throttle", "pending_second_factor", "posix_id",
          "recovery_code", "second_factor", "session", "ssh_key", "userdb_host", "userdb_setting"]
DOMAIN = "example.org"

CAROL, CAROL_PASSWORD = "carol", "carol sings lovely arias at dawn"
DAVE, DAVE_PASSWORD = "dave", "dave rides a purple tandem bicycle"
ERIN, ERIN_PASSWORD = "erin", "erin paints quiet harbour boats"
HENRY, HENRY_PASSWORD = "henry", "henry juggles seven frozen lemons"
FRANK, FRANK_PASSWORD = "frank", "frank bakes crooked sourdough loaves"
GRACE, GRACE_PASSWORD = "grace", "grace knits scarves for lighthouse keepers"
ERIN_NEW = "erin chooses another calm evening"
IVAN, IVAN_PASSWORD = "ivan", "ivan collects rusty tram tickets"


def welcome_of(result, full_name):
    assert result.code == 0, result
    assert result.out_lines[0] == f"Welcome back {full_name}!", result


def tool(*command) -> str:
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()


def add_user(client, name, password, full_name=None):
    result = client.run("user", "add", "--username", name, "--full-name",
                        full_name or name.capitalize() + " Example", "--email",
                        f"{name}@{DOMAIN}", "--password-stdin", input=password + "\n")
    assert (result.code, result.stdout, result.stderr) == (
        0, f"Account added: {name}.\n", ""), result


def login(client, name, password, code=None, args=()):
    lines = [name, password] + ([code] if code is not None else [])
    return client.run("login", *args, input="\n".join(lines) + "\n")


def sqlite_rows(path, sql, *args):
    db = sqlite3.connect(path)
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


def without_store_id(dump: dict) -> dict:
    """`dump` with the store's identity taken out of `userdb_setting`: each store keeps its own
    (it names that store's user record manifests), and a copy carries only the range; and
    without its change counter and notes (`userdb_generation`, `userdb_change`), which count
    each store's own writes (a copy's count its copying)."""
    dump = {k: v for k, v in dump.items() if k not in ("userdb_generation", "userdb_change")}
    rows = dump.get("userdb_setting")
    if rows is None:
        return dump
    def strip(row):
        if isinstance(row, str):
            fields = json.loads(row)
            fields.pop("store_id", None)
            return json.dumps(fields, sort_keys=True)
        return tuple(v for i, v in enumerate(row) if i != 1)
    return {**dump, "userdb_setting": [strip(row) for row in rows]}


def sqlite_everything(path) -> dict:
    """Every row of every table (sqlite_sequence and the migrations' table included), sorted,
    and the schema's entries."""
    db = sqlite3.connect(path)
    try:
        names = [n for (n,) in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        dump = {name: sorted(db.execute(f'SELECT * FROM "{name}"').fetchall(), key=repr)
                for name in names}
        dump["<schema>"] = sorted(db.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall(), key=repr)
        return dump
    finally:
        db.close()


def sqlite_table(path, table, types) -> list:
    """The SQLite table's rows as PostgreSQL holds them (column-name order, times parsed)."""
    db = sqlite3.connect(path)
    try:
        cursor = db.execute(f'SELECT * FROM "{table}"')
        columns = [d[0] for d in cursor.description]
        assert sorted(columns) == sorted(types), (table, columns, sorted(types))
        rows = [dict(zip(columns, row)) for row in cursor.fetchall()]
    finally:
        db.close()
    return sorted((tuple(normal_sqlite(types[c], row[c]) for c in sorted(types))
                   for row in rows), key=repr)


def copied_line(src, dst, counts) -> str:
    n, m, f = counts
    return (f"Copied {n} accounts, {m} audit events and {f} second factors from {src} to {dst}; "
            "sessions are not copied, so people log in again there.\n")


def counts_of(path) -> tuple:
    return tuple(sqlite_rows(path, f"SELECT count(*) FROM {t}")[0][0]
                 for t in ("account", "audit_event", "second_factor"))


def copy(client, src, dst):
    return client.run("store", "copy", "--from", src, "--to", dst)


class Rich:
    """The rich SQLite store and what the test needs to know of it."""

    def __init__(self, root: pathlib.Path):
        self.root = root
        self.db = root / "a" / "accounts.sqlite3"
        self.key = self.db.with_name(self.db.name + ".key")
        self.admin = Client(root / "admin", str(self.db))
        self.alice_codes = []
        self.alice_key = None
        self.carol_key = None
        self.bob_client = Client(root / "c-bob", str(self.db))


def build_rich_store(root: pathlib.Path) -> Rich:
    rich = Rich(root)
    admin = rich.admin
    result = admin.run("activate", input=form())
    assert (result.code, result.stdout, result.stderr) == (0, ACTIVATED, ""), result

    # Accounts; henry removed from the middle, so the ids have a gap.
    add_user(admin, BOB, BOB_PASSWORD, BOB_FULL_NAME)
    add_user(admin, CAROL, CAROL_PASSWORD)
    add_user(admin, HENRY, HENRY_PASSWORD)
    add_user(admin, DAVE, DAVE_PASSWORD)
    add_user(admin, ERIN, ERIN_PASSWORD)
    result = admin.run("user", "remove", HENRY, "--yes")
    assert result.code == 0, result
    result = admin.run("user", "disable", DAVE)
    assert result.code == 0, result
    result = admin.run("user", "passwd", ERIN, "--must-change", "--password-stdin",
                       input=ERIN_PASSWORD + "\n")
    assert result.code == 0, result
    result = admin.run("user", "edit", BOB, "--full-name", BOB_FULL_NAME + " Jr")
    assert result.code == 0, result

    # Imported crypt(3) hashes: bcrypt from htpasswd, yescrypt from mkpasswd.
    bcrypt = tool("htpasswd", "-n", "-b", "-B", FRANK, FRANK_PASSWORD)
    yescrypt = tool("mkpasswd", "-m", "yescrypt", GRACE_PASSWORD)
    (admin.root / "site.htpasswd").write_text(f"{bcrypt}\n{GRACE}:{yescrypt}\n")
    result = admin.run("user", "import", "site.htpasswd", "--email-domain", DOMAIN)
    assert (result.code, result.stdout, result.stderr) == (
        0, "Imported 2 accounts from site.htpasswd.\n", ""), result

    # Second factors: alice (one recovery code used) and carol.
    enrollment = enable(admin, code=lambda key: pyotp.TOTP(key).now())
    assert enrollment.result.code == 0, enrollment.result
    rich.alice_key, rich.alice_codes = enrollment.key, enrollment.codes
    enrollment = enable(admin, code=lambda key: pyotp.TOTP(key).now(), username=CAROL,
                        password=CAROL_PASSWORD)
    assert enrollment.result.code == 0, enrollment.result
    rich.carol_key = enrollment.key
    assert rich.key.exists()
    rewind(admin, USERNAME, db=rich.db)
    rewind(admin, CAROL, db=rich.db)

    # Sessions: alice with a code, alice with a recovery code, bob; carol's, the last one
    # made, is ended by logout (its row deleted: the sequence is ahead of every id).
    alice = Client(root / "c-alice", str(rich.db))
    result = login(alice, USERNAME, PASSWORD, pyotp.TOTP(rich.alice_key).now())
    assert (result.code, result.stderr) == (0, AUTHORIZED + "\n"), result
    alice2 = Client(root / "c-alice2", str(rich.db))
    recovered(login(alice2, USERNAME, PASSWORD, rich.alice_codes[0]), 9)
    welcome_of(login(rich.bob_client, BOB, BOB_PASSWORD), BOB_FULL_NAME + " Jr")
    carol = Client(root / "c-carol", str(rich.db))
    result = login(carol, CAROL, CAROL_PASSWORD, pyotp.TOTP(rich.carol_key).now())
    assert (result.code, result.stderr) == (0, AUTHORIZED + "\n"), result
    result = carol.run("logout")
    assert (result.code, result.stdout) == (0, "Logged out.\n"), result

    # Tallies: two failures for bob, a lock for an unknown name.
    for _ in range(2):
        assert login(admin, BOB, "wrong password for bob here", args=("--no-session",)).code == 1
    for _ in range(5):
        login(admin, "mallory", "guessing a password here", args=("--no-session",))
    assert login(admin, "mallory", "guessing a password here").code == 4

    # Groups: staff (bob, carol), wheel (alice), ops (nobody), one removed between them (its
    # id a gap); an expiry to come.
    for args in (["group", "add", "staff"], ["group", "add", "gone"], ["group", "add", "wheel"],
                 ["group", "add", "ops"], ["user", "edit", BOB, "--add-group", "staff"],
                 ["user", "edit", CAROL, "--add-group", "staff", "--add-group", "gone"],
                 ["user", "edit", USERNAME, "--add-group", "wheel"], ["group", "remove", "gone"],
                 ["user", "edit", DAVE, "--expires", "2099-12-31T18:00:00Z"]):
        result = admin.run(*args)
        assert result.code == 0, (args, result)

    # The store is what the test means it to be.
    ids = [i for (i,) in sqlite_rows(rich.db, "SELECT id FROM account ORDER BY id")]
    assert len(ids) == 7 and ids != list(range(1, 8)), ids
    sequences = dict(sqlite_rows(rich.db, "SELECT name, seq FROM sqlite_sequence"))
    (max_session,) = sqlite_rows(rich.db, "SELECT max(id) FROM session")[0]
    assert sequences["session"] > max_session, (sequences, max_session)
    assert sqlite_rows(rich.db, "SELECT count(*) FROM session")[0][0] >= 3
    assert sqlite_rows(rich.db, "SELECT count(*) FROM second_factor")[0][0] == 2
    assert sqlite_rows(rich.db, "SELECT count(*) FROM recovery_code WHERE used_at IS NOT "
                       "NULL")[0][0] == 1
    assert sqlite_rows(rich.db, "SELECT count(*) FROM login_throttle WHERE locked_until IS "
                       "NOT NULL")[0][0] == 1
    assert sqlite_rows(rich.db, "SELECT failures FROM login_throttle WHERE username_key = ?",
                       BOB) == [(2,)]
    assert sqlite_rows(rich.db, "SELECT count(*) FROM account WHERE disabled_at IS NOT NULL "
                       "OR must_change_password = 1")[0][0] == 2
    assert sqlite_rows(rich.db, "SELECT count(*) FROM account WHERE password_hash LIKE '$%'"
                       )[0][0] == 2
    return rich


@pytest.fixture(scope="module")
def rich(tmp_path_factory) -> Rich:
    return build_rich_store(tmp_path_factory.mktemp("rich"))


def views(client) -> dict:
    """What the binary shows of a store: the log, every account, the live sessions, the
    groups, the second factors' status."""
    shown = {}
    for args in (["log", "--json"], ["user", "list", "--json"], ["session", "list", "--json"],
                 ["group", "list", "--json"], ["group", "show", "staff", "--json"],
                 ["2fa", "status", "--user", USERNAME, "--json"],
                 ["2fa", "status", "--user", CAROL, "--json"]):
        result = client.run(*args)
        assert (result.code, result.stderr) == (0, ""), (args, result)
        shown[" ".join(args)] = result.stdout
    for name in (USERNAME, BOB, CAROL, DAVE, ERIN, FRANK, GRACE):
        result = client.run("user", "show", name, "--json")
        assert (result.code, result.stderr) == (0, ""), (name, result)
        shown[name] = result.stdout
    return shown


def small_sqlite(root: pathlib.Path) -> Client:
    """An activated SQLite store with two accounts and a few events."""
    client = Client(root, str(root / "db" / "accounts.sqlite3"))
    result = client.run("activate", input=form())
    assert result.code == 0, result
    add_user(client, BOB, BOB_PASSWORD, BOB_FULL_NAME)
    return client
