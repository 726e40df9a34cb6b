"""A PostgreSQL server for the test suites and the bench: the one copy of the helper that
starts, stops and queries a private cluster made by `Scripts/postgres`.

A cluster lives in a folder of its own under /tmp (the postgres user, who runs the server,
must reach it: not under pytest's 0700 tmp_path or the bench's private folder). Its Unix socket
is DIR/socket, trusted for any role; TCP on 127.0.0.1:DIR/tcpport asks for SCRAM passwords.
Every psql call runs with a clean PG* environment of its own, so nothing a test or the bench
sets for `accounts` reaches psql, and the other way round.

Plain Python: no pytest here (the e2e suite wraps it in fixtures, the stress suite and the
bench use it as it is). Failures raise ServerError with the tool's own words.
"""

from __future__ import annotations

import csv
import glob
import io
import json
import os
import pathlib
import re
import secrets
import shutil
import subprocess
import tempfile
import time
import urllib.parse

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = REPO / "Scripts" / "postgres"


class ServerError(Exception):
    pass


def bindir() -> pathlib.Path:
    """The newest installed server's bin folder (the one Scripts/postgres starts)."""
    folders = glob.glob("/usr/lib/postgresql/*/bin")
    if not folders:
        raise ServerError("no PostgreSQL server is installed (Scripts/setup --test installs it)")

    def version(folder: str) -> list[int]:
        return [int(part) for part in re.findall(r"\d+", folder.split("/")[-2])]

    return pathlib.Path(max(folders, key=version))


def client_binary(name: str) -> str:
    """The server's own client program (`psql`). Debian's /usr/bin/psql is postgresql-common's
    pg_wrapper, a Perl script that picks a version and then runs this one: its own start-up
    (50 to 100 ms) would flatter whatever a bench compares with it."""
    return str(bindir() / name)


def as_postgres(*command: str) -> list[str]:
    """`command` run as the postgres user when we are root (initdb and pg_ctl refuse root)."""
    return list(command) if os.geteuid() != 0 else ["runuser", "-u", "postgres", "--", *command]


