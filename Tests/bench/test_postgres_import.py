"""`user import` into a PostgreSQL store beside the same import into SQLite: a csv file of
1,000,000 users (`--import-count`; written once per run by importing.py, as test_import.py
writes it), imported into a fresh database made from a template the program activated (in the
durable cluster of conftest's pg_server, as test_postgres.py's rows), vs into a fresh copy of a
SQLite store the program activated, alternated, `--import-runs` times each. Target: ≤ 3×. And
the PostgreSQL import's peak RSS (the reaper). Target: ≤ 128 MiB.

And its round trips, counted in one more import (not timed) under `strace -f -e
trace=sendto,recvfrom`: each time the program, having sent, reads again is one round trip (the
connection's start, the transaction's statements and each batch of accounts). Target: at most
one a batch (`user import` stores 1,000 accounts a statement) and 20 more."""

from __future__ import annotations

import re
import shutil
import sqlite3
import subprocess
import time

import pgserver

from . import importing
from .test_import import IMPORT_RATIO_TARGET, IMPORT_RSS_TARGET_MIB, IMPORTED
from .timing import PASSWORD_LINE, Reaper, Rows, fail, fresh_copy, ratio_line, say, verdict

TEMPLATE = "accounts_import_template"
FRESH = "accounts_import"
BATCH = 1_000
FIXED_ROUND_TRIPS = 20
PG_VARIABLES = ("PGHOST", "PGPORT", "PGUSER", "PGDATABASE")
SYSCALL = re.compile(r"^(?:\[pid\s+\d+\]\s+|\d+\s+)?(sendto|recvfrom)\(")


