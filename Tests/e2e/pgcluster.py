"""PostgreSQL for the end-to-end tests: the server the suite shares, a private one a
test may stop and start, fresh databases and roles, psql as the oracle, and a client (HOME,
XDG folders, environment) that names its store by URI.

The shared server is the one `Scripts/postgres env DIR` describes (ACCOUNTS_TEST_PGDIR, exported
by Scripts/test); when that is not set, one private server is started for the whole run and
stopped after. Tests that stop a server use a cluster of their own (`Cluster.start`), never the
shared one. Every psql call runs with a clean PG* environment of its own, so nothing the test
sets for `accounts` reaches psql and the other way round.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import io
import json
import pathlib
import secrets
import signal
import socket
import subprocess
import time

import pexpect
import pytest

from conftest import BIN, FAST_ITERATIONS, FULL_NAME, PASSWORD, USERNAME, Result, form
from pgserver import Server, clean_environment

# The contract's sentences (spec/issue13-cli.md).
WARNING = ("Warning: the database URI holds a password, which other users can see on the "
           "command line; keep it in ~/.pgpass instead.")
FOREIGN = ("Cannot use the database {}: its schema accounts was not made by accounts. Choose "
           "another database with --database.")
NEWER = ("Cannot use the database {}: it was written by a newer version of accounts. Upgrade "
         "accounts to use it.")

# What must never reach a person: a Swift trap, a stack trace, libpq's raw lines, SQLSTATEs.
FORBIDDEN = ["Fatal error", "Stack dump", "Backtrace", "backtrace", "SQLSTATE", "FATAL:",
             "ERROR:", "PANIC:", "DETAIL:", "HINT:", "\tIs the server running",
             "PQconnect", "PQexec", "libpq", "57P01", "57P02", "57P03", "28P01", "28000",
             "3D000", "42501", "42P01", "08006", "08001", "08004", "25P02", "40001", "40P01"]


def cannot_connect(where: str, location: str, reason: str) -> str:
    return (f"Cannot connect to the PostgreSQL server {where} for the database {location}: "
            f"{reason}.")


def cannot_connect_prefix(where: str, location: str) -> str:
    return f"Cannot connect to the PostgreSQL server {where} for the database {location}: "


def lost_prefix(location: str) -> str:
    return f"The connection to the PostgreSQL server for the database {location} was lost: "


LOST_SUFFIX = ". No change was half-written; try again."


def permission_prefix(location: str, reading: bool = False) -> str:
    verb = "read" if reading else "write"
    return f"Cannot {verb} the database {location}: the role has no permission ("


def on_socket(cluster: "Cluster") -> str:
    """`<where>` for a connection through the cluster's Unix socket."""
    return f"on the socket {cluster.socket} (port {cluster.port})"


def at_tcp(port: int, host: str = "127.0.0.1") -> str:
    """`<where>` for a TCP connection."""
    return f"at {host}:{port}"


def assert_clean(*texts: str):
    """No trap, stack trace, raw libpq line or SQLSTATE in any of `texts`."""
    for text in texts:
        for bad in FORBIDDEN:
            assert bad not in text, f"{bad!r} in output: {text!r}"


def assert_one_sentence(result: Result, prefix: str, suffix: str = ".",
                        warning: bool = False) -> str:
    """Exit 3, nothing on stdout, stderr one line (after the password warning, if `warning`)
    that starts with `prefix` and ends with `suffix`; returns the part in between (libpq's
    reason in words), which must be a non-empty phrase on that one line."""
    assert result.code == 3, result
    assert result.stdout == "", result
    lines = result.err_lines
    if warning:
        assert lines[:1] == [WARNING], result
        lines = lines[1:]
    assert len(lines) == 1, result
    line = lines[0]
    assert line.startswith(prefix), (prefix, result)
    assert line.endswith(suffix), (suffix, result)
    reason = line[len(prefix):len(line) - len(suffix)]
    assert reason.strip() and reason == reason.strip(), result
    assert_clean(result.stdout, result.stderr)
    return reason


