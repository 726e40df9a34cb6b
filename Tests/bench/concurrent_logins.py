"""The concurrent logins of the PostgreSQL bench (test_postgres.py): `--concurrent-logins` logins
from `--clients` clients at once (each its own account and session file, one process after the
other), on each store in turn (rounds A B B A …), at the default PBKDF2 cost and at the least;
their throughput, their CPU a login (the clients' and the server's) and their rows of the
report."""

from __future__ import annotations

import resource
import subprocess
import threading
import time

from .timing import DEFAULT_ITERATIONS, NPROC, PASSWORD_LINE, fail, ms, verdict

THROUGHPUT_TARGET = 0.9
CHEAP_ITERATIONS = 1000  # the least ACCOUNTS_PBKDF2_ITERATIONS takes: the stores' own cost


class ConcurrentLogins:
    """The concurrent rounds of PostgresRows, which mixes this in: it uses the rows' options,
    timer, binary, server, server_cpu, store_env and login_argv."""

    def client_names(self, cost: str) -> list[str]:
        return [f"bench_{cost}_{i}" for i in range(1, self.options.clients + 1)]

    def bursts(self) -> None:
        """The rounds: the stores alternate, the first store of a round alternates
        (A B B A A B B A …)."""
        for cost in ("default", "cheap"):
            for round_ in range(self.options.concurrent_rounds):
                stores = ("postgres", "sqlite") if round_ % 2 == 0 else ("sqlite", "postgres")
                for store in stores:
                    self.burst(store, cost)

    def burst(self, store: str, cost: str) -> None:
        """`--concurrent-logins` logins from `--clients` clients at once, each its own process
        after the last (a client: its own account and session file), until the count is
        reached; the time from the first start to the last exit."""
        iterations = self.options.iterations if cost == "default" else CHEAP_ITERATIONS
        name = f"burst-{store}-{cost}"
        clients = [(self.login_argv(username), self.store_env(store, iterations, f"{cost}-{i}"))
                   for i, username in enumerate(self.client_names(cost), start=1)]
        taken = iter(range(self.options.concurrent_logins))
        lock = threading.Lock()
        failures: list[str] = []

        def client(argv: list[str], env: dict[str, str]) -> None:
            while True:
                with lock:
                    if next(taken, None) is None or failures:
                        return
                proc = subprocess.run(argv, input=PASSWORD_LINE, capture_output=True, env=env)
                if proc.returncode != 0 or b"Welcome back" not in proc.stdout:
                    with lock:
                        failures.append(f"exit {proc.returncode}: "
                                        f"{proc.stderr.decode(errors='replace').strip()[:300]}")
                    return

        threads = [threading.Thread(target=client, args=c) for c in clients]
        server_before = self.server.server_cpu() if store == "postgres" else 0.0
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if failures:
            fail(f"a concurrent login on {store} failed: {failures[0]}")
        self.timer.times.setdefault(name, []).append(elapsed)
        self.timer.cpu.setdefault(name, []).append(
            (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime))
        if store == "postgres":
            self.server.wait_for_clients_gone()
            self.server_cpu.setdefault(name, 0.0)
            self.server_cpu[name] += self.server.server_cpu() - server_before

    def throughput(self, name: str) -> tuple[float, float]:
        """Logins per second: of all the rounds together (every login over their summed time:
        with the stores in the order A B B A …, a steady drift of the machine's speed weighs on
        both alike, as it does not on a median of rounds of half a minute or more each), and
        of the best round."""
        n = self.options.concurrent_logins
        times = self.timer.times[name]
        return n * len(times) / sum(times), n / min(times)

    def burst_cpu(self, cost: str) -> tuple[float, float]:
        """CPU of one login in the concurrent rounds (all rounds), PostgreSQL (the clients'
        and the server's) and SQLite."""
        t = self.timer
        n = self.options.concurrent_logins
        pg, sqlite = f"burst-postgres-{cost}", f"burst-sqlite-{cost}"
        return ((sum(t.cpu[pg]) + self.server_cpu[pg]) / (n * len(t.cpu[pg])),
                sum(t.cpu[sqlite]) / (n * len(t.cpu[sqlite])))

    def cpu_estimate(self, cost: str) -> float:
        pg_cpu, sqlite_cpu = self.burst_cpu(cost)
        return sqlite_cpu / pg_cpu

    def throughput_ratio(self, cost: str) -> tuple[float, float]:
        pg, sqlite = (self.throughput(f"burst-{s}-{cost}") for s in ("postgres", "sqlite"))
        return pg[0] / sqlite[0], pg[1] / sqlite[1]

    def concurrent_lines(self) -> list[str]:
        """The report's lines of the concurrent rounds, at each cost."""
        t, o = self.timer, self.options
        it = f"{o.iterations:,}"
        lines: list[str] = []
        n, c = o.concurrent_logins, o.clients
        for cost, label in (("default", f"{it} iterations (the default cost)"
                             if o.iterations == DEFAULT_ITERATIONS else f"{it} iterations"),
                            ("cheap", f"{CHEAP_ITERATIONS:,} iterations (the least: the "
                                      f"stores' own cost)")):
            lines.append(f"{n} logins from {c} concurrent clients, {label}, rounds on each "
                         f"store: {o.concurrent_rounds}")
            for store in ("postgres", "sqlite"):
                name = f"burst-{store}-{cost}"
                overall, best = self.throughput(name)
                cpu = sum(t.cpu[name]) / (n * len(t.cpu[name]))
                server = (f", the server's {ms(self.server_cpu[name] / n / len(t.times[name]))}"
                          if store == "postgres" else "")
                lines.append(f"  {store:<10} {overall:7.2f} logins/s (all rounds; median round "
                             f"{ms(t.median(name))}), best {best:7.2f}/s; CPU a login: clients "
                             f"{ms(cpu)}{server}")
            ratio, best = self.throughput_ratio(cost)
            judged = ("   target ≥ 0.9: " + verdict(ratio >= THROUGHPUT_TARGET)
                      if cost == "default" else "   (no target: for scale)")
            lines.append(f"  throughput PostgreSQL/SQLite: {ratio:.3f} (all rounds), "
                         f"{best:.3f} (best)" + judged)
            pg_cpu, sqlite_cpu = self.burst_cpu(cost)
            lines.append(f"  CPU a login, clients and server: PostgreSQL {ms(pg_cpu)}, SQLite "
                         f"{ms(sqlite_cpu)}; where the CPUs are the limit ({c} clients on "
                         f"{NPROC} CPUs, PBKDF2 at its cost), the throughput ratio this bounds: "
                         f"{sqlite_cpu / pg_cpu:.3f}")
        return lines

    def concurrent_markdown(self) -> list[str]:
        """The summary table's rows of the concurrent rounds."""
        o = self.options
        it = f"{o.iterations:,}"

        def rate(name: str) -> str:
            overall, best = self.throughput(name)
            return f"{overall:.2f} logins/s | {best:.2f} logins/s"

        n, c = o.concurrent_logins, o.clients
        return [
            f"| {n} logins from {c} concurrent clients on PostgreSQL ({it} iterations; "
            f"median column: all rounds together, min column: the best round) "
            f"| {rate('burst-postgres-default')} "
            f"| {self.throughput_ratio('default')[0]:.3f}× SQLite (ratio of CPU a login "
            f"{self.cpu_estimate('default'):.3f}×) | ≥ {THROUGHPUT_TARGET}× |",
            f"| {n} logins from {c} concurrent clients on SQLite (same) "
            f"| {rate('burst-sqlite-default')} | 1 | |",
            f"| {n} logins from {c} concurrent clients on PostgreSQL ({CHEAP_ITERATIONS:,} "
            f"iterations: the stores' own cost) | {rate('burst-postgres-cheap')} "
            f"| {self.throughput_ratio('cheap')[0]:.3f}× SQLite (ratio of CPU a login "
            f"{self.cpu_estimate('cheap'):.3f}×) | |",
            f"| {n} logins from {c} concurrent clients on SQLite ({CHEAP_ITERATIONS:,} "
            f"iterations) | {rate('burst-sqlite-cheap')} | 1 | |",
        ]
