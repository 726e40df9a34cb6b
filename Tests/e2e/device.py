"""One isolated device for a test: its own HOME, XDG folders and store, the binary run on a pipe
or a pseudo-terminal with that environment, and the store read and written beside it."""

from __future__ import annotations

import contextlib
import io
import json
import os
import pathlib
import sqlite3
import subprocess
from dataclasses import dataclass

import pexpect

from constants import (
    BIN, BOB, BOB_EMAIL, BOB_FULL_NAME, BOB_PASSWORD, EMAIL, FAST_ITERATIONS, FULL_NAME, PASSWORD,
    POSTGRESQL, ROLES, USERNAME, program_server)
from fleet import host_may_run
from forms import form
from stores import CLUSTER, PostgresStore, new_store, store_execute, store_query


def with_program_role(args, env: dict) -> dict:
    """In a `pgroles` run, `env` with PGUSER set to the role the command `args` runs as on the
    test databases it names (ACCOUNTS_DATABASE, --database, store copy's --from and --to): see
    PostgresStore.program_role. The owner while any of them is not yet current. A bare
    `accounts` is a host's on an activated store (it logs in) and the administrator's on a
    Public one (it activates)."""
    if not ROLES:
        return env
    args = [str(a) for a in args]
    uris = [env.get("ACCOUNTS_DATABASE", "")] + [a.split("=", 1)[-1] for a in args]
    stores = {CLUSTER.store_named(u) for u in uris if u.startswith("postgres")} - {None}
    if not stores or any("user=" in u for u in uris if u.startswith("postgres")):
        return env
    if args:
        host = host_may_run(args)
    else:
        host = all(store.program_role(host_command=True)
                   and store.query("SELECT 1 FROM activation WHERE state = 'Activated'")
                   for store in stores)
    roles = {store.program_role(host_command=host) for store in stores}
    if None in roles:
        return env
    return dict(env, PGUSER=roles.pop())


def changed_env(env: dict, changes: dict) -> dict:
    """`env` with `changes` made in place: a value set, None removes the variable."""
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env



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
        if POSTGRESQL and "PGHOST" in env:
            env["PGHOST"], env["PGPORT"] = program_server(env["PGHOST"], env.get("PGPORT", ""))
        if fast:
            env["ACCOUNTS_PBKDF2_ITERATIONS"] = FAST_ITERATIONS
        return changed_env(env, extra)

    def run(self, *args, input=None, fast=True, env=None, cwd=None, umask=None,
            timeout=60) -> Result:
        """Runs the binary with `input` on a pipe (no terminal); stdin is /dev/null if None."""
        preexec = (lambda: os.umask(umask)) if umask is not None else None
        env = with_program_role(args, env if env is not None else self.env(fast=fast))
        proc = subprocess.run(
            [BIN, *args], input=input, stdin=subprocess.DEVNULL if input is None else None,
            capture_output=True, text=True, env=env,
            cwd=cwd or str(self.root), timeout=timeout, preexec_fn=preexec)
        return Result(proc.returncode, proc.stdout, proc.stderr)

    def spawn(self, *args, fast=True, env=None, timeout=10, preexec_fn=None):
        """Runs the binary on a pseudo-terminal; its whole output is kept in logfile_read.
        `preexec_fn` runs in the child before exec (e.g. to set signal dispositions)."""
        child = pexpect.spawn(
            BIN, list(args),
            env=with_program_role(args, env if env is not None else self.env(fast=fast)),
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
