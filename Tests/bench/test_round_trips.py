"""What a login costs a PostgreSQL server, counted rather than timed: `accounts login` (with
its session, the default) of a right and of a wrong password on a store the program activated,
in the bench's private cluster. Counted by the server and by the client, not guessed:

  statements    the server's statement log (`log_statement = all` for the bench's database
                alone), its lines for the login's connection;
  transactions  the distinct virtual transaction ids (`%v` in `log_line_prefix`) of those lines:
                a statement outside BEGIN … COMMIT is a transaction of its own;
  round trips   the client's sends on the server's socket (strace's `sendto`), less the
                connection's start-up packet and its Terminate message: each round trip is one
                send (a simple query, or Parse/Bind/Execute/Sync together).

Each is counted twice: as the database's owner (one host alone), and as a fleet's host role
(`accounts store roles`), whose login steps are the owner's wrappers that clamp what a host
sends: they must cost no more.

Targets: at most 2 transactions and 8 round trips for a login (a wrong password counts the
same way). A row that misses says so."""

from __future__ import annotations

import re
import shutil
import subprocess

from fleet import role_sql

from .timing import PASSWORD_LINE, Rows, fail, say, verdict

DATABASE = "accounts_round_trips"
TRANSACTIONS_TARGET = 2
ROUND_TRIPS_TARGET = 8
ADMIN_ROLE, HOST_ROLE = "bench_admin", "bench_host"
PREFIX = "%m [%p] vxid=%v "
LINE = re.compile(r"^\S+ \S+ \S+ \[(\d+)\] vxid=(\S+) LOG:  (statement|execute [^:]*): (.*)$")


class RoundTrips(Rows):
    """A login's statements, transactions and round trips on PostgreSQL, right and wrong."""

    def __init__(self, bench, server) -> None:
        super().__init__(bench, "round-trips")
        self.server = server
        self.log = server.dir / "server.log"
        self.env = dict(bench.env, **{k: v for k, v in server.env(DATABASE).items()
                                      if k.startswith("PG")})
        self.env.update(ACCOUNTS_DATABASE=f"postgresql:///{DATABASE}",
                        XDG_STATE_HOME=str(self.work / "state"))
        self.counts: dict[str, tuple[int, int, int, list[str]]] = {}

    def prepare(self) -> None:
        if not shutil.which("strace"):
            fail("strace is not installed (Scripts/setup --test installs it)")
        self.server.psql(f"CREATE DATABASE {DATABASE}")
        self.timer.run("setup", [self.binary, "activate", "--username", "alice", "--full-name",
                                 "Alice Liddell", "--email", "alice@example.org",
                                 "--password-stdin"], PASSWORD_LINE, record=False, env=self.env)
        self.server.psql(" ".join(role_sql(role) for role in (ADMIN_ROLE, HOST_ROLE)))
        self.timer.run("setup", [self.binary, "store", "roles", "--admin", ADMIN_ROLE, "--host",
                                 HOST_ROLE, "--apply"], b"", record=False, env=self.env)
        self.server.psql(f"ALTER DATABASE {DATABASE} SET log_statement = 'all'")
        self.server.psql(f"ALTER SYSTEM SET log_line_prefix = '{PREFIX}'")
        self.server.psql("SELECT pg_reload_conf()")

    def count(self, label: str, password: bytes, expect: int, role: str | None = None) -> None:
        """One login under strace (as `role`, else the owner); its statements read back from
        the server's log."""
        start = self.log.stat().st_size
        trace = self.work / f"{label}.strace"
        argv = ["strace", "-f", "-qq", "-e", "trace=sendto", "-o", str(trace), self.binary,
                "login", "--username", "alice", "--password-stdin"]
        env = dict(self.env, PGUSER=role) if role else self.env
        proc = subprocess.run(argv, input=password, env=env, capture_output=True, timeout=120)
        if proc.returncode != expect:
            fail(f"login ({label}) exited {proc.returncode}, not {expect}: "
                 f"{proc.stderr[-300:]!r}")
        # The backend logs a statement before it answers it: every line is there by now.
        with self.log.open("rb") as f:
            f.seek(start)
            text = f.read().decode(errors="replace")
        found = [m for m in map(LINE.match, text.splitlines()) if m]
        pids = {m.group(1) for m in found}
        if len(pids) != 1:
            fail(f"login ({label}): statements from {len(pids)} connections in the log")
        statements = [m.group(4)[:70] for m in found]
        transactions = len({m.group(2) for m in found})
        sends = sum(1 for line in trace.read_text().splitlines() if " sendto(" in line
                    or line.split(" ", 1)[-1].startswith("sendto("))
        self.counts[label] = (len(statements), transactions, sends - 2, statements)

    def measure(self) -> None:
        try:
            self.count("right password", PASSWORD_LINE, 0)
            self.count("wrong password", b"not the password\n", 1)
            self.count("right password, host role", PASSWORD_LINE, 0, HOST_ROLE)
            self.count("wrong password, host role", b"not the password\n", 1, HOST_ROLE)
        finally:
            self.server.psql("ALTER SYSTEM RESET log_line_prefix")
            self.server.psql("SELECT pg_reload_conf()")
            self.server.psql(f"ALTER DATABASE {DATABASE} RESET log_statement")

    def report(self, report) -> None:
        lines = ["PostgreSQL: what one `accounts login` costs the server (statement log, "
                 "virtual transaction ids, the client's sends)"]
        rows = []
        for label, (statements, transactions, trips, seen) in self.counts.items():
            met = transactions <= TRANSACTIONS_TARGET and trips <= ROUND_TRIPS_TARGET
            lines.append(f"  login, {label}: {statements} statements, {transactions} "
                         f"transactions, {trips} round trips   targets ≤ {TRANSACTIONS_TARGET} "
                         f"transactions, ≤ {ROUND_TRIPS_TARGET} round trips: {verdict(met)}")
            lines += [f"    {s}" for s in seen]
            rows.append(f"| PostgreSQL `login`, {label}: transactions / round trips "
                        f"(counted) | {transactions} / {trips} | | | ≤ {TRANSACTIONS_TARGET} / "
                        f"≤ {ROUND_TRIPS_TARGET}: {verdict(met)} |")
        say("\n".join(lines))
        report.section(70, lines)
        report.markdown(70, rows)


def test_login_round_trips(bench, pg_server):
    RoundTrips(bench, pg_server).run(bench.report)
