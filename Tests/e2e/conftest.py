"""Shared fixtures for the end-to-end tests of the `accounts` binary.

Every test gets its own `Device`: a temporary HOME, XDG_DATA_HOME and database, TZ=UTC and (unless
a test asks for the real count) ACCOUNTS_PBKDF2_ITERATIONS=1000 so new hashes are cheap.

The store is chosen by ACCOUNTS_TEST_BACKEND: `sqlite` (the default) gives every device
a database file; `postgresql` gives it a fresh database on the cluster the PG* variables name
(`eval "$(Scripts/postgres env DIR)"`), created at setup and dropped at teardown, and named to the
binary as `postgresql:///acc_<random>` (libpq takes the host, port and user from PG*). Tests about
the SQLite file itself are marked `sqlite_only` and deselected in a postgresql run (never skipped).
"""

from __future__ import annotations

import contextlib
import datetime
import decimal
import io
import json
import os
import pathlib
import secrets
import shutil
import sqlite3
import subprocess
import tempfile
import termios
from dataclasses import dataclass

import pexpect
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("ACCOUNTS_BIN") or str(REPO / ".build" / "release" / "accounts")

BACKEND = os.environ.get("ACCOUNTS_TEST_BACKEND", "sqlite")
assert BACKEND in ("sqlite", "postgresql"), \
    f"ACCOUNTS_TEST_BACKEND must be sqlite or postgresql, not {BACKEND!r}"
POSTGRESQL = BACKEND == "postgresql"


