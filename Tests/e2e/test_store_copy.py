"""`accounts store copy --from SRC --to DST`: a rich SQLite store made with the binary
(activation, several accounts with an id gap, a disabled and a must-change account, imported
crypt(3) hashes, tallies and a lock, sessions with the last one deleted, two second factors with
a used recovery code, the audit log) is copied to a new PostgreSQL database and back to a new
SQLite file, and everything is compared: every row of every table of the original and the
round-tripped file (sqlite3, sqlite_sequence included), and PostgreSQL's tables (psql) against
the original, times, booleans and blobs normalised; the sessions alone stay behind. Then the
copies are used: TOTP with the same key file, a session file pointed at the copy that is no
login there, the imported hash, the lock, ids that continue after the source's. And the refusals: a target that is not empty (both ways), a missing source, the same
store on both sides."""

import json
import pathlib
import secrets
import sqlite3
import signal
import subprocess
import time
import urllib.parse

import pyotp
import pytest

from conftest import (BIN, BOB, BOB_FULL_NAME, BOB_PASSWORD, FULL_NAME, INVALID, PASSWORD,
                      TOO_MANY, USERNAME, Result, form)
from pgcluster import (LOST_SUFFIX, NEWER, WARNING, Client, assert_one_sentence,  # noqa: F401
                       assert_clean, csv_of, dump_accounts_schema, freeze_while_writing,
                       lost_prefix, normal_sqlite, pg,
                       pg_table, pgdb, sequence_next)
from secondfactor import enable, recovered, rewind

# These tests name their stores themselves (PostgreSQL databases of their own, SQLite files),
# whatever ACCOUNTS_TEST_BACKEND says: they run once, in the postgresql run.
pytestmark = pytest.mark.postgresql_only

