"""Clients of one PostgreSQL store as hosts of their own: each process in its own UTS
namespace and host name (`unshare --uts`, `hostname host-N`) and its own network namespace
(`unshare --net`: only a loopback that is down; the server's Unix socket still reaches it), its
own HOME and XDG_STATE_HOME (its session file); all share one key file (ACCOUNTS_KEY_FILE,
0600). Where `unshare --net` or `--uts` fails it falls back (UTS alone, then no namespace) and
says so (`Hosts.mode`). No client sees a PG* variable of this process's environment.

A database set up as a fleet's (`Hosts.fleet`, after `accounts store roles --apply`) is then
reached with a fleet's roles, as a fleet runs: the commands a host may run as FLEET_HOST, every
other command as FLEET_ADMIN (the owner only made the schema and gave the rights).
"""

from __future__ import annotations

import os
import pathlib
import re
import shlex
import subprocess
import time
from dataclasses import dataclass

import runner
from fleet import host_may_run, role_sql
from pgserver import Server, client_binary
from runner import Gate, Result, Sandbox, Started


PG_ITERATIONS = 1000  # as the e2e tests: new hashes are cheap where the cost does not matter
# A fleet's roles (`accounts store roles`), made on each cluster the hosts use; Scripts/pgbouncer
# is told their names too (its users file), so they pass through the pooler.
FLEET_ADMIN, FLEET_HOST = "fleet_admin", "fleet_host"
# A URI as the tests' servers make it for the owner: (scheme, database, the rest).
OWNER_URI = re.compile(r"^(postgres(?:ql)?://)postgres@/([^?]+)(.*)$")

@dataclass
class Host:
    """One client machine: its host name, its HOME (its own session file in
    HOME/state/accounts/session); the key file is shared."""
    name: str
    home: pathlib.Path

    @property
    def state(self) -> pathlib.Path:
        return self.home / "state"