def stamp_text(moment: datetime.datetime) -> str:
    """A time as SQLite stores it (`2026-11-23T17:28:03.123Z`): PostgreSQL's timestamptz values
    are read back in this form, so a test's assertion is the same on both stores."""
    moment = moment.astimezone(datetime.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _plain(value):
    """One PostgreSQL value as sqlite3 would give it: times as text, booleans as 0/1, bytea as
    bytes, whole numerics as int."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, datetime.datetime):
        return stamp_text(value)
    if isinstance(value, memoryview):
        return bytes(value)
    if isinstance(value, decimal.Decimal) and value == value.to_integral_value():
        return int(value)
    return value


class PostgresCluster:
    """The cluster the PG* variables name: one autocommit connection to its `postgres` database
    makes and drops the tests' databases."""

    def __init__(self):
        self._admin = None

    def admin(self):
        if self._admin is None or self._admin.closed:
            import psycopg
            self._admin = psycopg.connect(dbname="postgres", autocommit=True)
        return self._admin

    def connect(self, name):
        """A connection to one test database, its search_path the schema `accounts`."""
        import psycopg
        return psycopg.connect(dbname=name, options="-c search_path=accounts")

    def create(self) -> "PostgresStore":
        name = "acc_" + secrets.token_hex(8)
        self.admin().execute(f'CREATE DATABASE "{name}"')
        store = PostgresStore(self, name)
        _CREATED.append(store)
        return store

    def drop(self, store):
        self.admin().execute(f'DROP DATABASE IF EXISTS "{store.name}" WITH (FORCE)')


CLUSTER = PostgresCluster()
_CREATED = []  # the databases made during the current test, dropped at its teardown


class PostgresStore:
    """A test's PostgreSQL database, where an SQLite test has its file path. `str()` is the URI
    the binary is given (and shows); `exists()` says whether the binary created its schema there
    (the counterpart of a database file existing)."""

    def __init__(self, cluster, name):
        self.cluster = cluster
        self.name = name
        self.uri = f"postgresql:///{name}"

    def __str__(self):
        return self.uri

    def __repr__(self):
        return f"PostgresStore({self.uri!r})"

    def __eq__(self, other):
        return isinstance(other, PostgresStore) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    @property
    def explicit_uri(self) -> str:
        """The URI with the socket folder, port and role written in it, for a process that runs
        without the PG* variables (pam-auth unsets them)."""
        from urllib.parse import quote
        host = quote(os.environ.get("PGHOST", "/var/run/postgresql"), safe="")
        port = os.environ.get("PGPORT", "5432")
        user = os.environ.get("PGUSER", "postgres")
        return f"postgresql:///{self.name}?host={host}&port={port}&user={user}"

    def exists(self) -> bool:
        with self.cluster.connect(self.name) as db:
            row = db.execute(
                "SELECT count(*) FROM pg_namespace WHERE nspname = 'accounts'").fetchone()
        return row[0] == 1

    def query(self, sql, args=(), names=False):
        with self.cluster.connect(self.name) as db:
            cursor = db.execute(_postgres_sql(sql), args)
            rows = cursor.fetchall() if cursor.description is not None else []
            columns = [c.name for c in cursor.description or []]
        rows = [tuple(_plain(v) for v in row) for row in rows]
        return [dict(zip(columns, row)) for row in rows] if names else rows

    def execute(self, sql, args=()) -> int:
        with self.cluster.connect(self.name) as db:
            changed = db.execute(_postgres_sql(sql), args).rowcount
        return changed


def _postgres_sql(sql: str) -> str:
    """sqlite3's `?` placeholders as psycopg's `%s` (the tests' SQL never holds a literal `?`
    or `%`)."""
    assert "%" not in sql, sql
    return sql.replace("?", "%s")


def new_store(path: pathlib.Path):
    """Where a test keeps a store of its own beside its devices: the SQLite file `path`, or in a
    postgresql run a fresh database (dropped at the test's end)."""
    return CLUSTER.create() if POSTGRESQL else path


def store_query(location, sql: str, *args, names=False) -> list:
    """The rows of one read from the store at `location` (a path or a PostgresStore); with
    `names`, each row a dict by column name."""
    if isinstance(location, PostgresStore):
        return location.query(sql, args, names=names)
    db = sqlite3.connect(location)
    try:
        cursor = db.execute(sql, args)
        rows = cursor.fetchall()
        if names:
            columns = [c[0] for c in cursor.description]
            return [dict(zip(columns, row)) for row in rows]
        return rows
    finally:
        db.close()


def store_execute(location, sql: str, *args) -> int:
    """One committed write to the store at `location`; returns the number of rows changed."""
    if isinstance(location, PostgresStore):
        return location.execute(sql, args)
    db = sqlite3.connect(location)
    try:
        changed = db.execute(sql, args).rowcount
        db.commit()
    finally:
        db.close()
    return changed


FAST_ITERATIONS = "1000"
DEFAULT_ITERATIONS = 1_200_000

USERNAME = "alice"
FULL_NAME = "Alice Liddell"
EMAIL = "alice@example.org"
PASSWORD = "correct horse battery staple"
WRONG_PASSWORD = "incorrect donkey battery staple"

INVALID = "Invalid user name or password!"
TOO_MANY = "Too many failed attempts"
NOT_ACTIVATED = "This device is not activated yet. Run `accounts activate` to activate it."
INPUT_ENDED = "Input ended before all fields were given; nothing was stored."

# A second account, and the sentences of the form every account command shares.
BOB = "bob"
BOB_FULL_NAME = "Bob Builder"
BOB_EMAIL = "bob@example.org"
BOB_PASSWORD = "can we fix it yes we can"
NEW_PASSWORD = "tangerine submarine orchestra 93"
FILL = "Please fill all fields!"
MATCH = "Passwords must match!"
SHORT = "Password must be at least 15 characters!"
PERSONAL = "Password must not be your user name, full name or e-mail address!"
USERNAME_RULE = "User name must be 1 to 64 letters, digits, '.', '_' or '-'!"
EMAIL_RULE = "E-mail address must look like name@example.org, with no spaces!"


AS_ROOT = os.geteuid() == 0
# A second OS user: as root, permissions do not stop root, so such cases run as `nobody`.
NOBODY_UID = 65534
NOBODY = ["setpriv", f"--reuid={NOBODY_UID}", f"--regid={NOBODY_UID}", "--clear-groups"] \
    if AS_ROOT else []
_NOBODY_BIN = []


def nobody_binary():
    """A copy of the binary that `nobody` can run, whatever the checkout's permissions."""
    if not _NOBODY_BIN:
        folder = tempfile.mkdtemp(prefix="accounts-bin-", dir="/tmp")
        os.chmod(folder, 0o755)
        copy = os.path.join(folder, "accounts")
        shutil.copy2(BIN, copy)
        os.chmod(copy, 0o755)
        _NOBODY_BIN.append(copy)
    return _NOBODY_BIN[0]


# Runs a command, then writes its exit code, CPU seconds and peak RSS (KiB) as JSON to a file.
# It is a small process of its own because on Linux a child's peak RSS starts at its parent's
# high-water mark when it execs, and pytest's can exceed what `accounts` itself uses.
REAPER = r"""
import json, os, subprocess, sys, threading
timeout, report, *command = sys.argv[1:]
proc = subprocess.Popen(command)
watchdog = threading.Timer(float(timeout), proc.kill)
watchdog.start()
_, status, usage = os.wait4(proc.pid, 0)
watchdog.cancel()
proc.returncode = os.waitstatus_to_exitcode(status)
with open(report, "w") as f:
    json.dump({"code": proc.returncode, "cpu": usage.ru_utime + usage.ru_stime,
               "rss_kib": usage.ru_maxrss}, f)
"""


def form(username=USERNAME, full_name=FULL_NAME, email=EMAIL, password=PASSWORD, again=None):
    """Five lines of standard input for `accounts activate`."""
    again = password if again is None else again
    return f"{username}\n{full_name}\n{email}\n{password}\n{again}\n"


def screen(child) -> str:
    """Everything the pty showed so far, with \\r\\n turned into \\n."""
    return child.logfile_read.getvalue().replace("\r\n", "\n")


def pty_echo(child) -> bool:
    """The ECHO flag of the child's terminal, read with termios."""
    return bool(termios.tcgetattr(child.child_fd)[3] & termios.ECHO)


def answer(child, prompt, text):
    """Waits for a visible prompt with echo on, then types a line."""
    child.expect_exact(prompt)
    assert child.getecho() and pty_echo(child), f"echo is off at {prompt!r}"
    child.sendline(text)


def answer_secret(child, prompt, text):
    """Waits for a password prompt, checks echo is off, then types a line."""
    child.expect_exact(prompt)
    assert child.waitnoecho(timeout=5), f"echo still on at {prompt!r}"
    assert not child.getecho()
    assert not pty_echo(child)
    child.sendline(text)


def ctrl_c_at_secret(child, prompt):
    """Waits for a password prompt with echo off, then presses Ctrl-C."""
    child.expect_exact(prompt)
    assert child.waitnoecho(timeout=5)
    child.sendintr()


def changed_env(env: dict, changes: dict) -> dict:
    """`env` with `changes` made in place: a value set, None removes the variable."""
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def finish(child, timeout=15) -> int:
    """Waits for the spawned process to end and returns its exit status."""
    child.expect(pexpect.EOF, timeout=timeout)
    child.close()
    assert child.signalstatus is None, f"killed by signal {child.signalstatus}"
    return child.exitstatus


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def out_lines(self):
        return self.stdout.splitlines()

    @property
    def err_lines(self):
        return self.stderr.splitlines()


class Device:
    """One isolated device: its own HOME, XDG_DATA_HOME, XDG_STATE_HOME (the session file) and
    database file."""

    def __init__(self, root: pathlib.Path):
        self.root = root
        self.home = root / "home"
        self.xdg = root / "xdg"
        self.state = root / "state"
        self.home.mkdir()
        self.xdg.mkdir()
        self.state.mkdir(mode=0o700)
        # In a postgresql run: a PostgresStore (its str() is the URI), else the file's path.
        self.db = new_store(root / "x" / "accounts.sqlite3")

    @property
    def postgresql(self) -> bool:
        return isinstance(self.db, PostgresStore)

    @property
    def session_file(self) -> pathlib.Path:
        """Where this device's client keeps its session token."""
        return self.state / "accounts" / "session"

    @property
    def key_file(self) -> pathlib.Path:
        """The key the TOTP secrets are sealed under: beside an SQLite database; for PostgreSQL
        ~/.config/accounts/postgresql.key (`env` leaves XDG_CONFIG_HOME unset)."""
        if self.postgresql:
            return self.home / ".config" / "accounts" / "postgresql.key"
        return self.db.with_name(self.db.name + ".key")

    def nothing_created(self) -> bool:
        """True when no store was made: no database file nor its folder (SQLite), no schema
        `accounts` in the database (PostgreSQL)."""
        if self.postgresql:
            return not self.db.exists()
        return not self.db.exists() and not self.db.parent.exists()

    def pam_store_args(self) -> list:
        """The store flags for `pam-auth`, which reads no ACCOUNTS_* and unsets PG*: the database
        (for PostgreSQL the URI with its socket folder, port and role written in it) and, for
        PostgreSQL, --key-file naming this device's key (its default is the running user's
        ~/.config, outside the test's HOME)."""
        if self.postgresql:
            return ["--database", self.db.explicit_uri, "--key-file", str(self.key_file)]
        return ["--database", str(self.db)]

    def pam_args(self) -> list:
        """The store flags and a time limit no busy machine reaches: a test about something
        else must not be ended by pam-auth's own alarm (5 seconds by default) because other
        processes shared the cores. The tests of the limit itself set theirs."""
        return [*self.pam_store_args(), "--time-limit", "300"]

    @contextlib.contextmanager
    def write_lock(self):
        """Another writer holding the store for the duration: SQLite's BEGIN EXCLUSIVE; for
        PostgreSQL the activation row locked FOR UPDATE, which every write takes first."""
        if self.postgresql:
            with self.db.cluster.connect(self.db.name) as holder:
                holder.execute("SELECT * FROM activation WHERE id = 1 FOR UPDATE")
                yield
                holder.rollback()
            return
        holder = sqlite3.connect(self.db, isolation_level=None, timeout=5)
        try:
            holder.execute("BEGIN EXCLUSIVE")
            yield
        finally:
            holder.execute("ROLLBACK")
            holder.close()

    def env(self, fast=True, database=True, **extra) -> dict:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("ACCOUNTS_") and k != "XDG_CONFIG_HOME"}
        env.update(
            HOME=str(self.home), XDG_DATA_HOME=str(self.xdg), XDG_STATE_HOME=str(self.state),
            TZ="UTC", LC_ALL="C.UTF-8",
            TERM="dumb")
        if database:
            env["ACCOUNTS_DATABASE"] = str(self.db)
        if fast:
            env["ACCOUNTS_PBKDF2_ITERATIONS"] = FAST_ITERATIONS
        return changed_env(env, extra)

    def run(self, *args, input=None, fast=True, env=None, cwd=None, umask=None,
            timeout=60) -> Result:
        """Runs the binary with `input` on a pipe (no terminal); stdin is /dev/null if None."""
        preexec = (lambda: os.umask(umask)) if umask is not None else None
        proc = subprocess.run(
            [BIN, *args], input=input, stdin=subprocess.DEVNULL if input is None else None,
            capture_output=True, text=True, env=env if env is not None else self.env(fast=fast),
            cwd=cwd or str(self.root), timeout=timeout, preexec_fn=preexec)
        return Result(proc.returncode, proc.stdout, proc.stderr)

    def spawn(self, *args, fast=True, env=None, timeout=10, preexec_fn=None):
        """Runs the binary on a pseudo-terminal; its whole output is kept in logfile_read.
        `preexec_fn` runs in the child before exec (e.g. to set signal dispositions)."""
        child = pexpect.spawn(
            BIN, list(args), env=env if env is not None else self.env(fast=fast),
            cwd=str(self.root), dimensions=(24, 200), encoding="utf-8", codec_errors="replace",
            timeout=timeout, preexec_fn=preexec_fn)
        child.logfile_read = io.StringIO()
        return child

    def shell(self, fast=True):
        """An interactive bash on a pseudo-terminal, prompt `PROMPT$ `."""
        env = self.env(fast=fast, PS1="PROMPT$ ", PROMPT_COMMAND=None)
        child = pexpect.spawn(
            "bash", ["--norc", "--noprofile"], env=env, cwd=str(self.root),
            dimensions=(24, 200), encoding="utf-8", codec_errors="replace", timeout=10)
        child.logfile_read = io.StringIO()
        child.expect_exact("PROMPT$ ")
        return child

    # Shortcuts over `run`.

    def activate(self, username=USERNAME, full_name=FULL_NAME, email=EMAIL, password=PASSWORD,
                 fast=True):
        result = self.run("activate", input=form(username, full_name, email, password),
                          fast=fast)
        assert (result.code, result.stdout, result.stderr) == (
            0, f"Device activated for {username}.\n", ""), result
        return result

    def login(self, username=USERNAME, password=PASSWORD, fast=True, env=None) -> Result:
        return self.run("login", input=f"{username}\n{password}\n", fast=fast, env=env)

    def add_user(self, username=BOB, full_name=BOB_FULL_NAME, email=BOB_EMAIL,
                 password=BOB_PASSWORD):
        """`accounts user add` with every field a flag and the password on stdin."""
        result = self.run("user", "add", "--username", username, "--full-name", full_name,
                          "--email", email, "--password-stdin", input=password + "\n")
        assert (result.code, result.stdout, result.stderr) == (
            0, f"Account added: {username}.\n", ""), result
        return result

    def accounts(self) -> list:
        """`accounts user list --json`, one dict per account."""
        result = self.run("user", "list", "--json")
        assert (result.code, result.stderr) == (0, ""), result
        return [json.loads(line) for line in result.out_lines]

    def account(self, name) -> dict:
        """`accounts user show NAME --json`."""
        result = self.run("user", "show", name, "--json")
        assert (result.code, result.stderr) == (0, ""), result
        return json.loads(result.stdout)

    def status(self) -> dict:
        result = self.run("status", "--json")
        assert result.code == 0, result
        return json.loads(result.stdout)

    def events(self) -> list:
        result = self.run("log", "--json")
        assert result.code == 0, result
        return [json.loads(line) for line in result.out_lines]

    def stored_hash(self, username_key: str = USERNAME) -> str:
        """The password hash stored for the account whose user name key is `username_key`."""
        row = self.query("SELECT password_hash FROM account WHERE username_key = ?", username_key)
        assert len(row) == 1, f"no account with the key {username_key!r}"
        return row[0][0]

    def set_stored_hash(self, value: str, username_key: str = USERNAME):
        """Overwrites the stored hash of one account (a tampered or older database)."""
        self.execute("UPDATE account SET password_hash = ? WHERE username_key = ?", value,
                     username_key)

    def query(self, sql: str, *args) -> list:
        """The rows of a read from the store, with a connection of its own (closed after: with
        SQLite, `with` alone would leave it open and keep the -wal from checkpointing). The same
        SQL on both stores (`?` placeholders, the tables' own names); PostgreSQL's values come
        back as sqlite3 gives them (times as stored text, booleans 0/1, blobs bytes)."""
        return store_query(self.db, sql, *args)

    def query_dicts(self, sql: str, *args) -> list:
        """The rows of a read as dicts by column name (values as `query` gives them)."""
        return store_query(self.db, sql, *args, names=True)

    def execute(self, sql: str, *args):
        """One write to the store, committed (pass booleans as True/False: both stores take
        them)."""
        changed = store_execute(self.db, sql, *args)
        assert changed >= 1, f"{sql!r} changed no row"

    def columns(self, table: str) -> list:
        """The column names of one table, in order."""
        if self.postgresql:
            return [r[0] for r in self.query(
                "SELECT column_name::text FROM information_schema.columns "
                "WHERE table_schema = 'accounts' AND table_name = ? ORDER BY ordinal_position",
                table)]
        return [c[1] for c in self.query(f"PRAGMA table_info({table})")]

    def foreign_keys(self, table: str) -> list:
        """(referenced table, column, referenced column, ON DELETE action) for each foreign key
        of one table."""
        if self.postgresql:
            return self.query(
                "SELECT ccu.table_name::text, kcu.column_name::text, ccu.column_name::text, "
                "rc.delete_rule::text FROM information_schema.referential_constraints rc "
                "JOIN information_schema.key_column_usage kcu ON kcu.constraint_schema = "
                "rc.constraint_schema AND kcu.constraint_name = rc.constraint_name "
                "JOIN information_schema.constraint_column_usage ccu ON ccu.constraint_schema = "
                "rc.constraint_schema AND ccu.constraint_name = rc.constraint_name "
                "WHERE kcu.table_schema = 'accounts' AND kcu.table_name = ? ORDER BY 2", table)
        return [(f[2], f[3], f[4], f[6]) for f in self.query(f"PRAGMA foreign_key_list({table})")]

    def migrations(self) -> set:
        """The identifiers of the migrations applied to the store."""
        table = "schema_migration" if self.postgresql else "grdb_migrations"
        return {r[0] for r in self.query(f"SELECT identifier FROM {table}")}

    def foreign_key_violations(self) -> list:
        """Rows that break a foreign key: SQLite checks them on demand (PRAGMA foreign_key_check);
        PostgreSQL enforces every foreign key at each commit, so none can be stored."""
        if self.postgresql:
            return []
        return self.query("PRAGMA foreign_key_check")

    def assert_nothing_stored(self):
        """The device is still Public and no activation was logged."""
        assert self.status()["state"] == "Public"
        assert "activation" not in [e["event"] for e in self.events()]


