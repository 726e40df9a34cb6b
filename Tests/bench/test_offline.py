"""Logins while the server is away (`accounts store cache`), in the bench's private durable
cluster (conftest's pg_server), at the PBKDF2 cost of the bench (`--iterations`):

  login from the cache (the store's URI names a socket folder with nothing listening: the
          connection refused at once) vs the same login online, on the same host with its cache
          on (the entry kept, so one PBKDF2 each), alternated. Target: ≤ 1.05×.
  the first login after the server vanished: the URI names a socket that takes the connection
          and never answers (a server gone quiet, or a pooler holding it), the cache's "server
          away" mark cleared before each run, so each waits out the connect timeout (3 s) and
          then answers from the cache. Target: ≤ the connect timeout + 0.5 s."""

from __future__ import annotations

import socket
import sqlite3

import pgserver

from .timing import PASSWORD_LINE, Rows, fail, ms, ratio_line, verdict

OFFLINE_DATABASE = "accounts_offline"
OFFLINE_TARGET = 1.05
CONNECT_TIMEOUT_S = 3.0
VANISHED_TARGET_S = CONNECT_TIMEOUT_S + 0.5
PG_VARIABLES = ("PGHOST", "PGPORT", "PGUSER", "PGDATABASE")


class OfflineRows(Rows):
    def __init__(self, bench, server: pgserver.Server) -> None:
        super().__init__(bench, "offline")
        self.options = bench.options
        self.server = server
        base = {k: v for k, v in bench.env.items() if not k.startswith("PG")}
        server_env = server.env(OFFLINE_DATABASE)
        base.update({k: server_env[k] for k in PG_VARIABLES})
        state = self.work / "state"
        state.mkdir(mode=0o700)
        self.cache = self.work / "cache" / "login-cache.sqlite3"
        self.online = dict(base, ACCOUNTS_DATABASE=f"postgresql:///{OFFLINE_DATABASE}",
                           ACCOUNTS_PBKDF2_ITERATIONS=str(self.options.iterations),
                           ACCOUNTS_LOGIN_CACHE=str(self.cache), XDG_STATE_HOME=str(state))
        away = self.work / "no-server"
        away.mkdir(mode=0o700)
        self.away = dict(self.online,
                         ACCOUNTS_DATABASE=f"postgresql:///{OFFLINE_DATABASE}?host={away}")
        quiet = self.work / "quiet-server"
        quiet.mkdir(mode=0o700)
        self.quiet = dict(self.online,
                          ACCOUNTS_DATABASE=f"postgresql:///{OFFLINE_DATABASE}?host={quiet}")
        # Takes connections (into its backlog) and never answers.
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(quiet / f".s.PGSQL.{server_env['PGPORT']}"))
        self.listener.listen(128)
        self.listener.setblocking(False)
        self.login = [self.binary, "login", "--username", "alice", "--password-stdin"]

    def prepare(self) -> None:
        try:
            self.server.psql(f"CREATE DATABASE {OFFLINE_DATABASE}")
        except pgserver.ServerError as error:
            fail(f"the PostgreSQL cluster: {error}")
        self.timer.run("setup", [self.binary, "activate", "--username", "alice", "--full-name",
                                 "Alice Liddell", "--email", "alice@example.org",
                                 "--password-stdin"], PASSWORD_LINE, record=False,
                       env=self.online)
        self.timer.run("setup", [self.binary, "store", "cache", "enable"], record=False,
                       env=self.online)
        for env in (self.online, self.away):
            out = self.timer.run("check", self.login, PASSWORD_LINE, record=False, env=env)
            if b"Welcome back Alice Liddell!" not in out:
                fail(f"login did not say Welcome back: {out[:200]!r}")

    def server_back(self) -> None:
        """Clears the cache's "server away" mark, as 30 seconds passing would."""
        with sqlite3.connect(self.cache) as db:
            db.execute("UPDATE cache_setting SET unreachable_until = NULL")

    def measure(self) -> None:
        for _ in range(self.options.postgres_runs):
            self.timer.run("offline-login", self.login, PASSWORD_LINE, env=self.away)
            self.timer.run("offline-online", self.login, PASSWORD_LINE, env=self.online)
        for _ in range(min(self.options.postgres_runs, 5)):
            self.server_back()
            out = self.timer.run("offline-vanished", self.login, PASSWORD_LINE, env=self.quiet)
            if b"Welcome back Alice Liddell!" not in out:
                fail(f"the first login after the server vanished said {out[:200]!r}")
            try:
                self.listener.accept()[0].close()  # the connection it made and waited on
            except BlockingIOError:
                fail("the first login after the server vanished never reached the quiet server")
        self.listener.close()

    def report(self, report) -> None:
        t, it = self.timer, f"{self.options.iterations:,}"
        ratio, least = t.ratios("offline-login", "offline-online")
        vanished = t.median("offline-vanished")
        report.section(85, [
            f"Logins while the server is away ({it} PBKDF2 iterations, the cache on):",
            t.row("accounts login from the cache", "offline-login"),
            t.row("accounts login online", "offline-online"),
            ratio_line("cache/online", ratio, least, OFFLINE_TARGET, 3),
            t.row("the first login after the server vanished", "offline-vanished")
            + f"   target ≤ {VANISHED_TARGET_S} s: {verdict(vanished <= VANISHED_TARGET_S)}",
            ""])
        report.markdown(85, [
            f"| `accounts login` from the login cache, server away ({it} PBKDF2 iterations) "
            f"| {t.cells('offline-login')} | {ratio:.3f}× online | ≤ {OFFLINE_TARGET}× |",
            f"| `accounts login` online, the cache on (same cost) | {t.cells('offline-online')} "
            f"| 1 | |",
            f"| the first login after the server vanished (waits the {CONNECT_TIMEOUT_S:.0f} s "
            f"connect timeout) | {t.cells('offline-vanished')} | | ≤ {ms(VANISHED_TARGET_S)} |"])
        report.run_count(85, f"{self.options.postgres_runs} per offline/online login, "
                             f"{min(self.options.postgres_runs, 5)} first logins after the "
                             f"server vanished")


def test_logins_while_the_server_is_away(bench, pg_server):
    OfflineRows(bench, pg_server).run(bench.report)
