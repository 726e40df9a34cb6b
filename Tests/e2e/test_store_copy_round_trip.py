"""`accounts store copy --from SRC --to DST`: the rich SQLite store is copied to a new
PostgreSQL database and back to a new SQLite file, and everything is compared: every row of every
table of the original and the round-tripped file (sqlite3, sqlite_sequence included), and
PostgreSQL's tables (psql) against the original, times, booleans and blobs normalised; the
sessions alone stay behind. Then the copies are used: TOTP checked by the server (no key file)
and with the key file the SQLite copy got, a session file
pointed at the copy that is no login there, the imported hash, the lock, ids that continue after
the source's. PostgreSQL to PostgreSQL, SQLite to SQLite, and the Copied line without the
password."""

import json
import secrets
import urllib.parse

import pyotp
import pytest

from conftest import BOB, BOB_FULL_NAME, FULL_NAME, INVALID, PASSWORD, TOO_MANY, USERNAME
from copyhelp import (AUTHORIZED, DAVE, DAVE_PASSWORD, DOMAIN, ERIN, ERIN_NEW,  # noqa: F401
                      ERIN_PASSWORD, FRANK, FRANK_PASSWORD, IVAN, IVAN_PASSWORD, MUST_CHOOSE,
                      TABLES, copied_line, copy, counts_of, login, rich, small_sqlite,
                      sqlite_everything, sqlite_rows, sqlite_table, views, welcome_of,
                      without_store_id)
from pgcluster import (Client, WARNING, dump_accounts_schema, pg, pg_table, pgdb,  # noqa: F401
                       sequence_next)
from secondfactor import recovered
from stores import store_execute


# These tests name their stores themselves (PostgreSQL databases of their own, SQLite files),
# whatever ACCOUNTS_TEST_BACKEND says: they run once, in the postgresql run.
# On one worker under Scripts/test's `--dist loadgroup`:
# the rich store it copies is made once, not once in each worker.
pytestmark = [pytest.mark.postgresql_only, pytest.mark.xdist_group("store_copy_round_trip")]


def test_round_trip_sqlite_postgresql_sqlite(pg, pgdb, rich, tmp_path):
    """SQLite → PostgreSQL → SQLite: one line each way with the counts; the round-tripped file
    holds exactly the original's rows in every table (sqlite_sequence and migrations too) but
    the sessions, of which there are none, and the second factors' sealed secrets, sealed again
    under the new file's own key file; PostgreSQL's tables hold the original's rows (times,
    booleans and blobs normalised), no session, the secrets encrypted by the server and none
    sealed, and its sequences continue after the source's;
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
    assert after["userdb_setting"][0][1] != before["userdb_setting"][0][1]
    same_after, same_before = without_store_id(after), without_store_id(before)
    for table in same_before:
        if table == "second_factor":
            # account_id, sealed_secret, key_id, last_step, enabled_at: sealed under back.key.
            assert [(r[0], r[3], r[4]) for r in same_after[table]] == [
                (r[0], r[3], r[4]) for r in same_before[table]]
            assert {r[2] for r in same_after[table]} != {r[2] for r in same_before[table]}
        elif table != "session":
            assert same_after[table] == same_before[table], table

    # PostgreSQL against the original.
    assert set(TABLES) <= set(pg.tables(pgdb)), pg.tables(pgdb)
    for table in TABLES:
        types, rows = pg_table(pg, pgdb, table)
        if table in ("session", "pending_second_factor"):
            assert rows == [], (table, rows)
        elif table == "second_factor":
            # The server encrypted each secret (migration v17): none is sealed under a key file.
            assert pg.value("SELECT count(*) FROM accounts.second_factor WHERE server_secret "
                            "IS NULL OR sealed_secret IS NOT NULL OR key_id IS NOT NULL",
                            pgdb) == "0"
            kept = pg.psql("SELECT account_id, last_step, accounts.stamp(enabled_at) FROM "
                           "accounts.second_factor ORDER BY 1", pgdb).split()
            assert kept == ["|".join(map(str, row)) for row in sqlite_rows(
                rich.db, "SELECT account_id, last_step, enabled_at FROM second_factor "
                "ORDER BY 1")], kept
        elif table == "userdb_setting":
            # The store's identity (store_id, last in column-name order) is its own; the range
            # travels.
            assert [r[:-1] for r in rows] == [r[:-1] for r in sqlite_table(rich.db, table, types)]
        else:
            assert rows == sqlite_table(rich.db, table, types), table
    sequences = dict(sqlite_rows(rich.db, "SELECT name, seq FROM sqlite_sequence"))
    assert sequence_next(pg, pgdb, "audit_event") == sequences["audit_event"] + 1
    assert sequence_next(pg, pgdb, "session") == sequences["session"] + 1
    (max_id,) = sqlite_rows(rich.db, "SELECT max(id) FROM account")[0]
    assert sequence_next(pg, pgdb, "account") >= max_id + 1
    (max_group,) = sqlite_rows(rich.db, "SELECT max(id) FROM account_group")[0]
    assert sequence_next(pg, pgdb, "account_group") == max_group + 1

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
        for table in ("schema_migration", "schema_expansion"):
            source.pop(table, None)
            copied.pop(table, None)
        # Each server its own key, and so its own ciphertexts of the same secrets.
        for dump in (source, copied):
            dump.pop("second_factor_key")
            factors = [json.loads(row) for row in dump["second_factor"]]
            assert all(f.pop("server_secret") for f in factors), factors
            dump["second_factor"] = sorted(json.dumps(f, sort_keys=True) for f in factors)
        assert without_store_id(copied) == without_store_id(source)
    finally:
        pg.drop_database(other)


def test_the_copies_work(pg, pgdb, rich, tmp_path):
    """On the PostgreSQL copy (no key file anywhere): alice logs in with a TOTP code, her used
    recovery code stays used; bob's session file pointed at the copy
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

    # TOTP, the server checking the code.
    pg.psql("UPDATE accounts.second_factor SET last_step = last_step - 10 WHERE account_id = "
            f"(SELECT id FROM accounts.account WHERE username_key = '{USERNAME}')", pgdb)
    alice = Client(tmp_path / "pg-alice", uri)
    result = alice.run("login", input=f"{USERNAME}\n{PASSWORD}\n"
                       f"{pyotp.TOTP(rich.alice_key).now()}\n")
    assert (result.code, result.stderr) == (0, AUTHORIZED + "\n"), result
    assert result.out_lines[0] == f"Welcome back {FULL_NAME}!"
    result = alice.run("login", input=f"{USERNAME}\n{PASSWORD}\n{rich.alice_codes[0]}\n")
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

    # The SQLite round trip: a recovery code works, 8 left; a TOTP code works with the key file
    # the copy made beside it.
    on_back = Client(tmp_path / "back-alice", str(back))
    recovered(login(on_back, USERNAME, PASSWORD, rich.alice_codes[1]), 8)
    assert back.with_name(back.name + ".key").exists()
    store_execute(back, "UPDATE second_factor SET last_step = last_step - 20")
    result = on_back.run("login", input=f"{USERNAME}\n{PASSWORD}\n"
                         f"{pyotp.TOTP(rich.alice_key).now()}\n")
    assert (result.code, result.stderr) == (0, AUTHORIZED + "\n"), result


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
    assert without_store_id(copied) == without_store_id(original)