@pytest.fixture(autouse=True)
def _drop_test_databases():
    """Drops every PostgreSQL database the test made (its devices' and new_store's), whatever
    its clients left connected."""
    yield
    while _CREATED:
        CLUSTER.drop(_CREATED.pop())


@pytest.fixture
def device(tmp_path) -> Device:
    return Device(tmp_path)


@pytest.fixture
def activated(device) -> Device:
    device.activate()
    return device


@pytest.fixture(scope="session")
def django_hashers():
    """Django's password hashers, with a minimal settings module."""
    import django
    from django.conf import settings

    if not settings.configured:
        settings.configure(
            PASSWORD_HASHERS=["django.contrib.auth.hashers.PBKDF2PasswordHasher"],
            INSTALLED_APPS=[], USE_TZ=True)
        django.setup()
    from django.contrib.auth import hashers

    return hashers


# The release program (the one that ships) for the tests that compare costs; Scripts/test runs
# every suite on it, so this is BIN there.
TIMING_BIN = os.environ.get("ACCOUNTS_RELEASE_BIN") or BIN


def cpu_seconds(args, stdin: str, env, expected=1, cwd=None) -> float:
    """CPU seconds (user + system) of one run of `accounts *args` fed `stdin`, after checking its
    exit code: what a comparison of costs reads, never the wall clock, which other processes
    on the machine would move."""
    proc = subprocess.Popen([TIMING_BIN, *args], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    proc.stdin.write(stdin.encode())
    proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == expected, (args, stdin)
    return usage.ru_utime + usage.ru_stime


@pytest.fixture(scope="session", autouse=True)
def binary_exists():
    assert os.access(BIN, os.X_OK), f"accounts binary not found at {BIN}; set ACCOUNTS_BIN"


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "sqlite_only: about the SQLite file itself (its modes, -wal/-shm, upgrades, "
        "the key beside it…); deselected when ACCOUNTS_TEST_BACKEND=postgresql")
    config.addinivalue_line(
        "markers", "postgresql_only: about PostgreSQL itself (tests that make their own "
        "databases on the cluster); deselected when ACCOUNTS_TEST_BACKEND=sqlite, so that they "
        "run once")
    config.addinivalue_line(
        "markers", "front_end: about what the program does before and after its store (arguments, "
        "the terminal, input and its refusals, signals, start-up, the cost of an answer, the "
        "install): the same code whichever store is named, so it runs once, in the sqlite run")