def clean_environment() -> dict[str, str]:
    """os.environ without PG* and ACCOUNTS_* settings."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith("PG") and not k.startswith("ACCOUNTS_")}


# One row, `|`-separated (psql -At): what docs/performance.md reports next to the bench's figures.
SETTINGS_SQL = (
    "SELECT current_setting('server_version'), current_setting('fsync'),"
    " current_setting('synchronous_commit'), current_setting('full_page_writes'),"
    " current_setting('wal_sync_method'), current_setting('shared_buffers'),"
    " current_setting('max_connections'),"
    " coalesce(host(inet_server_addr()), 'unix socket'),"
    " current_setting('unix_socket_directories'),"
    " (SELECT string_agg(DISTINCT auth_method, ',') FROM pg_hba_file_rules"
    "  WHERE type = 'local'),"
    " (SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid())")
SETTING_NAMES = ["version", "fsync", "synchronous_commit", "full_page_writes",
                 "wal_sync_method", "shared_buffers", "max_connections", "connection",
                 "socket_folder", "auth_local", "ssl"]


class Server:
    """One cluster made by Scripts/postgres in `folder`. `owned`: this process started it and
    may stop it; a server handed over by the environment (ACCOUNTS_TEST_PGDIR, exported by
    `Scripts/postgres env DIR`) is never stopped."""

    def __init__(self, folder, owned: bool):
        self.dir = pathlib.Path(folder).resolve()
        self.socket = self.dir / "socket"
        self.port = int((self.dir / "tcpport").read_text().strip())
        self.owned = owned

    # Life.

    @classmethod
    def start(cls, durable: bool = False, prefix: str = "accounts-pg-"):
        """A new private cluster. `durable` keeps fsync and synchronous commits on (as SQLite's
        synchronous=FULL): without them an immediate stop (a crash, to the server) may lose
        the last committed transactions, which a test that stops the server must not mistake
        for the program's fault, and a bench would flatter PostgreSQL."""
        folder = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
        proc = subprocess.run([str(SCRIPT), "start", folder] + (["--durable"] if durable else []),
                              capture_output=True, text=True, timeout=180)
        if proc.returncode != 0:
            subprocess.run([str(SCRIPT), "stop", folder], capture_output=True, timeout=120)
            shutil.rmtree(folder, ignore_errors=True)
            raise ServerError(f"Scripts/postgres start exited {proc.returncode}: "
                              f"{(proc.stderr or proc.stdout).strip()[-600:]}")
        return cls(folder, owned=True)

    @classmethod
    def from_environment(cls):
        folder = os.environ.get("ACCOUNTS_TEST_PGDIR")
        if folder and (pathlib.Path(folder) / "tcpport").exists():
            return cls(folder, owned=False)
        return None

    def remove(self) -> None:
        """Stops the server and removes its folder (only a cluster this process started)."""
        if not self.owned:
            raise ServerError("never stop a server this run was given")
        subprocess.run([str(SCRIPT), "stop", str(self.dir)], capture_output=True, timeout=120)
        shutil.rmtree(self.dir, ignore_errors=True)

    def pg_ctl(self, *args: str, timeout: float = 90) -> subprocess.CompletedProcess:
        return subprocess.run(as_postgres(str(bindir() / "pg_ctl"), "-D", str(self.dir / "data"),
                                          *args), capture_output=True, text=True, timeout=timeout)

    def stop_server(self, mode: str = "fast") -> None:
        """Stops the server, keeping its data (pg_ctl stop -m fast|immediate)."""
        if not self.owned:
            raise ServerError("never stop a server this run was given")
        proc = self.pg_ctl("-m", mode, "-w", "-t", "60", "stop")
        if proc.returncode != 0:
            raise ServerError(f"pg_ctl stop: {proc.stderr.strip()}")

    def start_server(self) -> None:
        log = self.dir / "server.log"
        proc = self.pg_ctl("-l", str(log), "-w", "-t", "60", "start")
        if proc.returncode != 0:
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise ServerError(f"pg_ctl start: {proc.stderr.strip()} {tail}")

    def is_running(self) -> bool:
        return self.pg_ctl("status", timeout=30).returncode == 0

    def ensure_running(self) -> None:
        if not self.is_running():
            self.start_server()

    def postmaster_pid(self) -> int:
        return int((self.dir / "data" / "postmaster.pid").read_text().split()[0])

    def server_cpu(self) -> float:
        """CPU seconds of the server's processes that have ended (the backends of finished
        connections, reaped by the postmaster: its cutime + cstime), plus its own."""
        fields = pathlib.Path(f"/proc/{self.postmaster_pid()}/stat").read_text()
        fields = fields[fields.rindex(")") + 2:].split()
        ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))  # utime stime cutime cstime
        return ticks / os.sysconf("SC_CLK_TCK")

    def client_processes(self) -> list[int]:
        """The server's processes that serve a client connection (their title names the client:
        `[local]` or `ADDRESS(PORT)`), and those that ended and are not reaped yet (zombies)."""
        pid = self.postmaster_pid()
        try:
            children = pathlib.Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError as error:
            raise ServerError(f"reading the server's processes: {error}") from error
        found = []
        for child in children:
            try:
                stat = pathlib.Path(f"/proc/{child}/stat").read_text()
                title = pathlib.Path(f"/proc/{child}/cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue  # reaped meanwhile
            if stat[stat.rindex(")") + 2] == "Z" or re.search(r"\[local\]|\(\d+\)", title):
                found.append(int(child))
        return found

    def wait_for_clients_gone(self, timeout: float = 30) -> None:
        """Returns once every client connection has ended and its process has been reaped by
        the postmaster, so that server_cpu() counts it."""
        deadline = time.monotonic() + timeout
        while self.client_processes():
            if time.monotonic() > deadline:
                raise ServerError(f"connections still open after {timeout:.0f} s: processes "
                                  f"{self.client_processes()}")
            time.sleep(0.01)

    # Clients.

    def env(self, database: str = "postgres", user: str = "postgres") -> dict[str, str]:
        """A clean environment whose PG* variables name this server (as `Scripts/postgres env`
        prints them), for psql and for `accounts` given a database without a host."""
        env = clean_environment()
        env.update(PGHOST=str(self.socket), PGPORT=str(self.port), PGUSER=user,
                   PGDATABASE=database, PGTZ="UTC", PGCONNECT_TIMEOUT="10")
        return env

    def psql(self, sql: str, database: str = "postgres", user: str = "postgres",
             check: bool = True, timeout: float = 60):
        """Runs `sql` with the server's psql through the socket; returns its unaligned,
        tuples-only output (or, with check=False, the CompletedProcess)."""
        proc = subprocess.run([client_binary("psql"), "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1",
                               "-c", sql], capture_output=True, text=True,
                              env=self.env(database, user), stdin=subprocess.DEVNULL,
                              timeout=timeout)
        if not check:
            return proc
        if proc.returncode != 0:
            raise ServerError(f"psql on {database} failed on {sql[:200]!r}: {proc.stderr.strip()}")
        return proc.stdout

    def value(self, sql: str, database: str = "postgres") -> str:
        return self.psql(sql, database).strip()

    def kept_backends(self, database: str) -> set[int]:
        """The server processes of `database` that a pooler keeps for its clients to come (their
        last statement answered): none when the clients connect straight to the server."""
        return set()

    def json_rows(self, sql: str, database: str) -> list[dict]:
        """The rows of `sql` as dicts (through row_to_json)."""
        out = self.psql(f"SELECT row_to_json(q)::text FROM ({sql}) q", database)
        return [json.loads(line) for line in out.splitlines() if line]

    def settings(self) -> dict[str, str]:
        values = self.value(SETTINGS_SQL).split("|")
        if len(values) != len(SETTING_NAMES):
            raise ServerError(f"unexpected settings row: {values}")
        settings = dict(zip(SETTING_NAMES, values))
        settings["ssl"] = {"t": "on", "f": "off"}.get(settings["ssl"], settings["ssl"] or "off")
        return settings

    # Databases and roles.

    def create_database(self, prefix: str = "acc", owner: str = "postgres") -> str:
        name = f"{prefix}_{secrets.token_hex(5)}"
        self.psql(f'CREATE DATABASE "{name}" OWNER "{owner}"')
        return name

    def drop_database(self, name: str) -> None:
        self.psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', check=False)

    def create_role(self, prefix: str = "acct", password: str | None = None,
                    login: bool = True) -> str:
        name = f"{prefix}_{secrets.token_hex(4)}"
        options = " LOGIN" if login else ""
        if password is not None:
            escaped = password.replace("'", "''")
            options += f" PASSWORD '{escaped}'"
        self.psql(f'CREATE ROLE "{name}"{options}')
        return name

    def drop_role(self, name: str) -> None:
        self.psql(f'DROP ROLE IF EXISTS "{name}"', check=False)

    # URIs.

    def uri(self, database: str, user: str = "postgres", scheme: str = "postgresql",
            **params: str) -> str:
        """A URI through the Unix socket: `postgresql://USER@/DB?host=SOCKET&port=PORT` (the
        socket reaches a client in another network namespace too)."""
        query = {"host": str(self.socket), "port": str(self.port), **params}
        return (f"{scheme}://{user}@/{database}?"
                + "&".join(f"{k}={v}" for k, v in query.items()))

    def tcp_uri(self, database: str, user: str, password: str | None = None,
                **params: str) -> str:
        """A URI over TCP to 127.0.0.1:port, where the server asks for a SCRAM password."""
        userinfo = user if password is None else \
            f"{user}:{urllib.parse.quote(password, safe='')}"
        uri = f"postgresql://{userinfo}@127.0.0.1:{self.port}/{database}"
        if params:
            uri += "?" + "&".join(f"{k}={v}" for k, v in params.items())
        return uri


class Pooler:
    """PgBouncer in transaction pooling mode in front of `server` (`Scripts/pgbouncer`): a Unix
    socket in a folder of its own, SCRAM passwords checked. `uri()` names a database through it,
    with the passfile that holds every role's password; everything else (psql, the oracles'
    queries) still goes straight to the server."""

    def __init__(self, server: Server, roles: tuple[str, ...] = ()):
        """`roles`: the roles besides postgres that may connect through it."""
        self.server = server
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="accounts-pgbouncer-", dir="/tmp"))
        script = REPO / "Scripts" / "pgbouncer"
        proc = subprocess.run([str(script), "start", str(self.dir), str(server.dir), *roles],
                              capture_output=True, text=True, timeout=60)
        if proc.returncode != 0:
            subprocess.run([str(script), "stop", str(self.dir)], capture_output=True, timeout=60)
            raise ServerError(f"Scripts/pgbouncer start exited {proc.returncode}: "
                              f"{(proc.stderr or proc.stdout).strip()[-600:]}")
        self.port = int((self.dir / "port").read_text().strip())

    def uri(self, database: str, user: str = "postgres", **params: str) -> str:
        query = {"host": str(self.dir), "port": str(self.port),
                 "passfile": str(self.dir / "pgpass"), **params}
        return f"postgresql://{user}@/{database}?" + "&".join(f"{k}={v}" for k, v in query.items())

    def kept_backends(self, database: str) -> set[int]:
        """The process ids of the server connections to `database` that PgBouncer keeps, each
        released by its last client after its answer (SHOW SERVERS in the admin console, as the
        postgres role, which `stats_users` names). A connection whose client left mid-statement
        is closed by PgBouncer instead: it is not listed, and its server process ends once it
        has run what it was sent."""
        env = clean_environment()
        env.update(PGHOST=str(self.dir), PGPORT=str(self.port), PGUSER="postgres",
                   PGDATABASE="pgbouncer", PGPASSFILE=str(self.dir / "pgpass"),
                   PGCONNECT_TIMEOUT="10")
        proc = subprocess.run([client_binary("psql"), "-X", "-q", "--csv", "-c", "SHOW SERVERS"],
                              capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL,
                              timeout=60)
        if proc.returncode != 0:
            raise ServerError(f"SHOW SERVERS in PgBouncer's console failed: {proc.stderr.strip()}")
        return {int(row["remote_pid"]) for row in csv.DictReader(io.StringIO(proc.stdout))
                if row["database"] == database and row["state"] in ("idle", "used")}

    def remove(self) -> None:
        subprocess.run([str(REPO / "Scripts" / "pgbouncer"), "stop", str(self.dir)],
                       capture_output=True, timeout=60)
        shutil.rmtree(self.dir, ignore_errors=True)


class PooledServer:
    """`server` as the program sees it behind `pooler`: the same object for every oracle, with
    the URIs the program is given pointing at the pooler."""

    def __init__(self, server: Server, pooler: Pooler):
        self._server = server
        self._pooler = pooler

    def uri(self, database: str, user: str = "postgres", scheme: str = "postgresql",
            **params: str) -> str:
        return self._pooler.uri(database, user, **params)

    def kept_backends(self, database: str) -> set[int]:
        return self._pooler.kept_backends(database)

    def __getattr__(self, name):
        return getattr(self._server, name)
