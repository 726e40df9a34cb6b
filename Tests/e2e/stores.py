"""A test's store, where the binary keeps its data: an SQLite file, or in a postgresql run a fresh
database on the cluster the PG* variables name (made through psycopg, a copy of the schema the
program made once, or empty for a test marked `empty_database`; dropped at the test's end);
reads and writes that take the same SQL on both."""

from __future__ import annotations

import datetime
import decimal
import os
import pathlib
import re
import secrets
import sqlite3
import subprocess

from constants import BIN, POOLED, POSTGRESQL, REPO, ROLES, program_server
from fleet import role_sql

# The roles of a `pgroles` run, made once on the cluster (conftest.py) and given their rights on
# each test database by `accounts store roles --apply`, run by the owner.
ADMIN_ROLE, HOST_ROLE = "accounts_e2e_admin", "accounts_e2e_host"
# The PostgreSQL migrations the program applies, read from its source: a store with all of them
# is current, and only then do the roles take over from the owner (a host never upgrades).
POSTGRES_MIGRATIONS = set(re.findall(
    r'\("(v\d+)", postgresSchemaV\d+\)',
    (REPO / "Sources" / "AccountsPostgres" / "PostgresSchema.swift").read_text()))


def recorded_migrations(db) -> set:
    """The migrations a store's schema records: its steps (`schema_migration`) and, from
    migration v18 on, its expansions (`schema_expansion`); empty where there is no schema."""
    found = set()
    for table in ("schema_migration", "schema_expansion"):
        if db.execute(f"SELECT to_regclass('accounts.{table}')").fetchone()[0]:
            found |= {row[0] for row in db.execute(f"SELECT identifier FROM accounts.{table}")}
    return found


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


# Roles that never exist: `store roles --apply` naming them makes the schema (the program's own
# first write, as the owner) and then stops, granting nothing (PostgresCluster.template).
ABSENT_ADMIN, ABSENT_HOST = "accounts_e2e_no_admin", "accounts_e2e_no_host"


class PostgresCluster:
    """The cluster the PG* variables name: one autocommit connection to its `postgres` database
    makes and drops the tests' databases.

    A test's store starts as a copy of a template database in which the program made its
    schema once (per process: an xdist worker's template is its own, so no other session is
    connected to it while it is copied, as CREATE DATABASE … TEMPLATE needs), the store's own
    identity then drawn anew; a test marked `empty_database` gets empty databases instead,
    where the program makes the schema at its first write (the tests about that first use)."""

    def __init__(self):
        self._admin = None
        self._template = None
        # Whether the current test's stores start empty (its `empty_database` mark).
        self.empty = False

    def admin(self):
        if self._admin is None or self._admin.closed:
            import psycopg
            self._admin = psycopg.connect(dbname="postgres", autocommit=True)
        return self._admin

    def connect(self, name):
        """A connection to one test database, its search_path the schema `accounts`."""
        import psycopg
        return psycopg.connect(dbname=name, options="-c search_path=accounts")

    def template(self) -> str:
        """The database the tests' stores are copied from, made at this process's first copy:
        the program makes its schema there, as its first write does (`store roles --apply`
        naming roles that do not exist: the schema is made and committed, then the rights stop
        at the first missing role and nothing is granted), and it is checked current."""
        if self._template is None:
            # Named by worker and at random: runs sharing a cluster never copy another's.
            worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
            name = f"acc_template_{worker}_{secrets.token_hex(4)}"
            self.admin().execute(f'CREATE DATABASE "{name}"')
            env = {k: v for k, v in os.environ.items() if not k.startswith("ACCOUNTS_")}
            env["ACCOUNTS_DATABASE"] = f"postgresql:///{name}"
            proc = subprocess.run(
                [BIN, "store", "roles", "--admin", ABSENT_ADMIN, "--host", ABSENT_HOST,
                 "--apply"], stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env,
                timeout=60)
            assert (proc.returncode, proc.stdout, proc.stderr) == (
                3, "", f"The database postgresql:///{name} failed: the role "
                f'"{ABSENT_ADMIN}" does not exist: create it first.\n'), proc
            with self.connect(name) as db:
                found = recorded_migrations(db)
            assert found == POSTGRES_MIGRATIONS, found
            self._template = name
        return self._template

    def drop_template(self):
        if self._template is not None:
            self.admin().execute(f'DROP DATABASE IF EXISTS "{self._template}" WITH (FORCE)')
            self._template = None

    def create(self) -> "PostgresStore":
        name = "acc_" + secrets.token_hex(8)
        if self.empty:
            self.admin().execute(f'CREATE DATABASE "{name}"')
        else:
            # FILE_COPY copies the template's files (and checkpoints) instead of writing every
            # page of it to the WAL: the cheaper of the two for the server.
            self.admin().execute(
                f'CREATE DATABASE "{name}" TEMPLATE "{self.template()}" STRATEGY FILE_COPY')
            # The store's own identity (its userdb manifests are named by it), drawn as the
            # schema's migration draws it: no two stores share the template's.
            with self.connect(name) as db:
                db.execute("UPDATE userdb_setting SET store_id = "
                           "md5(random()::text || clock_timestamp()::text)")
        store = PostgresStore(self, name)
        _CREATED.append(store)
        return store

    def drop(self, store):
        self.admin().execute(f'DROP DATABASE IF EXISTS "{store.name}" WITH (FORCE)')

    def make_roles(self):
        """The two roles of a `pgroles` run, if not made yet."""
        for role in (ADMIN_ROLE, HOST_ROLE):
            self.admin().execute(role_sql(role))

    def store_named(self, uri: str):
        """The test database that `uri` names, if this test made it."""
        name = uri.split("?")[0].removeprefix("postgresql:///").removeprefix("postgres:///")
        return next((store for store in _CREATED if store.name == name), None)


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
        self._roles_given = False

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
        without the PG* variables (pam-auth unsets them), and behind the pooler the passfile. In
        a `pgroles` run the role is the host role once the store is current: pam-auth and the
        module are a host's."""
        from urllib.parse import quote
        host, port = program_server(os.environ.get("PGHOST", "/var/run/postgresql"),
                                    os.environ.get("PGPORT", "5432"))
        host = quote(host, safe="")
        user = self.program_role(host_command=True) or os.environ.get("PGUSER", "postgres")
        uri = f"postgresql:///{self.name}?host={host}&port={port}&user={user}"
        # Behind the pooler every role has a password, in the passfile Scripts/pgbouncer made.
        return uri + f"&passfile={quote(os.environ['PGPASSFILE'], safe='')}" if POOLED else uri

    def program_role(self, host_command: bool):
        """In a `pgroles` run, the role the program connects as for one command: None (the
        owner, PGUSER) until the schema is current, then the host role for a command a host may
        run and the administrator role for any other. The rights are given once, by `accounts
        store roles --apply` run as the owner, when the schema is first found current."""
        if not ROLES:
            return None
        if not self._roles_given:
            with self.cluster.connect(self.name) as db:
                found = recorded_migrations(db)
            if found != POSTGRES_MIGRATIONS:
                return None
            self.give_roles()
        return HOST_ROLE if host_command else ADMIN_ROLE

    def give_roles(self):
        """`accounts store roles --apply` on this database, as its owner."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("ACCOUNTS_")}
        env["ACCOUNTS_DATABASE"] = self.uri
        proc = subprocess.run(
            [BIN, "store", "roles", "--admin", ADMIN_ROLE, "--host", HOST_ROLE, "--apply"],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, timeout=60)
        assert (proc.returncode, proc.stderr) == (0, ""), proc
        self._roles_given = True

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