def pytest_collection_modifyitems(config, items):
    """A postgresql run deselects the sqlite_only and front_end tests, an sqlite run the
    postgresql_only ones (pytest reports how many): they are not skipped, they do not apply to
    that store, or were run on the other one."""
    def elsewhere(item) -> bool:
        if not POSTGRESQL:
            return item.get_closest_marker("postgresql_only") is not None
        if item.get_closest_marker("postgresql_only"):
            return False  # a front end's test about PostgreSQL itself runs there
        return any(item.get_closest_marker(name) for name in ("sqlite_only", "front_end"))

    kept, dropped = [], []
    for item in items:
        (dropped if elsewhere(item) else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def pytest_report_header(config):
    where = f" ({os.environ.get('PGHOST', '?')}, port {os.environ.get('PGPORT', '?')})" \
        if POSTGRESQL else ""
    return f"accounts store: {BACKEND}{where}"


@pytest.fixture(scope="session", autouse=True)
def postgresql_reachable():
    """In a postgresql run, the cluster answers before any test starts."""
    if POSTGRESQL:
        assert CLUSTER.admin().execute("SELECT 1").fetchone() == (1,), \
            "no PostgreSQL cluster: eval \"$(Scripts/postgres env DIR)\" first"
    yield
    if CLUSTER._admin is not None:
        CLUSTER._admin.close()
