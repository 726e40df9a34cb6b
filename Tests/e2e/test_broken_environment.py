"""A broken environment gets one clear sentence naming the path and what is wrong,
the storage exit code (3), and leaves the file byte for byte as it was."""

import hashlib
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("ACCOUNTS_BIN", str(ROOT / ".build" / "debug" / "accounts"))
PASSWORD = b"correct horse battery staple\n"
STORAGE = 3
from conftest import AS_ROOT, NOBODY, PostgresStore, new_store, nobody_binary, store_execute, \
    store_query

# Most of this module is about the SQLite file itself (a directory or a plain file in its place,
# damaged pages, read-only files and folders): those tests are sqlite_only. A newer schema and
# another program's tables are refused by both stores, and run on both.


def run(args, db, stdin=b"", as_nobody=False):
    env = dict(os.environ, TZ="UTC", ACCOUNTS_PBKDF2_ITERATIONS="1000")
    env.pop("ACCOUNTS_DATABASE", None)
    prefix = NOBODY if as_nobody else []
    binary = nobody_binary() if as_nobody and AS_ROOT else BIN
    proc = subprocess.run([*prefix, binary, *args, "--database", str(db)], input=stdin,
                          capture_output=True, env=env, timeout=60)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def activate(db, as_nobody=False):
    code, _, err = run(["activate", "--username", "alice", "--full-name", "Alice",
                        "--email", "alice@example.org", "--password-stdin"], db, PASSWORD,
                       as_nobody=as_nobody)
    assert code == 0, err


