"""A test's store, where the binary keeps its data: an SQLite file, or in a postgresql run a fresh
database on the cluster the PG* variables name (made through psycopg, dropped at the test's
end); reads and writes that take the same SQL on both."""

from __future__ import annotations

import datetime
import decimal
import os
import pathlib
import secrets
import sqlite3

from constants import POSTGRESQL, program_server


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
        host, port = program_server(os.environ.get("PGHOST", "/var/run/postgresql"),
                                    os.environ.get("PGPORT", "5432"))
        host = quote(host, safe="")
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