class Hosts:
    """Starts clients as different hosts: each process in its own UTS namespace with its own
    host name and in its own network namespace (only a loopback that is down: the server's
    Unix socket still reaches it), with its own HOME and XDG_STATE_HOME. Falls back to a UTS
    namespace alone, then to none (the host name shared), saying so, where `unshare` fails."""

    def __init__(self, box: Sandbox, server: Server) -> None:
        self.box = box
        self.server = server
        folder = box.root / "pg-key"
        folder.mkdir(mode=0o700)
        self.key_file = folder / "postgresql.key"  # ACCOUNTS_KEY_FILE of every host
        self.made = 0
        self.fleet: set[str] = set()  # databases reached with the fleet's roles
        server.psql(" ".join(role_sql(role) for role in (FLEET_ADMIN, FLEET_HOST)))
        self.prefix: list[str] = []
        self.uts = False
        self.mode = "no namespaces: every client has this machine's host name (unshare failed)"
        probe = (f'hostname "$1" && [ "$(hostname)" = "$1" ] && '
                 f'{shlex.quote(client_binary("psql"))} -X -At -h '
                 f'{shlex.quote(str(server.socket))} -p {server.port} -U postgres -d postgres '
                 f"-c 'SELECT 1'")
        tried: list[str] = []
        for prefix, mode in ((["unshare", "--uts", "--net", "--"],
                              "each client its own UTS namespace (host name host-N) and network "
                              "namespace (loopback down; the server's Unix socket reaches it)"),
                             (["unshare", "--uts", "--"],
                              "each client its own UTS namespace (host name host-N); separate "
                              "network namespaces failed")):
            r = subprocess.run([*prefix, "/bin/sh", "-c", probe, "sh", "host-probe"],
                               capture_output=True, text=True, timeout=30,
                               env={**server.env(), "PGHOST": ""})
            if r.returncode == 0 and r.stdout.strip() == "1":
                self.prefix, self.uts, self.mode = prefix, True, mode
                break
            tried.append(f"{' '.join(prefix[:-1])}: exit {r.returncode} {r.stderr.strip()[:120]!r}")
        if tried and not self.uts:
            self.mode += f" ({'; '.join(tried)})"
        elif tried:
            self.mode += f" ({tried[0]})"

    def join_fleet(self, uri: str) -> None:
        """From now on the database `uri` names is reached with the fleet's roles (its owner
        has given them their rights)."""
        self.fleet.add(OWNER_URI.match(uri).group(2))

    def role_uri(self, uri: str, args: list[str]) -> str:
        """`uri` with the role the command `args` runs as: unchanged (the owner) unless its
        database is a fleet's; then FLEET_HOST for what a host may run, FLEET_ADMIN for the
        rest."""
        found = OWNER_URI.match(uri)
        if found is None or found.group(2) not in self.fleet:
            return uri
        role = FLEET_HOST if host_may_run(args) else FLEET_ADMIN
        return f"{found.group(1)}{role}@/{found.group(2)}{found.group(3)}"

    def host_uri(self, uri: str) -> str:
        """`uri` as a host's login is given it (what its session file names)."""
        return self.role_uri(uri, ["login"])

    def host(self, name: str) -> Host:
        self.made += 1
        home = self.box.root / f"pg-home-{self.made}-{name}"
        home.mkdir(mode=0o700)
        return Host(name, home)

    def env(self, host: Host, iterations: int | None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ACCOUNTS_", "PG"))}
        env.update(HOME=str(host.home), XDG_STATE_HOME=str(host.state), TZ="UTC",
                   XDG_DATA_HOME=str(host.home / "xdg"), XDG_CONFIG_HOME=str(host.home / "config"),
                   ACCOUNTS_KEY_FILE=str(self.key_file))
        if iterations is not None:
            env["ACCOUNTS_PBKDF2_ITERATIONS"] = str(iterations)
        return env

    def argv(self, host: Host, argv: list[str], gate: Gate | None) -> list[str]:
        script = ('hostname "$1" || exit 97; ' if self.uts else "") + "shift; "
        if gate is not None:
            gate.waiting += 1
            script += f"read -r _ <&{gate.read_end}; "
        script += 'exec "$0" "$@"'
        # bash, not sh: the gate's pipe may have any descriptor number (dash takes 0 to 9).
        return [*self.prefix, "/bin/bash", "-c", script, argv[0], host.name, *argv[1:]]

    def run(self, host: Host, args: list[str], uri: str, stdin: str | None = None,
            iterations: int | None = PG_ITERATIONS, timeout: float = 60) -> Result:
        return HostProc(self, host, args, uri, iterations, stdin=stdin).wait(timeout)


class HostProc(Started):
    """A client started now as `host`, its output going to files."""

    def __init__(self, hosts: Hosts, host: Host, args: list[str], uri: str,
                 iterations: int | None = PG_ITERATIONS, stdin: str | None = None,
                 stdin_pipe: bool = False, gate: Gate | None = None,
                 stdout_held: bool = False) -> None:
        """`stdout_held`: its standard output is a full pipe nobody reads, so that its first
        write there blocks (`blocked_writing_stdout`): a point a test can kill it at."""
        base = hosts.box.scratch("pg-proc")
        self.box = hosts.box
        self.host = host
        self.out_path = base.with_suffix(".out")
        self.err_path = base.with_suffix(".err")
        uri = hosts.role_uri(uri, args)
        argv = hosts.argv(host, [runner.BIN, *args, "--database", uri], gate)
        pipe = stdin_pipe or stdin is not None
        self.held = full_pipe() if stdout_held else None
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.start = time.monotonic()
            # In the host's HOME: a binary that took the URI for a relative path writes there.
            self.proc = subprocess.Popen(
                argv, env=hosts.env(host, iterations), cwd=host.home,
                stdin=subprocess.PIPE if pipe else subprocess.DEVNULL,
                stdout=self.held[1] if self.held else out, stderr=err,
                pass_fds=(gate.read_end,) if gate else ())
        if self.held:
            os.close(self.held[1])
        self.end: float | None = None
        if stdin is not None:
            self.feed(stdin)
            self.close_stdin()

    def wait(self, timeout: float = 60) -> Result:
        try:
            return super().wait(timeout)
        finally:
            if self.held:
                os.close(self.held[0])
                self.held = None


def full_pipe() -> tuple[int, int]:
    """A pipe whose buffer is full: (read end, write end). The next write to it blocks until
    someone reads, and nobody does."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    chunk = b"x" * 65536
    try:
        while True:
            os.write(write_end, chunk)
    except BlockingIOError:
        pass
    # A write smaller than what is left could still fit: fill the last bytes one at a time.
    try:
        while True:
            os.write(write_end, b"x")
    except BlockingIOError:
        pass
    os.set_blocking(write_end, True)
    return read_end, write_end