def digest(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


def snapshot(store):
    """What the store holds: the file's bytes for SQLite; every row of every table in the
    database for PostgreSQL (its own files are the server's)."""
    if not isinstance(store, PostgresStore):
        return digest(store)
    tables = [r[0] for r in store_query(
        store, "SELECT schemaname || '.' || tablename FROM pg_tables "
        "WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1")]
    return {t: sorted(map(repr, store_query(store, f"SELECT * FROM {t}"))) for t in tables}


def listing(folder):
    return sorted(p.name for p in pathlib.Path(folder).iterdir())


WRITING = [
    ["activate", "--username", "bob", "--full-name", "Bob", "--email", "b@example.org",
     "--password-stdin"],
    ["login", "--username", "alice", "--password-stdin"],
    ["reset", "--yes"],
    ["unlock", "alice"],
]
READING = [["status"], ["status", "--json"], ["log"]]
ALL = WRITING + READING
IDS = [" ".join(a[:1]) + ("-json" if "--json" in a else "") for a in ALL]


def one_sentence(err):
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "SQLITE" not in err and "Fatal error" not in err and "database is locked" not in err
    return lines[0]


@pytest.mark.sqlite_only  # the file (or its folder) itself
@pytest.mark.parametrize("args", ALL, ids=IDS)
def test_path_is_a_directory(tmp_path, args):
    """A directory where the database should be: named, exit 3, left alone."""
    target = tmp_path / "db.sqlite3"
    target.mkdir()
    code, out, err = run(args, target, PASSWORD)
    assert code == STORAGE
    assert one_sentence(err) == f"Cannot use the database {target}: it is a directory, not a file."
    assert listing(target) == []


@pytest.mark.sqlite_only  # the file (or its folder) itself
@pytest.mark.parametrize("args", WRITING[:1] + READING[:1], ids=["activate", "status"])
def test_folder_cannot_be_created(tmp_path, args):
    """A parent that is a plain file: the folder is named with the reason, exit 3."""
    blocker = tmp_path / "plain-file"
    blocker.write_bytes(b"not a folder\n")
    target = blocker / "sub" / "db.sqlite3"
    code, out, err = run(args, target, PASSWORD)
    # Reading commands create nothing, and a path that cannot exist is an error, not a Public
    # device; activate finds it when it first reads the state.
    assert code == STORAGE
    assert one_sentence(err) == f"Cannot open the database {target}: {blocker} is not a folder."
    assert blocker.read_bytes() == b"not a folder\n"


@pytest.mark.sqlite_only  # the file (or its folder) itself
@pytest.mark.parametrize("args", ALL, ids=IDS)
def test_not_a_database(tmp_path, args):
    """A file that is not SQLite: named, exit 3, byte for byte unchanged, no companions."""
    target = tmp_path / "db.sqlite3"
    target.write_bytes(os.urandom(5000))
    target.chmod(0o600)
    before = digest(target)
    code, out, err = run(args, target, PASSWORD)
    assert code == STORAGE
    assert one_sentence(err).startswith(
        f"Cannot use the database {target}: it is not an SQLite database.")
    assert digest(target) == before
    assert listing(tmp_path) == ["db.sqlite3"]


@pytest.mark.sqlite_only  # the file (or its folder) itself
@pytest.mark.parametrize("args", ALL, ids=IDS)
def test_corrupt_database(tmp_path, args):
    """A damaged database (its schema page overwritten): named, exit 3, unchanged."""
    target = tmp_path / "db.sqlite3"
    activate(target)
    data = bytearray(target.read_bytes())
    data[100:4096] = b"\xa5" * (4096 - 100)
    target.write_bytes(bytes(data))
    before = digest(target)
    code, out, err = run(args, target, PASSWORD)
    assert code == STORAGE
    assert one_sentence(err) == (
        f"Cannot use the database {target}: the file is damaged. "
        "Restore it from a backup or move it aside.")
    assert digest(target) == before


@pytest.mark.parametrize("args", ALL, ids=IDS)
def test_newer_schema(tmp_path, args):
    """A database from a newer accounts: refused, say to upgrade, unchanged."""
    target = new_store(tmp_path / "db.sqlite3")
    activate(target)
    table = "schema_migration" if isinstance(target, PostgresStore) else "grdb_migrations"
    store_execute(target, f"INSERT INTO {table} (identifier) VALUES ('v2-from-the-future')")
    before = snapshot(target)
    code, out, err = run(args, target, PASSWORD)
    assert code == STORAGE
    assert one_sentence(err) == (
        f"Cannot use the database {target}: it was written by a newer version of accounts. "
        "Upgrade accounts to use it.")
    assert snapshot(target) == before


@pytest.mark.empty_database
def test_foreign_database(tmp_path):
    """Another program's SQLite file is not taken over."""
    target = new_store(tmp_path / "other.sqlite3")
    if isinstance(target, PostgresStore):
        # A schema `accounts` holding tables but no schema_migration.
        store_execute(target, "CREATE SCHEMA accounts")
        store_execute(target, "CREATE TABLE accounts.notes (body text)")
    else:
        store_execute(target, "CREATE TABLE notes (body TEXT)")
        target.chmod(0o600)
    before = snapshot(target)
    code, _, err = run(WRITING[0], target, PASSWORD)
    assert code == STORAGE
    if isinstance(target, PostgresStore):
        assert one_sentence(err) == (
            f"Cannot use the database {target}: its schema accounts was not made by accounts. "
            "Choose another database with --database.")
    else:
        assert "it was not made by accounts" in one_sentence(err)
    assert snapshot(target) == before


def read_only_setup(tmp_path, what):
    # A private folder of `nobody`'s own (a folder others may write is refused), holding a
    # private database; then the file or the folder is made read-only, still private.
    folder = pathlib.Path(tempfile.mkdtemp(prefix="accounts-ro-", dir="/tmp"))
    os.chown(folder, 65534, 65534)
    os.chmod(folder, 0o700)
    target = folder / "db.sqlite3"
    activate(target, as_nobody=True)
    if what == "file":
        os.chmod(target, 0o400)
    else:
        os.chmod(folder, 0o500)
    return folder, target


@pytest.mark.sqlite_only  # the file (or its folder) itself
@pytest.mark.parametrize("what", ["file", "folder"])
@pytest.mark.parametrize("args", ALL, ids=IDS)
def test_read_only(tmp_path, what, args):
    """A read-only file or folder: writing commands exit 3 naming the path, reading commands
    still work, and nothing is written (no -wal or -shm left behind)."""
    folder, target = read_only_setup(tmp_path, what)
    try:
        before = digest(target)
        code, out, err = run(args, target, PASSWORD, as_nobody=True)
        if args == WRITING[0]:
            # Activating an Activated device is refused for that, before anything is opened
            # for writing.
            assert code == 1
            assert one_sentence(err).startswith("This device is already activated.")
        elif args in READING:
            assert code == 0, err
            if args == ["status"]:
                assert out.splitlines() == ["State: Activated", f"Database: {target}"]
            if args == ["log"]:
                assert "activation" in out
        else:
            assert code == STORAGE
            assert one_sentence(err) == (
                f"Cannot write the database {target}: the file or its folder is read-only.")
        assert digest(target) == before
        assert listing(folder) == ["db.sqlite3"]
    finally:
        os.chmod(folder, 0o700)
        os.chmod(target, 0o600)
        shutil.rmtree(folder, ignore_errors=True)
