"""PostgreSQL beside SQLite, in a private durable cluster (conftest's pg_server: fsync and
synchronous_commit on, as SQLite's synchronous=FULL; clients on its Unix socket, trusted), with
one database whose schema `accounts` the program makes; the server's settings are printed with
the figures. Each store activated by the program with the same PBKDF2 cost:

  login   on PostgreSQL vs on SQLite, alternated. Target: ≤ 1.10×.
  status  on PostgreSQL vs `psql -Atc 'SELECT state FROM accounts.activation'` (same server and
          database; the server's own psql, /usr/lib/postgresql/V/bin/psql: Debian's /usr/bin/psql
          is a Perl wrapper that starts it, also measured, for scale). Target: ≤ 1.5×. And
          `status` on SQLite, for scale.
  100 logins from 4 concurrent clients (each its own account and session file, one process
          after the other), on each store in turn (rounds A B B A …, 4 each): throughput in
          logins/s over all the rounds together, PostgreSQL vs SQLite.
          Target: ≥ 0.9×, at the default cost (1,200,000 iterations: what users get, most of
          the time PBKDF2); and, for scale, the same at 1,000 iterations (the least the program
          takes), where the stores' own work is most of the time. (Measured and reported by
          concurrent_logins.py.)
  and what naming a PostgreSQL store adds at start-up (libpq and its libraries are opened only
          then): `status` on a PostgreSQL URI whose server is absent (libpq loaded, the
          connection refused at once) vs `status` on a missing SQLite file, and for `status` on
          each store the shared objects loaded (LD_DEBUG=libs) and the relocations
          (LD_DEBUG=statistics)."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import statistics

import pgserver

from .concurrent_logins import CHEAP_ITERATIONS, ConcurrentLogins
from .timing import PASSWORD_LINE, fail, load_average, ms, Rows, ratio_line

PG_DATABASE = "accounts_bench"
PG_LOGIN_TARGET = 1.10
PG_STATUS_TARGET = 1.5
PSQL_SELECT = "SELECT state FROM accounts.activation"
# What `Scripts/postgres env DIR` exports, taken from the server's environment: `accounts` and
# psql connect over the Unix socket in DIR/socket.
PG_VARIABLES = ("PGHOST", "PGPORT", "PGUSER", "PGDATABASE")


class PostgresRows(ConcurrentLogins, Rows):
    """`login` on each store at the same PBKDF2 cost, `status` on PostgreSQL vs psql, many
    logins from concurrent clients on each store, and what naming a PostgreSQL store adds at
    start-up (libpq and the libraries it needs are opened only then)."""

    def __init__(self, bench, server: pgserver.Server) -> None:
        self.options = bench.options
        super().__init__(bench, "postgres")
        self.server = server
        # Nothing of the caller's PostgreSQL settings: the bench's cluster only.
        self.base = {k: v for k, v in bench.env.items() if not k.startswith("PG")}
        self.base["ACCOUNTS_PBKDF2_ITERATIONS"] = str(self.options.iterations)
        server_env = server.env(PG_DATABASE)
        self.pg_env = {k: server_env[k] for k in PG_VARIABLES}
        sqlite_db = self.work / "sqlite" / "accounts.sqlite3"
        sqlite_db.parent.mkdir(mode=0o700)
        self.sqlite_db = str(sqlite_db)
        self.uri = f"postgresql:///{PG_DATABASE}"
        # The server's psql itself, and Debian's /usr/bin/psql (a Perl wrapper that runs it) for
        # scale.
        self.psql = [pgserver.client_binary("psql"), "-Atc", PSQL_SELECT]
        self.psql_wrapper = [shutil.which("psql") or "psql", "-Atc", PSQL_SELECT]
        self.env: dict[str, dict[str, str]] = {}
        self.settings: dict[str, str] = {}
        self.loader: dict[str, dict[str, object]] = {}
        self.server_cpu: dict[str, float] = {}
        self.load_before = ""

    # Environments: one per store, and one per concurrent client (its own session file)

    def state_home(self, name: str) -> str:
        folder = self.work / "state" / name
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        return str(folder)

    def store_env(self, store: str, iterations: int, client: str) -> dict[str, str]:
        env = dict(self.base, ACCOUNTS_PBKDF2_ITERATIONS=str(iterations),
                   XDG_STATE_HOME=self.state_home(f"{store}-{client}"))
        if store == "postgres":
            env.update(self.pg_env, ACCOUNTS_DATABASE=self.uri)
        else:
            env["ACCOUNTS_DATABASE"] = self.sqlite_db
        return env

    def login_argv(self, username: str) -> list[str]:
        return [self.binary, "login", "--username", username, "--password-stdin"]

    # Before the measurements

    def prepare(self) -> None:
        try:
            self.settings = self.server.settings()
            self.server.psql(f"CREATE DATABASE {PG_DATABASE}")
        except pgserver.ServerError as error:
            fail(f"the PostgreSQL cluster: {error}")
        iterations = self.options.iterations
        for store in ("postgres", "sqlite"):
            self.env[store] = env = self.store_env(store, iterations, "main")
            self.timer.run("setup", [self.binary, "activate", "--username", "alice",
                                     "--full-name", "Alice Liddell", "--email",
                                     "alice@example.org", "--password-stdin"],
                           PASSWORD_LINE, record=False, env=env)
            if store == "postgres":
                try:
                    self.server.value(PSQL_SELECT, PG_DATABASE)
                except pgserver.ServerError as error:
                    fail(f"`accounts activate` on {self.uri} wrote nothing there: is this a "
                         f"build without the PostgreSQL store? ({error})")
            # The accounts of the concurrent clients: one each, at the default cost and at the
            # least cost.
            for cost, count in (("default", iterations), ("cheap", CHEAP_ITERATIONS)):
                add_env = dict(env, ACCOUNTS_PBKDF2_ITERATIONS=str(count))
                for name in self.client_names(cost):
                    self.timer.run("setup", [self.binary, "user", "add", "--username", name,
                                             "--full-name", "Bench Client", "--email",
                                             f"{name}@example.org", "--password-stdin"],
                                   PASSWORD_LINE, record=False, env=add_env)
        self.env["psql"] = self.env["postgres"]
        # libpq loaded, then the connection fails at once (no socket in a missing folder).
        self.env["no-server"] = dict(
            self.env["postgres"],
            ACCOUNTS_DATABASE=f"{self.uri}?host={self.work / 'no-server'}")
        self.env["no-file"] = dict(self.env["sqlite"], ACCOUNTS_DATABASE=str(
            self.work / "none" / "missing.sqlite3"))
        self.check()
        self.loader = {store: self.loaded(store) for store in ("sqlite", "postgres")}

    def check(self) -> None:
        """Both stores hold the same hash cost; each command does what it should (and is warmed
        up) before it is timed."""
        con = sqlite3.connect(f"file:{self.sqlite_db}?mode=ro", uri=True)
        try:
            (sqlite_hash,) = con.execute("SELECT password_hash FROM account "
                                         "WHERE username_key = 'alice'").fetchone()
        finally:
            con.close()
        try:
            pg_hash = self.server.value("SELECT password_hash FROM accounts.account "
                                        "WHERE username_key = 'alice'", PG_DATABASE)
        except pgserver.ServerError as error:
            fail(f"reading alice's hash on PostgreSQL: {error}")
        costs = {hash_.split("$")[1] for hash_ in (sqlite_hash, pg_hash)}
        if costs != {str(self.options.iterations)}:
            fail(f"the stores hold hashes of {sorted(costs)} iterations, not "
                 f"{self.options.iterations} on both")
        for store in ("postgres", "sqlite"):
            out = self.timer.run("check", self.login_argv("alice"), PASSWORD_LINE,
                                 record=False, env=self.env[store])
            if b"Welcome back" not in out:
                fail(f"login on {store} did not say Welcome back: {out[:200]!r}")
        out = self.timer.run("check", [self.binary, "status"], record=False,
                             env=self.env["postgres"]).decode(errors="replace")
        if "Activated" not in out or self.uri not in out:
            fail(f"status on PostgreSQL said {out[:300]!r}, not Activated at {self.uri}")
        for psql in (self.psql, self.psql_wrapper):
            if self.timer.run("check", psql, record=False,
                              env=self.env["psql"]).strip() != b"Activated":
                fail(f"{psql[0]} did not read Activated")
        self.timer.run("check", [self.binary, "status"], record=False, env=self.env["no-server"],
                       expect=3)
        self.timer.run("check", [self.binary, "status"], record=False, env=self.env["no-file"])

    def loaded(self, store: str) -> dict[str, object]:
        """The shared objects `accounts status` loads and the relocations the dynamic loader
        makes, on `store` (LD_DEBUG=libs,statistics, written to a file of its own)."""
        folder = self.work / f"ld-{store}"
        folder.mkdir(mode=0o700)
        env = dict(self.env[store], LD_DEBUG="libs,statistics",
                   LD_DEBUG_OUTPUT=str(folder / "debug"))
        self.timer.run("check", [self.binary, "status"], record=False, env=env)
        text = "".join(p.read_text(errors="replace") for p in folder.iterdir())
        shutil.rmtree(folder)

        def number(pattern: str) -> int:
            found = re.search(pattern, text, re.MULTILINE)
            return int(found.group(1)) if found else -1

        objects = list(dict.fromkeys(re.findall(r"calling init: (\S+)", text)))
        return {
            "objects": objects,
            "startup_relocations": number(r"^\s*\d+:\s+number of relocations: (\d+)"),
            "final_relocations": number(r"final number of relocations: (\d+)"),
            "startup_cycles": number(r"total startup time in dynamic loader: (\d+)"),
        }

    # The measurements, alternated

    def measure(self) -> None:
        o = self.options
        self.load_before = load_average()
        login = self.login_argv("alice")
        server_before = self.server.server_cpu()
        for _ in range(o.postgres_runs):
            self.timer.run("pg-login", login, PASSWORD_LINE, env=self.env["postgres"])
            self.timer.run("pg-login-sqlite", login, PASSWORD_LINE, env=self.env["sqlite"])
        self.server.wait_for_clients_gone()  # the last login's backend counted
        self.server_cpu["login"] = (self.server.server_cpu() - server_before) / o.postgres_runs
        status = [self.binary, "status"]
        server_before = self.server.server_cpu()
        for _ in range(o.fast_runs):
            self.timer.run("pg-status", status, env=self.env["postgres"])
            self.timer.run("pg-psql", self.psql, env=self.env["psql"])
            self.timer.run("pg-status-sqlite", status, env=self.env["sqlite"])
            self.timer.run("pg-no-server", status, env=self.env["no-server"], expect=3)
            self.timer.run("pg-no-file", status, env=self.env["no-file"])
            self.timer.run("pg-psql-wrapper", self.psql_wrapper, env=self.env["psql"])
        self.server.wait_for_clients_gone()
        self.server_cpu["status+psql"] = (self.server.server_cpu() - server_before) / o.fast_runs
        self.bursts()

    # The figures

    def login_cpu(self) -> tuple[float, float]:
        """Median CPU of one login, PostgreSQL (the client's and the server's) and SQLite."""
        t = self.timer
        return (statistics.median(t.cpu["pg-login"]) + self.server_cpu["login"],
                statistics.median(t.cpu["pg-login-sqlite"]))

    def setting_line(self) -> str:
        s = self.settings
        return (f"PostgreSQL {s['version']}, private cluster (Scripts/postgres start DIR "
                f"--durable): fsync={s['fsync']}, synchronous_commit={s['synchronous_commit']}, "
                f"full_page_writes={s['full_page_writes']}, wal_sync_method="
                f"{s['wal_sync_method']}, shared_buffers={s['shared_buffers']}, "
                f"max_connections={s['max_connections']}; clients connect over the "
                f"{s['connection'].replace('unix', 'Unix')} (in DIR/socket), auth method "
                f"{s['auth_local']}, "
                f"SSL {s['ssl']}; one database `{PG_DATABASE}`, the store in its schema "
                f"`accounts`; the data folder on the same file system as the SQLite file")

    def report(self, report) -> None:
        t, o = self.timer, self.options
        it = f"{o.iterations:,}"
        lines = [self.setting_line() + ".",
                 f"  load average {self.load_before} before these rows, {load_average()} after",
                 "",
                 f"login on PostgreSQL vs SQLite, {it} PBKDF2 iterations on both "
                 f"(each store activated by the program):",
                 t.row("accounts login, PostgreSQL", "pg-login"),
                 t.row("accounts login, SQLite", "pg-login-sqlite")]
        ratio, least = t.ratios("pg-login", "pg-login-sqlite")
        pg_cpu, sqlite_cpu = self.login_cpu()
        lines += [
            ratio_line("PostgreSQL/SQLite", ratio, least, PG_LOGIN_TARGET, 3)
            + f"   (client CPU time {t.cpu_ratio('pg-login', 'pg-login-sqlite'):.3f}; the "
            f"server's CPU {ms(self.server_cpu['login'])} a login)",
            f"  CPU a login, the server's included: PostgreSQL {ms(pg_cpu)}, SQLite "
            f"{ms(sqlite_cpu)}: {pg_cpu / sqlite_cpu:.3f}×",
            f"  PostgreSQL adds {ms(t.median('pg-login') - t.median('pg-login-sqlite'))} "
            f"(median), {ms(t.min('pg-login') - t.min('pg-login-sqlite'))} (min)",
            "",
            "Reading the state on PostgreSQL:",
            t.row("accounts status, PostgreSQL", "pg-status"),
            t.row(f"{self.psql[0]} -Atc '…'", "pg-psql"),
        ]
        ratio, least = t.ratios("pg-status", "pg-psql")
        lines += [
            ratio_line("status/psql", ratio, least, PG_STATUS_TARGET)
            + f"   (the server's CPU for both: {ms(self.server_cpu['status+psql'])} a pair)",
            t.row(f"{self.psql_wrapper[0]} -Atc '…' (Debian's wrapper)", "pg-psql-wrapper"),
            t.row("accounts status, SQLite (for scale)", "pg-status-sqlite"),
            "",
            "What a PostgreSQL store adds at start-up (libpq opened only when one is named):",
            t.row("accounts status, no SQLite file (start-up only)", "pg-no-file"),
            t.row("accounts status, PostgreSQL server absent", "pg-no-server"),
            f"  loading libpq and its libraries, and a connection refused at once: "
            f"{ms(t.median('pg-no-server') - t.median('pg-no-file'))} (median difference), "
            f"{ms(t.min('pg-no-server') - t.min('pg-no-file'))} (min)",
        ]
        for store in ("sqlite", "postgres"):
            info = self.loader[store]
            lines.append(f"  status on {store}: {len(info['objects'])} shared objects loaded "
                         f"(LD_DEBUG=libs, `calling init`), {info['startup_relocations']:,} "
                         f"relocations before main and {info['final_relocations']:,} in all "
                         f"(LD_DEBUG=statistics; {info['startup_cycles']:,} cycles in the "
                         f"loader before main)")
        extra = [obj for obj in self.loader["postgres"]["objects"]
                 if obj not in self.loader["sqlite"]["objects"]]
        lines += [f"  only with PostgreSQL ({len(extra)}): "
                  + ", ".join(os.path.basename(obj) for obj in extra), ""]
        lines += self.concurrent_lines()
        report.section(80, lines)
        report.markdown(80, self.markdown_rows())
        report.note(80, self.setting_line() + ".")
        report.run_count(80, f"{o.postgres_runs} per PostgreSQL/SQLite login command, "
                             f"{o.fast_runs} per fast command beside PostgreSQL and "
                             f"{o.concurrent_rounds} rounds per concurrent-login row "
                             f"(stores A B B A …)")

    def markdown_rows(self) -> list[str]:
        t, o = self.timer, self.options
        it = f"{o.iterations:,}"

        sq, pg = self.loader["sqlite"], self.loader["postgres"]
        return [
            f"| `accounts login` on PostgreSQL ({it} PBKDF2 iterations) | {t.cells('pg-login')} "
            f"| {t.ratios('pg-login', 'pg-login-sqlite')[0]:.3f}× SQLite (CPU, the "
            f"server's included: {self.login_cpu()[0] / self.login_cpu()[1]:.3f}×) "
            f"| ≤ {PG_LOGIN_TARGET:.2f}× |",
            f"| `accounts login` on SQLite (same cost) | {t.cells('pg-login-sqlite')} | 1 | |",
            f"| `accounts status` on PostgreSQL | {t.cells('pg-status')} "
            f"| {t.ratios('pg-status', 'pg-psql')[0]:.2f}× psql | ≤ {PG_STATUS_TARGET}× |",
            f"| `psql -Atc '{PSQL_SELECT}'` (same server and database; "
            f"{self.psql[0]}) | {t.cells('pg-psql')} | 1 | |",
            f"| the same through Debian's {self.psql_wrapper[0]} (postgresql-common's Perl "
            f"pg_wrapper, which runs the one above) | {t.cells('pg-psql-wrapper')} "
            f"| {t.ratios('pg-psql-wrapper', 'pg-psql')[0]:.2f}× psql | |",
            f"| `accounts status` on SQLite (for scale) | {t.cells('pg-status-sqlite')} "
            f"| {t.ratios('pg-status-sqlite', 'pg-psql')[0]:.2f}× psql | |",
            f"| `accounts status`, PostgreSQL server absent (start-up with libpq, "
            f"{len(pg['objects'])} shared objects, {pg['final_relocations']:,} relocations) "
            f"| {t.cells('pg-no-server')} "
            f"| {t.ratios('pg-no-server', 'pg-no-file')[0]:.2f}× no file | |",
            f"| `accounts status`, no SQLite file (start-up, {len(sq['objects'])} shared "
            f"objects, {sq['final_relocations']:,} relocations) | {t.cells('pg-no-file')} "
            f"| 1 | |",
        ] + self.concurrent_markdown()


def test_postgres_beside_sqlite(bench, pg_server):
    PostgresRows(bench, pg_server).run(bench.report)