class PostgresImport(Rows):
    """`accounts user import FILE --format csv` into PostgreSQL vs into SQLite."""

    def __init__(self, bench, server: pgserver.Server, password_hash: str) -> None:
        self.count = bench.options.import_count
        self.runs = bench.options.import_runs
        super().__init__(bench, "postgres-import")
        self.server = server
        self.password_hash = password_hash
        self.csv = self.work / "users.csv"
        self.pristine = self.work / "pristine" / "accounts.sqlite3"
        self.fresh = self.work / "fresh"
        base = {k: v for k, v in bench.env.items() if not k.startswith("PG")}
        server_env = server.env(FRESH)
        self.env = {"sqlite": dict(base, ACCOUNTS_DATABASE=str(self.fresh / "accounts.sqlite3")),
                    "postgres": dict(base, **{k: server_env[k] for k in PG_VARIABLES},
                                     ACCOUNTS_DATABASE=f"postgresql:///{FRESH}")}
        self.reaper = Reaper(self.work, self.timer, self.env["sqlite"])
        self.round_trips = 0
        self.made = ""

    def import_argv(self) -> list[str]:
        return [self.binary, "user", "import", str(self.csv), "--format", "csv"]

    def fresh_database(self) -> None:
        """FRESH made anew from the activated template."""
        self.server.wait_for_clients_gone()
        try:
            self.server.psql(f"DROP DATABASE IF EXISTS {FRESH} WITH (FORCE)")
            self.server.psql(f"CREATE DATABASE {FRESH} TEMPLATE {TEMPLATE}")
        except pgserver.ServerError as error:
            fail(f"a fresh database: {error}")

    def prepare(self) -> None:
        began = time.perf_counter()
        size = importing.write_csv(str(self.csv), self.count, self.password_hash)
        self.made = (f"{self.count:,} users, {size / 2**20:.0f} MiB, written in "
                     f"{time.perf_counter() - began:.1f} s")
        say(f"csv of {self.made}")
        self.pristine.parent.mkdir(mode=0o700)
        activate = [self.binary, "activate", "--username", "alice", "--full-name",
                    "Alice Liddell", "--email", "alice@example.org", "--password-stdin"]
        self.timer.run("setup", activate, PASSWORD_LINE, record=False,
                       env=dict(self.env["sqlite"], ACCOUNTS_DATABASE=str(self.pristine)))
        try:
            self.server.psql(f"CREATE DATABASE {TEMPLATE}")
        except pgserver.ServerError as error:
            fail(f"the PostgreSQL cluster: {error}")
        self.timer.run("setup", activate, PASSWORD_LINE, record=False,
                       env=dict(self.env["postgres"],
                                ACCOUNTS_DATABASE=f"postgresql:///{TEMPLATE}"))
        self.reaper.floor()

    def stored(self, store: str) -> int:
        if store == "postgres":
            return int(self.server.value("SELECT count(*) FROM accounts.account", FRESH))
        con = sqlite3.connect(f"file:{self.fresh / 'accounts.sqlite3'}?mode=ro", uri=True)
        try:
            return con.execute("SELECT count(*) FROM account").fetchone()[0]
        finally:
            con.close()

    def measure(self) -> None:
        out = self.work / "import.out"
        for _ in range(self.runs):
            for store in ("postgres", "sqlite"):
                if store == "postgres":
                    self.fresh_database()
                else:
                    fresh_copy(self.pristine, self.fresh)
                self.reaper.run(f"pg-import-{store}", self.import_argv(), env=self.env[store],
                                output=str(out))
                said = out.read_text(errors="replace").strip()
                match = IMPORTED.match(said)
                stored = self.stored(store)
                if not match or stored != self.count + 1:
                    fail(f"user import into {store} said {said[:200]!r} and the store holds "
                         f"{stored:,} accounts, not {self.count + 1:,}")
        self.fresh_database()
        self.round_trips = self.count_round_trips()
        shutil.rmtree(self.fresh, ignore_errors=True)

    def count_round_trips(self) -> int:
        """The import's round trips: its reads from the server that follow a write to it."""
        if not shutil.which("strace"):
            return -1
        log = self.work / "strace.log"
        subprocess.run(["strace", "-f", "-qq", "-e", "trace=sendto,recvfrom", "-o", str(log),
                        *self.import_argv()], env=self.env["postgres"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        trips, sent = 0, False
        for line in log.read_text(errors="replace").splitlines():
            match = SYSCALL.match(line)
            if not match:
                continue
            if match.group(1) == "sendto":
                sent = True
            elif sent:
                trips, sent = trips + 1, False
        log.unlink()
        return trips

    def report(self, report) -> None:
        t, peak_mib = self.timer, self.reaper.peak_mib
        ratio, least = t.ratios("pg-import-postgres", "pg-import-sqlite")
        peak = peak_mib("pg-import-postgres")
        most = -(-self.count // BATCH) + FIXED_ROUND_TRIPS
        trips = (f"{self.round_trips:,}" if self.round_trips >= 0 else "not counted (no strace)")
        per = self.round_trips / self.count * 1000 if self.round_trips >= 0 else 0
        report.section(85, [
            f"Importing a csv file of {self.made} into PostgreSQL and into SQLite (a fresh "
            f"activated store each run):",
            t.row("accounts user import FILE --format csv, PostgreSQL", "pg-import-postgres"),
            t.row("accounts user import FILE --format csv, SQLite", "pg-import-sqlite"),
            ratio_line("PostgreSQL/SQLite", ratio, least, IMPORT_RATIO_TARGET),
            f"  a PostgreSQL account {t.median('pg-import-postgres') / self.count * 1e6:.1f} µs, "
            f"a SQLite one {t.median('pg-import-sqlite') / self.count * 1e6:.1f} µs (median)",
            f"  peak RSS of the PostgreSQL import: {peak:.1f} MiB (SQLite "
            f"{peak_mib('pg-import-sqlite'):.1f} MiB)   target ≤ {IMPORT_RSS_TARGET_MIB} MiB: "
            f"{verdict(peak <= IMPORT_RSS_TARGET_MIB)}",
            f"  round trips of the PostgreSQL import: {trips} ({per:.2f} a 1,000 accounts)   "
            f"target ≤ {most:,}: {verdict(0 <= self.round_trips <= most)}",
        ])
        n = f"{self.count:,}"
        report.markdown(85, [
            f"| `accounts user import FILE --format csv`, {n} users, into PostgreSQL "
            f"| {t.cells('pg-import-postgres')} | {ratio:.2f}× SQLite | ≤ {IMPORT_RATIO_TARGET}× |",
            f"| the same into SQLite | {t.cells('pg-import-sqlite')} | 1 | |",
            f"| peak RSS of `accounts user import` into PostgreSQL, {n} users | {peak:.1f} MiB "
            f"| | SQLite {peak_mib('pg-import-sqlite'):.1f} MiB | ≤ {IMPORT_RSS_TARGET_MIB} MiB |",
            f"| round trips of `accounts user import` into PostgreSQL, {n} users | {trips} | "
            f"| {per:.2f} a 1,000 accounts | ≤ {most:,} |",
        ])
        report.run_count(85, f"{self.runs} per import into each store ({n} users), "
                             f"alternated; one more, not timed, for the round trips")


def test_postgres_import_beside_sqlite(bench, pg_server, alice):
    PostgresImport(bench, pg_server, alice).run(bench.report)
