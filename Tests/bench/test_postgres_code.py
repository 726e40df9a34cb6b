"""A login with a TOTP code, PostgreSQL beside SQLite, in the bench's private durable cluster
(conftest's pg_server): on PostgreSQL the server checks the code (migration v17: it keeps the
secret, encrypted, and the host holds no key file); on SQLite the program checks it against the
secret sealed under the file's key file. Each store activated by the program at the same PBKDF2
cost, alice's second factor turned on by `2fa enable` with a pyotp code.

  login with a code   `accounts login --username alice --password-stdin`, the password and a
          code of this step, on PostgreSQL vs on SQLite, alternated; before each, untimed, the
          last accepted step is moved back so that the code is fresh. Target: ≤ 1.10×."""

from __future__ import annotations

import sqlite3
import subprocess

import pgserver
import pyotp

from .timing import PASSWORD_LINE, Rows, fail, ratio_line

DATABASE = "accounts_bench_code"
TARGET = 1.10


class CodeLogins(Rows):
    """`login` with a TOTP code on each store at the same PBKDF2 cost."""

    def __init__(self, bench, server: pgserver.Server) -> None:
        super().__init__(bench, "postgres-code")
        self.options = bench.options
        self.server = server
        base = {k: v for k, v in bench.env.items() if not k.startswith("PG")}
        base["ACCOUNTS_PBKDF2_ITERATIONS"] = str(self.options.iterations)
        server_env = server.env(DATABASE)
        sqlite_db = self.work / "sqlite" / "accounts.sqlite3"
        sqlite_db.parent.mkdir(mode=0o700)
        self.sqlite_db = str(sqlite_db)
        self.env = {}
        for store in ("postgres", "sqlite"):
            state = self.work / "state" / store
            state.mkdir(mode=0o700, parents=True)
            env = dict(base, XDG_STATE_HOME=str(state), XDG_CONFIG_HOME=str(state))
            if store == "postgres":
                env.update({k: server_env[k] for k in ("PGHOST", "PGPORT", "PGUSER",
                                                        "PGDATABASE")},
                           ACCOUNTS_DATABASE=f"postgresql:///{DATABASE}")
            else:
                env["ACCOUNTS_DATABASE"] = self.sqlite_db
            self.env[store] = env
        self.keys: dict[str, str] = {}

    def enable(self, store: str) -> str:
        """alice's second factor on `store`, through pipes: its Base32 key."""
        proc = subprocess.Popen([self.binary, "2fa", "enable", "--username", "alice"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=self.env[store])
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
            fail(f"2fa enable on {store} exited {proc.returncode}: "
                 f"{proc.stderr.read()[-300:]!r}")
        return key

    def prepare(self) -> None:
        try:
            self.server.psql(f"CREATE DATABASE {DATABASE}")
        except pgserver.ServerError as error:
            fail(f"the PostgreSQL cluster: {error}")
        for store in ("postgres", "sqlite"):
            self.timer.run("setup", [self.binary, "activate", "--username", "alice",
                                     "--full-name", "Alice Liddell", "--email",
                                     "alice@example.org", "--password-stdin"],
                           PASSWORD_LINE, record=False, env=self.env[store])
            self.keys[store] = self.enable(store)
        for store in ("postgres", "sqlite"):
            self.login(store, record=False)

    def fresh(self, store: str) -> None:
        """The last accepted step moved back: a code of this step is fresh again."""
        if store == "postgres":
            self.server.psql("UPDATE accounts.second_factor SET last_step = 0", DATABASE)
            return
        con = sqlite3.connect(self.sqlite_db)
        try:
            with con:
                con.execute("UPDATE second_factor SET last_step = 0")
        finally:
            con.close()

    def login(self, store: str, record: bool = True) -> None:
        self.fresh(store)
        code = pyotp.TOTP(self.keys[store]).now().encode()
        out = self.timer.run(
            f"code-login-{store}" if record else "check",
            [self.binary, "login", "--username", "alice", "--password-stdin"],
            PASSWORD_LINE + code + b"\n", record=record, env=self.env[store])
        if b"Welcome back" not in out:
            fail(f"login with a code on {store} did not say Welcome back: {out[:200]!r}")

    def measure(self) -> None:
        for _ in range(self.options.postgres_runs):
            self.login("postgres")
            self.login("sqlite")

    def report(self, report) -> None:
        t, it = self.timer, f"{self.options.iterations:,}"
        ratio, least = t.ratios("code-login-postgres", "code-login-sqlite")
        lines = [f"login with a TOTP code on PostgreSQL (the server checks it) vs SQLite (the "
                 f"key file's), {it} PBKDF2 iterations on both:",
                 t.row("accounts login with a code, PostgreSQL", "code-login-postgres"),
                 t.row("accounts login with a code, SQLite", "code-login-sqlite"),
                 ratio_line("PostgreSQL/SQLite", ratio, least, TARGET, 3)]
        report.section(82, lines)
        report.markdown(82, [
            f"| `accounts login` with a TOTP code on PostgreSQL, checked by the server ({it} "
            f"PBKDF2 iterations) | {t.cells('code-login-postgres')} | {ratio:.3f}× SQLite "
            f"| ≤ {TARGET:.2f}× |",
            f"| `accounts login` with a TOTP code on SQLite (same cost) "
            f"| {t.cells('code-login-sqlite')} | 1 | |"])
        report.run_count(82, f"{self.options.postgres_runs} per login-with-a-code command "
                             f"(PostgreSQL and SQLite alternated)")


def test_code_login_postgres_beside_sqlite(bench, pg_server):
    CodeLogins(bench, pg_server).run(bench.report)
