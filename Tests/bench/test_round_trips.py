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

Then the same login with a TOTP code, alice's second factor turned on first (the server keeps
the secret and checks the code: migration v17), as the owner and as the host role.

Targets: at most 2 transactions and 8 round trips for a login (a wrong password counts the
same way). A login with a code: at most 4 transactions and 8 round trips. The code itself goes
with `login_success` and costs no round trip; the two others the flow adds are reads of its
own, as before the server checked codes (the name's lock before the code is asked, the
recovery codes left after the login). A row that misses says so."""

from __future__ import annotations

import re
import shutil
import subprocess

import pyotp

from fleet import role_sql

from .timing import PASSWORD_LINE, Rows, fail, say, verdict

DATABASE = "accounts_round_trips"
TRANSACTIONS_TARGET = 2
ROUND_TRIPS_TARGET = 8
# A login with a code: its two reads (the lock before the code, the codes left after).
CODE_TRANSACTIONS_TARGET = 4
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
        self.key = self.enable_second_factor()
        self.server.psql(f"ALTER DATABASE {DATABASE} SET log_statement = 'all'")
        self.server.psql(f"ALTER SYSTEM SET log_line_prefix = '{PREFIX}'")
        self.server.psql("SELECT pg_reload_conf()")

    def enable_second_factor(self) -> str:
        """bob (added for it) with a second factor, through pipes: its Base32 key."""
        self.timer.run("setup", [self.binary, "user", "add", "--username", "bob", "--full-name",
                                 "Bob Builder", "--email", "bob@example.org",
                                 "--password-stdin"], PASSWORD_LINE, record=False, env=self.env)
        proc = subprocess.Popen([self.binary, "2fa", "enable", "--username", "bob"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=self.env)
        proc.stdin.write(PASSWORD_LINE)
        proc.stdin.flush()
        key = None
        for raw in proc.stdout:
            line = raw.decode().rstrip("\n")
            if line.startswith("Key: "):
                key = line[len("Key: "):]
                proc.stdin.write(pyotp.TOTP(key).now().encode() + b"\n")
                proc.stdin.close()
        proc.wait(timeout=120)
        if proc.returncode != 0 or key is None:
            fail(f"2fa enable exited {proc.returncode}: {proc.stderr.read()[-300:]!r}")
        return key

    def code_line(self) -> bytes:
        """The password and a fresh code of bob's (the last accepted step moved back first)."""
        self.server.psql("UPDATE accounts.second_factor SET last_step = 0", DATABASE)
        return PASSWORD_LINE + pyotp.TOTP(self.key).now().encode() + b"\n"

    def count(self, label: str, password: bytes, expect: int, role: str | None = None,
              username: str = "alice") -> None:
        """One login under strace (as `role`, else the owner); its statements read back from
        the server's log."""
        start = self.log.stat().st_size
        trace = self.work / f"{label}.strace"
        argv = ["strace", "-f", "-qq", "-e", "trace=sendto", "-o", str(trace), self.binary,
                "login", "--username", username, "--password-stdin"]
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
            self.count("right password and code", self.code_line(), 0, username="bob")
            self.count("right password and code, host role", self.code_line(), 0, HOST_ROLE,
                       username="bob")
        finally:
            self.server.psql("ALTER SYSTEM RESET log_line_prefix")
            self.server.psql("SELECT pg_reload_conf()")
            self.server.psql(f"ALTER DATABASE {DATABASE} RESET log_statement")

    def report(self, report) -> None:
        lines = ["PostgreSQL: what one `accounts login` costs the server (statement log, "
                 "virtual transaction ids, the client's sends)"]
        rows = []
        for label, (statements, transactions, trips, seen) in self.counts.items():
            most = CODE_TRANSACTIONS_TARGET if "code" in label else TRANSACTIONS_TARGET
            met = transactions <= most and trips <= ROUND_TRIPS_TARGET
            lines.append(f"  login, {label}: {statements} statements, {transactions} "
                         f"transactions, {trips} round trips   targets ≤ {most} "
                         f"transactions, ≤ {ROUND_TRIPS_TARGET} round trips: {verdict(met)}")
            lines += [f"    {s}" for s in seen]
            rows.append(f"| PostgreSQL `login`, {label}: transactions / round trips "
                        f"(counted) | {transactions} / {trips} | | | ≤ {most} / "
                        f"≤ {ROUND_TRIPS_TARGET}: {verdict(met)} |")
        say("\n".join(lines))
        report.section(70, lines)
        report.markdown(70, rows)


def test_login_round_trips(bench, pg_server):
    RoundTrips(bench, pg_server).run(bench.report)
