"""A private PostgreSQL cluster for Scripts/bench: started by Scripts/postgres (durable: fsync
on, as SQLite's synchronous=FULL is), asked for the settings that matter, stopped after.

The cluster's folder is a temporary folder of its own, not inside the bench's: it belongs to the
postgres user (initdb refuses root), who must be able to reach it, and the bench's folder is
private to the user running the bench."""

from __future__ import annotations

import glob
import os
import pathlib
import re
import subprocess
import tempfile

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "postgres"


class ClusterError(Exception):
    pass


def client_binary(name: str) -> str:
    """The server's own client program (`psql`), from the bin folder Scripts/postgres starts
    the server from (the newest version). Debian's /usr/bin/psql is postgresql-common's
    pg_wrapper, a Perl script that picks a version and then runs this one: its own start-up
    (about 50 to 100 ms here) would flatter whatever is compared with it."""
    folders = glob.glob("/usr/lib/postgresql/*/bin")
    if not folders:
        raise ClusterError("no PostgreSQL server is installed")

    def version(folder: str) -> list[int]:
        return [int(part) for part in re.findall(r"\d+", folder.split("/")[-2])]

    return os.path.join(max(folders, key=version), name)


# One row, `|`-separated (psql -At): what README reports next to the figures.
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


class Cluster:
    """`Scripts/postgres start DIR --durable`, its environment, and `stop DIR`."""

    def __init__(self) -> None:
        self.folder = pathlib.Path(tempfile.mkdtemp(prefix="accounts-bench-pg-"))
        self.started = False
        self.env: dict[str, str] = {}

    def start(self) -> None:
        proc = subprocess.run([str(SCRIPT), "start", str(self.folder), "--durable"],
                              capture_output=True, text=True)
        self.started = True  # stop() also removes what a failed start left
        if proc.returncode != 0:
            raise ClusterError(f"Scripts/postgres start exited {proc.returncode}: "
                               f"{(proc.stderr or proc.stdout).strip()[-600:]}")
        port = (self.folder / "tcpport").read_text().strip()
        # The variables `Scripts/postgres env DIR` prints, without a shell: every client of the
        # bench (accounts, psql) connects over the Unix socket in DIR/socket.
        self.env = {"PGHOST": str(self.folder / "socket"), "PGPORT": port,
                    "PGUSER": "postgres", "PGDATABASE": "postgres"}

    def stop(self) -> None:
        if self.started:
            subprocess.run([str(SCRIPT), "stop", str(self.folder)], capture_output=True)
            self.started = False
        if self.folder.exists():
            subprocess.run(["rm", "-rf", str(self.folder)])

    def postmaster_pid(self) -> int:
        return int((self.folder / "data" / "postmaster.pid").read_text().split()[0])

    def server_cpu(self) -> float:
        """CPU seconds of the server's processes that have ended (the backends of finished
        connections, reaped by the postmaster: its cutime + cstime), plus its own."""
        fields = pathlib.Path(f"/proc/{self.postmaster_pid()}/stat").read_text()
        fields = fields[fields.rindex(")") + 2:].split()
        ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))  # utime stime cutime cstime
        return ticks / os.sysconf("SC_CLK_TCK")

    def psql(self, env: dict[str, str], sql: str, database: str | None = None) -> str:
        argv = [client_binary("psql"), "-X", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql]
        if database:
            argv += ["-d", database]
        proc = subprocess.run(argv, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            raise ClusterError(f"psql -c {sql[:60]!r} exited {proc.returncode}: "
                               f"{proc.stderr.strip()[:300]}")
        return proc.stdout.strip()

    def settings(self, env: dict[str, str]) -> dict[str, str]:
        values = self.psql(env, SETTINGS_SQL).split("|")
        if len(values) != len(SETTING_NAMES):
            raise ClusterError(f"unexpected settings row: {values}")
        settings = dict(zip(SETTING_NAMES, values))
        settings["ssl"] = {"t": "on", "f": "off"}.get(settings["ssl"], settings["ssl"] or "off")
        return settings