class Cluster(Server):
    """The shared server (from the environment) or a private one a test may stop and start,
    with the questions the tests ask of its catalogue."""

    @classmethod
    def start(cls, durable=False) -> "Cluster":
        return super().start(durable, prefix="accounts-e2e-pg-")

    def schemas(self, database: str) -> list:
        return self.psql("SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' "
                         "AND nspname <> 'information_schema' ORDER BY 1", database).split()

    def tables(self, database: str, schema="accounts") -> list:
        """The tables of `schema` (not its views: accounts.account_view reads account)."""
        return self.psql("SELECT table_name FROM information_schema.tables WHERE table_schema "
                         f"= '{schema}' AND table_type = 'BASE TABLE' ORDER BY 1",
                         database).split()

    def backends(self, database: str) -> list:
        """The client backends connected to `database` (psql's own excluded)."""
        return self.json_rows(
            "SELECT pid, state, xact_start IS NOT NULL AS in_transaction, "
            "application_name FROM pg_stat_activity WHERE datname = "
            f"'{database}' AND pid <> pg_backend_pid() AND backend_type = 'client backend'",
            "postgres")


class Client:
    """One host's `accounts`: its own HOME, XDG folders (data, state, config) and environment;
    its store is `database` (a URI or a path), given as ACCOUNTS_DATABASE unless a test passes
    --database itself. No PG* setting from the test run leaks in."""

    def __init__(self, root: pathlib.Path, database: str | None = None):
        self.root = pathlib.Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.home = self.root / "home"
        self.xdg = self.root / "xdg"
        self.state = self.root / "state"
        self.config = self.root / "config"
        for folder in (self.home, self.xdg, self.config):
            folder.mkdir(exist_ok=True)
        self.state.mkdir(mode=0o700, exist_ok=True)
        self.database = database
        # Settings this client always has (e.g. PGPASSFILE), below a run's own `extra`.
        self.settings = {}

    @property
    def session_file(self) -> pathlib.Path:
        return self.state / "accounts" / "session"

    @property
    def pg_key_file(self) -> pathlib.Path:
        """The default key file of a PostgreSQL store ($XDG_CONFIG_HOME/accounts/...)."""
        return self.config / "accounts" / "postgresql.key"

    def env(self, fast=True, database=True, **extra) -> dict:
        env = clean_environment()
        env.update(HOME=str(self.home), XDG_DATA_HOME=str(self.xdg),
                   XDG_STATE_HOME=str(self.state), XDG_CONFIG_HOME=str(self.config),
                   TZ="UTC", LC_ALL="C.UTF-8", TERM="dumb")
        if database and self.database is not None:
            env["ACCOUNTS_DATABASE"] = self.database
        if fast:
            env["ACCOUNTS_PBKDF2_ITERATIONS"] = FAST_ITERATIONS
        for key, value in {**self.settings, **extra}.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        return env

    def run(self, *args, input=None, env=None, timeout=60, binary=None) -> Result:
        proc = subprocess.run(
            [binary or BIN, *args], input=input,
            stdin=subprocess.DEVNULL if input is None else None, capture_output=True, text=True,
            env=env if env is not None else self.env(), cwd=str(self.root), timeout=timeout)
        return Result(proc.returncode, proc.stdout, proc.stderr)

    def timed(self, *args, **kwargs) -> tuple:
        """(Result, seconds) of one run."""
        start = time.monotonic()
        result = self.run(*args, **kwargs)
        return result, time.monotonic() - start

    def popen(self, *args, env=None) -> subprocess.Popen:
        return subprocess.Popen([BIN, *args], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env if env is not None else self.env(),
                                cwd=str(self.root))

    def spawn(self, *args, env=None, timeout=15):
        child = pexpect.spawn(BIN, list(args), env=env if env is not None else self.env(),
                              cwd=str(self.root), dimensions=(24, 200), encoding="utf-8",
                              codec_errors="replace", timeout=timeout)
        child.logfile_read = io.StringIO()
        return child