ACTIVATED = f"Device activated for {USERNAME}.\n"
AUTHORIZED = "You are successfully authorized."
MUST_CHOOSE = "You must choose a new password before you continue."
TABLES = ["account", "activation", "audit_event", "audit_kind", "login_throttle",
          "recovery_code", "second_factor", "session"]
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
    second factors' status."""
    shown = {}
    for args in (["log", "--json"], ["user", "list", "--json"], ["session", "list", "--json"],
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


def test_round_trip_sqlite_postgresql_sqlite(pg, pgdb, rich, tmp_path):
    """SQLite → PostgreSQL → SQLite: one line each way with the counts; the round-tripped file
    holds exactly the original's rows in every table (sqlite_sequence and migrations too) but
    the sessions, of which there are none; PostgreSQL's tables hold the original's rows (times,
    booleans and blobs normalised), no session, and its sequences continue after the source's;
    the binary shows the same log, accounts and second factors on all three, and no live
    session on the copies."""
    before = sqlite_everything(rich.db)
    uri = pg.uri(pgdb)
    tool_client = Client(tmp_path / "tool")
    counts = counts_of(rich.db)
    result = copy(tool_client, str(rich.db), uri)
    assert (result.code, result.stdout, result.stderr) == (
        0, copied_line(rich.db, uri, counts), ""), result
    back = tmp_path / "back" / "accounts.sqlite3"
    result = copy(tool_client, uri, str(back))
    assert (result.code, result.stdout, result.stderr) == (
        0, copied_line(uri, back, counts), ""), result
    assert sqlite_everything(rich.db) == before, "the copy changed its source"

    # The round trip: every row of every table, the sessions aside.
    after = sqlite_everything(back)
    assert sorted(after) == sorted(before)
    assert before["session"] and after["session"] == []
    for table in before:
        if table != "session":
            assert after[table] == before[table], table

    # PostgreSQL against the original.
    assert set(TABLES) <= set(pg.tables(pgdb)), pg.tables(pgdb)
    for table in TABLES:
        types, rows = pg_table(pg, pgdb, table)
        if table == "session":
            assert rows == [], rows
        else:
            assert rows == sqlite_table(rich.db, table, types), table
    sequences = dict(sqlite_rows(rich.db, "SELECT name, seq FROM sqlite_sequence"))
    assert sequence_next(pg, pgdb, "audit_event") == sequences["audit_event"] + 1
    assert sequence_next(pg, pgdb, "session") == sequences["session"] + 1
    (max_id,) = sqlite_rows(rich.db, "SELECT max(id) FROM account")[0]
    assert sequence_next(pg, pgdb, "account") >= max_id + 1

    # What the binary shows is the same on all three, but the sessions.
    original = views(rich.admin)
    assert original["session list --json"] != ""
    original["session list --json"] = ""
    assert views(Client(tmp_path / "on-pg", uri)) == original
    assert views(Client(tmp_path / "on-back", str(back))) == original
    assert sqlite_everything(rich.db) == before


def test_postgresql_to_postgresql(pg, pgdb, rich, tmp_path):
    """PostgreSQL → another PostgreSQL database: every table and sequence the same."""
    tool_client = Client(tmp_path / "tool")
    uri = pg.uri(pgdb)
    assert copy(tool_client, str(rich.db), uri).code == 0
    other = pg.create_database()
    try:
        target = pg.uri(other)
        result = copy(tool_client, uri, target)
        assert (result.code, result.stdout, result.stderr) == (
            0, copied_line(uri, target, counts_of(rich.db)), ""), result
        source = dump_accounts_schema(pg, pgdb)
        copied = dump_accounts_schema(pg, other)
        source.pop("schema_migration", None)
        copied.pop("schema_migration", None)
        assert copied == source
    finally:
        pg.drop_database(other)


def test_the_copies_work(pg, pgdb, rich, tmp_path):
    """On the PostgreSQL copy (with the original's key file as ACCOUNTS_KEY_FILE): alice logs in
    with a TOTP code, her used recovery code stays used; bob's session file pointed at the copy
    is no login there (sessions are not copied); frank's bcrypt hash logs in and is replaced by PBKDF2; dave stays disabled,
    erin must choose a password, mallory is locked; a new account, event and session get the
    ids after the source's. On the SQLite round trip, a recovery code leaves 8."""
    tool_client = Client(tmp_path / "tool")
    uri = pg.uri(pgdb)
    assert copy(tool_client, str(rich.db), uri).code == 0
    back = tmp_path / "back" / "accounts.sqlite3"
    assert copy(tool_client, uri, str(back)).code == 0
    sequences = dict(sqlite_rows(rich.db, "SELECT name, seq FROM sqlite_sequence"))
    (max_id,) = sqlite_rows(rich.db, "SELECT max(id) FROM account")[0]

    on_pg = Client(tmp_path / "pg-admin", uri)
    key_env = on_pg.env(ACCOUNTS_KEY_FILE=str(rich.key))

    # Ids continue after the source's: account, audit event, session (carol's deleted one is
    # not reused).
    result = on_pg.run("user", "add", "--username", IVAN, "--full-name", "Ivan Example",
                       "--email", f"{IVAN}@{DOMAIN}", "--password-stdin",
                       input=IVAN_PASSWORD + "\n")
    assert result.code == 0, result
    assert pg.value(f"SELECT id FROM accounts.account WHERE username_key = '{IVAN}'",
                    pgdb) == str(max_id + 1)
    assert pg.value("SELECT max(id) FROM accounts.audit_event", pgdb) == str(
        sequences["audit_event"] + 1)
    ivan = Client(tmp_path / "pg-ivan", uri)
    welcome_of(login(ivan, IVAN, IVAN_PASSWORD), "Ivan Example")
    assert pg.value("SELECT max(id) FROM accounts.session", pgdb) == str(
        sequences["session"] + 1)

    # TOTP with the same key file.
    pg.psql("UPDATE accounts.second_factor SET last_step = last_step - 10 WHERE account_id = "
            f"(SELECT id FROM accounts.account WHERE username_key = '{USERNAME}')", pgdb)
    alice = Client(tmp_path / "pg-alice", uri)
    result = alice.run("login", input=f"{USERNAME}\n{PASSWORD}\n"
                       f"{pyotp.TOTP(rich.alice_key).now()}\n", env=key_env)
    assert (result.code, result.stderr) == (0, AUTHORIZED + "\n"), result
    assert result.out_lines[0] == f"Welcome back {FULL_NAME}!"
    result = alice.run("login", input=f"{USERNAME}\n{PASSWORD}\n{rich.alice_codes[0]}\n",
                       env=key_env)
    assert (result.code, result.stdout) == (1, ""), result
    assert result.err_lines[-1] == "Invalid verification code!", result

    # bob's session token was not copied: his session file, pointed at the copy, is no login
    # there, while it still is one on the original.
    session_file = rich.bob_client.session_file
    lines = session_file.read_text().splitlines()
    assert lines[1] == f"database {rich.db}", lines
    result = rich.bob_client.run("whoami")
    assert (result.code, result.out_lines[0]) == (0, f"Logged in as {BOB} ({BOB_FULL_NAME} Jr)."), \
        result
    bob = Client(tmp_path / "pg-bob", uri)
    (bob.state / "accounts").mkdir(mode=0o700)
    bob.session_file.write_text("\n".join([lines[0], f"database {uri}", *lines[2:]]) + "\n")
    bob.session_file.chmod(0o600)
    result = bob.run("whoami")
    assert (result.code, result.stdout, result.stderr) == (1, "", "Not logged in.\n"), result

    # The imported bcrypt hash logs in and becomes PBKDF2; the others keep their state.
    frank = Client(tmp_path / "pg-frank", uri)
    welcome_of(login(frank, FRANK, FRANK_PASSWORD, args=("--no-session",)), FRANK)
    assert pg.value(f"SELECT password_hash LIKE 'pbkdf2_sha256$%' FROM accounts.account WHERE "
                    f"username_key = '{FRANK}'", pgdb) == "t"
    result = login(on_pg, DAVE, DAVE_PASSWORD, args=("--no-session",))
    assert (result.code, result.stdout, result.stderr) == (1, "", INVALID + "\n"), result
    result = on_pg.run("login", "--no-session",
                       input=f"{ERIN}\n{ERIN_PASSWORD}\n{ERIN_NEW}\n{ERIN_NEW}\n")
    assert (result.code, result.stderr) == (0, MUST_CHOOSE + "\n"), result
    result = login(on_pg, "mallory", "guessing a password here")
    assert result.code == 4 and TOO_MANY in result.stderr, result

    # The SQLite round trip: a recovery code works without the key file, 8 left.
    on_back = Client(tmp_path / "back-alice", str(back))
    recovered(login(on_back, USERNAME, PASSWORD, rich.alice_codes[1]), 8)


# Refusals.

def small_sqlite(root: pathlib.Path) -> Client:
    """An activated SQLite store with two accounts and a few events."""
    client = Client(root, str(root / "db" / "accounts.sqlite3"))
    result = client.run("activate", input=form())
    assert result.code == 0, result
    add_user(client, BOB, BOB_PASSWORD, BOB_FULL_NAME)
    return client


def not_empty(dst, accounts, events) -> str:
    return (f"Cannot copy to {dst}: it is not empty (it holds {accounts} accounts and {events} "
            "audit events). Copy only into a new store.\n")


def test_refuses_a_postgresql_target_that_is_not_empty(pg, pgdb, tmp_path):
    """A PostgreSQL target that already holds a store: exit 1, the sentence with its counts,
    nothing written there (every row and sequence as before) nor at the source."""
    source = small_sqlite(tmp_path / "src")
    target = Client(tmp_path / "dst", pg.uri(pgdb))
    assert target.run("activate", input=form()).code == 0
    add_user(target, CAROL, CAROL_PASSWORD)
    add_user(target, DAVE, DAVE_PASSWORD)
    events = int(pg.value("SELECT count(*) FROM accounts.audit_event", pgdb))
    before = dump_accounts_schema(pg, pgdb)
    source_before = sqlite_everything(source.database)
    result = copy(Client(tmp_path / "tool"), source.database, target.database)
    assert (result.code, result.stdout, result.stderr) == (
        1, "", not_empty(target.database, 3, events)), result
    assert dump_accounts_schema(pg, pgdb) == before
    assert sqlite_everything(source.database) == source_before


def test_refuses_a_public_target_that_kept_its_log(pg, pgdb, tmp_path):
    """A target made Public again by reset keeps its audit log: still not empty (0 accounts,
    2 audit events), exit 1, nothing written."""
    source = small_sqlite(tmp_path / "src")
    target = Client(tmp_path / "dst", pg.uri(pgdb))
    assert target.run("activate", input=form()).code == 0
    assert target.run("reset", "--yes").code == 0
    before = dump_accounts_schema(pg, pgdb)
    result = copy(Client(tmp_path / "tool"), source.database, target.database)
    assert (result.code, result.stdout, result.stderr) == (
        1, "", not_empty(target.database, 0, 2)), result
    assert dump_accounts_schema(pg, pgdb) == before


def test_refuses_an_sqlite_target_that_is_not_empty(pg, pgdb, tmp_path):
    """PostgreSQL → an SQLite file that holds a store: exit 1, the file's rows unchanged."""
    source = Client(tmp_path / "src", pg.uri(pgdb))
    assert source.run("activate", input=form()).code == 0
    target = small_sqlite(tmp_path / "dst")
    add_user(target, CAROL, CAROL_PASSWORD)
    events = sqlite_rows(target.database, "SELECT count(*) FROM audit_event")[0][0]
    before = sqlite_everything(target.database)
    result = copy(Client(tmp_path / "tool"), source.database, target.database)
    assert (result.code, result.stdout, result.stderr) == (
        1, "", not_empty(target.database, 3, events)), result
    assert sqlite_everything(target.database) == before


def assert_no_source(result, src):
    """Exit 1 and the noDatabase sentence naming SRC (as every administrator command says it)."""
    assert (result.code, result.stdout) == (1, ""), result
    assert len(result.err_lines) == 1, result
    line = result.err_lines[0]
    assert line == (f"No database exists at {src}; nothing was changed. Check --database or "
                    "ACCOUNTS_DATABASE."), result
    assert_clean(result.stderr)


def test_missing_source(pg, pgdb, tmp_path):
    """No file at the SQLite source: exit 1, nothing made at the PostgreSQL target (no schema);
    a PostgreSQL source without the schema: exit 1, no file made at the SQLite target."""
    tool_client = Client(tmp_path / "tool")
    missing = tmp_path / "none" / "accounts.sqlite3"
    result = copy(tool_client, str(missing), pg.uri(pgdb))
    assert_no_source(result, missing)
    assert "accounts" not in pg.schemas(pgdb)
    assert not missing.exists()
    target = tmp_path / "t" / "accounts.sqlite3"
    result = copy(tool_client, pg.uri(pgdb), str(target))
    assert_no_source(result, pg.uri(pgdb))
    assert not target.exists()
    assert "accounts" not in pg.schemas(pgdb)


def test_same_source_and_target(pg, pgdb, tmp_path):
    """The same store on both sides: exit 2 (usage), nothing changed."""
    source = small_sqlite(tmp_path / "src")
    before = sqlite_everything(source.database)
    tool_client = Client(tmp_path / "tool")
    result = copy(tool_client, source.database, source.database)
    assert (result.code, result.stdout) == (2, ""), result
    assert len(result.err_lines) >= 1, result
    assert sqlite_everything(source.database) == before
    uri = pg.uri(pgdb)
    assert Client(tmp_path / "pg", uri).run("activate", input=form()).code == 0
    pg_before = dump_accounts_schema(pg, pgdb)
    result = copy(tool_client, uri, uri)
    assert (result.code, result.stdout) == (2, ""), result
    assert dump_accounts_schema(pg, pgdb) == pg_before


@pytest.mark.parametrize("missing", ["--from", "--to"])
def test_both_ends_are_required(tmp_path, missing):
    """`store copy` without --from or without --to: exit 2, nothing made."""
    tool_client = Client(tmp_path / "tool")
    given = {"--from": str(tmp_path / "a.sqlite3"), "--to": str(tmp_path / "b.sqlite3")}
    given.pop(missing)
    args = [part for pair in given.items() for part in pair]
    result = tool_client.run("store", "copy", *args)
    assert (result.code, result.stdout) == (2, ""), result
    assert not (tmp_path / "a.sqlite3").exists() and not (tmp_path / "b.sqlite3").exists()


def test_copy_adds_no_audit_event(pg, pgdb, tmp_path):
    """The copy adds no event at either end (the target equals the source)."""
    source = small_sqlite(tmp_path / "src")
    events = sqlite_rows(source.database, "SELECT count(*) FROM audit_event")[0][0]
    uri = pg.uri(pgdb)
    assert copy(Client(tmp_path / "tool"), source.database, uri).code == 0
    assert sqlite_rows(source.database, "SELECT count(*) FROM audit_event")[0][0] == events
    assert pg.value("SELECT count(*) FROM accounts.audit_event", pgdb) == str(events)
    assert json.loads(Client(tmp_path / "v", uri).run("status", "--json").stdout)[
        "state"] == "Activated"


# One transaction on the target.

BIG = 10_000


@pytest.fixture(scope="module")
def big_sqlite(tmp_path_factory) -> Client:
    """An SQLite store of 10,001 accounts (imported from a CSV), slow enough to copy that a
    fault can land in the middle."""
    root = tmp_path_factory.mktemp("big")
    client = Client(root / "c", str(root / "db" / "accounts.sqlite3"))
    assert client.run("activate", input=form()).code == 0
    (root / "big.csv").write_text(csv_of(BIG))
    result = client.run("user", "import", str(root / "big.csv"), timeout=300)
    assert result.code == 0, result
    return client


def target_accounts(cluster, database) -> int:
    if "accounts" not in cluster.schemas(database) or "account" not in cluster.tables(database):
        return 0
    return int(cluster.value("SELECT count(*) FROM accounts.account", database))


@pytest.mark.parametrize("fault", ["SIGKILL", "terminate"])
def test_a_copy_cut_short_writes_nothing(pg, pgdb, big_sqlite, tmp_path, fault):
    """The copy to PostgreSQL is one transaction: the client killed (SIGKILL), or its
    connection terminated by the server, in the middle leaves no account and no event at the
    target (the terminated one says the connection was lost, exit 3); the same copy again then
    works, whole."""
    uri = pg.uri(pgdb)
    tool_client = Client(tmp_path / "tool")
    proc = subprocess.Popen([BIN, "store", "copy", "--from", big_sqlite.database, "--to", uri],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=tool_client.env(),
                            cwd=str(tool_client.root))
    try:
        pid = freeze_while_writing(pg, pgdb, proc, "copy")
        if fault == "SIGKILL":
            proc.kill()
        else:
            pg.psql(f"SELECT pg_terminate_backend({pid})")
            proc.send_signal(signal.SIGCONT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
            proc.kill()
            proc.wait()
    deadline = time.monotonic() + 10
    while pg.backends(pgdb) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert target_accounts(pg, pgdb) == 0
    if "audit_event" in pg.tables(pgdb):
        assert pg.value("SELECT count(*) FROM accounts.audit_event", pgdb) == "0"
    if fault == "terminate":
        result = Result(proc.returncode, stdout, stderr)
        assert_one_sentence(result, lost_prefix(uri), LOST_SUFFIX)
    result = copy(tool_client, big_sqlite.database, uri)
    assert (result.code, result.stdout, result.stderr) == (
        0, copied_line(big_sqlite.database, uri, counts_of(big_sqlite.database)), ""), result
    assert target_accounts(pg, pgdb) == BIG + 1


def test_copy_shows_locations_without_the_password(pg, scram_role_db, tmp_path):
    """--to a URI with a password: the Copied line shows it without the password; the password
    is in no output (a warning line on stderr, as for --database, is allowed)."""
    role, password, database = scram_role_db
    source = small_sqlite(tmp_path / "src")
    quoted = urllib.parse.quote(password, safe="")
    uri = f"postgresql://{role}:{quoted}@127.0.0.1:{pg.port}/{database}?sslmode=disable"
    shown = f"postgresql://{role}@127.0.0.1:{pg.port}/{database}?sslmode=disable"
    result = copy(Client(tmp_path / "tool"), source.database, uri)
    assert (result.code, result.stdout) == (
        0, copied_line(source.database, shown, counts_of(source.database))), result
    assert result.stderr in ("", WARNING + "\n"), result
    assert password not in result.stdout + result.stderr
    assert quoted not in result.stdout + result.stderr
    back = tmp_path / "back.sqlite3"
    result = copy(Client(tmp_path / "tool2"), uri, str(back))
    assert (result.code, result.stdout) == (
        0, copied_line(shown, back, counts_of(source.database))), result
    assert password not in result.stdout + result.stderr


@pytest.fixture
def scram_role_db(pg):
    password = f"Copy/{secrets.token_hex(6)}@x"
    role = pg.create_role("copier", password=password)
    database = pg.create_database(owner=role)
    yield role, password, database
    pg.drop_database(database)
    pg.drop_role(role)


def test_sqlite_to_sqlite(rich, tmp_path):
    """SQLite → a new SQLite file: every row of every table the same (sequences too), but the
    sessions, which are not copied."""
    target = tmp_path / "copy" / "accounts.sqlite3"
    result = copy(Client(tmp_path / "tool"), str(rich.db), str(target))
    assert (result.code, result.stdout, result.stderr) == (
        0, copied_line(rich.db, target, counts_of(rich.db)), ""), result
    copied, original = sqlite_everything(target), sqlite_everything(rich.db)
    assert original["session"] and copied["session"] == []
    copied.pop("session")
    original.pop("session")
    assert copied == original


def test_refuses_a_target_with_someone_elses_schema(pg, pgdb, tmp_path):
    """A PostgreSQL target whose schema `accounts` another program made: exit 3, its table
    untouched and nothing added."""
    source = small_sqlite(tmp_path / "src")
    pg.psql("CREATE SCHEMA accounts; CREATE TABLE accounts.orders (id int); "
            "INSERT INTO accounts.orders VALUES (7)", pgdb)
    before = dump_accounts_schema(pg, pgdb)
    result = copy(Client(tmp_path / "tool"), source.database, pg.uri(pgdb))
    assert (result.code, result.stdout) == (3, ""), result
    assert len(result.err_lines) == 1 and pg.uri(pgdb) in result.stderr, result
    assert_clean(result.stderr)
    assert pg.tables(pgdb) == ["orders"]
    assert dump_accounts_schema(pg, pgdb) == before


def test_refuses_a_source_written_by_a_newer_version(pg, pgdb, tmp_path):
    """A PostgreSQL source with a migration this build does not know: exit 3 with the newer-
    version sentence naming it, and no file is made at the SQLite target."""
    source = Client(tmp_path / "src", pg.uri(pgdb))
    assert source.run("activate", input=form()).code == 0
    pg.psql("INSERT INTO accounts.schema_migration (identifier, applied_at) VALUES "
            "('v999', now())", pgdb)
    target = tmp_path / "t" / "accounts.sqlite3"
    result = copy(Client(tmp_path / "tool"), source.database, str(target))
    assert (result.code, result.stdout, result.stderr) == (
        3, "", NEWER.format(source.database) + "\n"), result
    assert not target.exists()