def freeze_while_writing(cluster, database, proc, what: str, seconds=60) -> int:
    """Waits until `proc`'s transaction on `database` is writing accounts (its backend in a
    transaction, its statement an import batch's `WITH … INSERT INTO accounts.account (…)`,
    which an import and a copy use; not any insert into the schema: a migration's transaction
    inserts too, and commits at once), then freezes `proc` (SIGSTOP) and checks the transaction
    is still open: a point the program reached, held, so a fault comes in the middle however
    fast the machine. Returns the backend's pid; the caller kills `proc` or sends it SIGCONT.
    `what` names the command in the failure messages."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert proc.poll() is None, (f"the {what} ended before the fault", proc.communicate())
        writing = cluster.json_rows(
            "SELECT pid FROM pg_stat_activity WHERE datname = "
            f"'{database}' AND pid <> pg_backend_pid() AND backend_type = 'client backend' "
            "AND xact_start IS NOT NULL AND query LIKE '%INSERT INTO accounts.account (%'",
            "postgres")
        if writing:
            proc.send_signal(signal.SIGSTOP)
            open_ = [b for b in cluster.backends(database)
                     if b["pid"] == writing[0]["pid"] and b["in_transaction"]]
            assert open_, f"the {what} committed before it could be stopped"
            return writing[0]["pid"]
    pytest.fail(f"the {what} never wrote accounts in a transaction")


def silent_listener() -> socket.socket:
    """A TCP socket on 127.0.0.1 that listens and never answers: a connection to it completes
    (the kernel's backlog) and then hears nothing, so only a timeout ends the wait."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    return listener


def closed_port() -> int:
    """A TCP port on 127.0.0.1 where nothing listens (connection refused)."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


# Normalising rows: PostgreSQL (row_to_json) and SQLite to one form.

def normal_time(value):
    """A time from either store as an aware UTC datetime (None stays None)."""
    if value is None:
        return None
    parsed = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    assert parsed.tzinfo is not None, value
    return parsed.astimezone(datetime.timezone.utc)


def pg_column_types(cluster: Cluster, database: str, table: str) -> dict:
    rows = cluster.json_rows(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = "
        f"'accounts' AND table_name = '{table}' ORDER BY ordinal_position", database)
    return {row["column_name"]: row["data_type"] for row in rows}


def pg_table(cluster: Cluster, database: str, table: str) -> tuple:
    """(column types, rows normalised to sorted tuples in column-name order)."""
    types = pg_column_types(cluster, database, table)
    columns = sorted(types)
    rows = []
    for row in cluster.json_rows(f'SELECT * FROM accounts."{table}"', database):
        rows.append(tuple(normal_pg(types[c], row[c]) for c in columns))
    return types, sorted(rows, key=repr)


def normal_pg(kind: str, value):
    if value is None:
        return None
    if kind.startswith("timestamp"):
        return normal_time(value)
    if kind == "boolean":
        return 1 if value else 0
    if kind == "bytea":
        assert value.startswith("\\x"), value
        return bytes.fromhex(value[2:])
    return value


def normal_sqlite(kind: str, value):
    """An SQLite value read the way PostgreSQL's column of type `kind` holds it."""
    if value is None:
        return None
    if kind.startswith("timestamp"):
        return normal_time(value)
    return value


def sequence_next(cluster: Cluster, database: str, table: str, column="id") -> int:
    """The id the next row of accounts.TABLE gets from its identity sequence."""
    sequence = cluster.value(f"SELECT pg_get_serial_sequence('accounts.{table}', '{column}')",
                             database)
    assert sequence, f"accounts.{table}.{column} has no sequence"
    row = cluster.json_rows(f"SELECT last_value, is_called FROM {sequence}", database)[0]
    return row["last_value"] + 1 if row["is_called"] else row["last_value"]


def dump_accounts_schema(cluster: Cluster, database: str) -> dict:
    """Every row of every table of the schema `accounts` (raw row_to_json dicts, sorted), and
    every sequence's state: to prove nothing changed."""
    dump = {}
    for table in cluster.tables(database):
        rows = cluster.json_rows(f'SELECT * FROM accounts."{table}"', database)
        dump[table] = sorted(json.dumps(r, sort_keys=True) for r in rows)
    for name in cluster.psql("SELECT sequence_name FROM information_schema.sequences WHERE "
                             "sequence_schema = 'accounts' ORDER BY 1", database).split():
        dump["seq:" + name] = cluster.json_rows(
            f'SELECT last_value, is_called FROM accounts."{name}"', database)
    return dump


def csv_of(count: int) -> str:
    """A CSV of `count` accounts that all import (one cheap PBKDF2 hash shared by all)."""
    salt = "abcdefghijklmnopqrstuv"
    key = base64.b64encode(hashlib.pbkdf2_hmac("sha256", b"imported password here",
                                               salt.encode(), 1000)).decode()
    digest = f"pbkdf2_sha256$1000${salt}${key}"
    rows = [f"user{i:07d},User {i},user{i}@example.org,{digest}" for i in range(count)]
    return "username,full_name,email,password_hash\n" + "\n".join(rows) + "\n"


def make_shared_cluster(request) -> Cluster:
    """The suite's shared cluster (from the environment), or a private one started for this
    run and stopped at its end."""
    cluster = Cluster.from_environment()
    if cluster is None:
        cluster = Cluster.start()
        request.addfinalizer(cluster.remove)
    return cluster


@pytest.fixture(scope="session")
def pg(request) -> Cluster:
    """The PostgreSQL server the suite shares (never stopped by a test)."""
    return make_shared_cluster(request)


@pytest.fixture
def pgdb(pg):
    """A new empty database on the shared server (owned by postgres), dropped after."""
    name = pg.create_database()
    yield name
    pg.drop_database(name)


@pytest.fixture
def client(tmp_path, pg, pgdb) -> Client:
    """A client whose store is `pgdb`, named through the socket as ACCOUNTS_DATABASE."""
    return Client(tmp_path / "client", pg.uri(pgdb))


@pytest.fixture
def roles(pg, pgdb, client):
    """An activated store, its administrator and host roles made and given their rights by
    `store roles --apply` (run by the owner): (admin role, host role)."""
    activate(client)
    admin, host = pg.create_role("admin"), pg.create_role("host")
    result = client.run("store", "roles", "--admin", admin, "--host", host, "--apply")
    assert (result.code, result.stderr) == (0, ""), result
    assert result.stdout == (f"The role {admin} may now administer {client.database}, and the "
                             f"role {host} may log people in there.\n")
    yield admin, host
    for role in (admin, host):
        pg.psql(f'DROP OWNED BY "{role}"', pgdb, check=False)
        pg.drop_role(role)


def as_role(pg, pgdb, tmp_path, role, name):
    """A client of `pgdb` (its files in tmp_path/name) that connects as `role`."""
    return Client(tmp_path / name, pg.uri(pgdb, user=role))


# What the PostgreSQL test files share: the contract's first sentences, activating and logging in
# through a client, what psql sees of the accounts, and a role with a SCRAM password.

WELCOME = f"Welcome back {FULL_NAME}!"
ACTIVATED = f"Device activated for {USERNAME}.\n"
TABLES = ["account", "account_group", "activation", "audit_event", "audit_kind", "group_member",
          "home_path", "login_throttle", "pending_second_factor", "posix_id",
          "recovery_code", "schema_migration", "second_factor", "session", "ssh_key",
          "userdb_host", "userdb_setting"]


def activate(client, *args, env=None):
    result = client.run(*args, "activate", input=form(), env=env)
    assert (result.code, result.stdout, result.stderr) == (0, ACTIVATED, ""), result
    return result


def login(client, *args, env=None, username=USERNAME, password=PASSWORD):
    return client.run(*args, "login", input=f"{username}\n{password}\n", env=env)


def assert_welcome(result, stderr=""):
    assert (result.code, result.stderr) == (0, stderr), result
    assert result.out_lines[0] == WELCOME, result


def stored_accounts(cluster, database):
    """(username, owner?) of every account in the PostgreSQL store, by psql."""
    return cluster.psql("SELECT a.username, a.id = v.owner_id FROM accounts.account a, "
                        "accounts.activation v ORDER BY a.id", database).split()


def status_lines(location, state="Activated"):
    return f"State: {state}\nDatabase: {location}\n"


@pytest.fixture
def scram_role(pg):
    """A login role with a SCRAM password, owning a new database: (role, password, database).
    The password has characters a URI must percent-encode, and a random part to search for."""
    needle = secrets.token_hex(6)
    password = f"Pw/{needle}@%x"
    role = pg.create_role("acct", password=password)
    assert pg.value(f"SELECT rolpassword LIKE 'SCRAM-SHA-256$%' FROM pg_authid WHERE rolname = "
                    f"'{role}'") == "t"
    database = pg.create_database(owner=role)
    yield role, password, database, needle
    pg.drop_database(database)
    pg.drop_role(role)
