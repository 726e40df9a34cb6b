"""A login's cost beyond PBKDF2, as percentiles and as throughput, on stores of its own:

  p50 and p99 of `accounts login`, `accounts verify` and the PAM path (`accounts pam-auth` run
  as pam_exec runs it: only PAM_* in the environment, the password on standard input), runs
  alternated with `openssl kdf … PBKDF2` of the same password, salt and count; each row is the
  command's percentile minus the KDF's. At the least count (1,000 iterations, so that the
  overhead shows: `--latency-runs` each, default 200) and at the default (1,200,000:
  `--latency-default-runs` each, default 50). The PAM path cleans its environment and so
  hashes at the default cost (or a higher stored one): it has the default row only.
  Logins per second: `--throughput-logins` logins (default 400 at the least count, a tenth of
  that at the default) from two clients a core, each its own account, under `taskset` on one
  core and on two.

At 1,000 iterations `accounts status` runs in the same rounds, so that a login's work beyond
start-up shows against the cheapest command that opens the store. Target: `verify`'s p50 ≤ 1.5×
`status`'s. Beside it, verify's own floor, from two programs that each do one half of its work
and nothing else, in the same rounds: `openssl kdf` (a process that loads libcrypto and its
providers and derives the key at 1,000 iterations) plus the sqlite3 shell's one durable insert
into a WAL database in the same folder (`synchronous=FULL`, its close's checkpoint, as a login's
write and close), less one `/bin/true` (the process start both count): what verify cannot go
below without hashing or writing less. The other figures have no target: they are published
(docs/performance.md) beside the KDF's floor."""

from __future__ import annotations

import os
import statistics
import subprocess
import threading
import time

from .timing import DEFAULT_ITERATIONS, NPROC, PASSWORD_LINE, Rows, fail, ms, require, verdict

CHEAP_ITERATIONS = 1000  # the least ACCOUNTS_PBKDF2_ITERATIONS takes
VERIFY_TARGET = 1.5  # verify's p50 against status's, at 1,000 iterations
PAM_ENV = {"PAM_USER": "alice", "PAM_SERVICE": "bench", "PAM_TYPE": "auth"}


def percentile(values: list[float], p: int) -> float:
    """The p-th percentile (inclusive, as numpy's default), of at least one value."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1]


class LatencyRows(Rows):
    def __init__(self, bench) -> None:
        super().__init__(bench, "latency")
        self.bench = bench
        self.options = bench.options

    def prepare(self) -> None:
        require("openssl", "taskset")
        self.stores = {cost: self.make_store(cost, iterations)
                       for cost, iterations in (("cheap", CHEAP_ITERATIONS),
                                                ("default", DEFAULT_ITERATIONS))}

    def make_store(self, cost: str, iterations: int) -> dict:
        """A store of its own: alice the owner, then one account a throughput client, each with
        the same password at this cost."""
        folder = self.work / cost
        folder.mkdir()
        env = dict(self.bench.env, ACCOUNTS_DATABASE=str(folder / "accounts.sqlite3"),
                   ACCOUNTS_PBKDF2_ITERATIONS=str(iterations), HOME=str(folder))
        self.timer.run("setup", [self.binary, "activate", "--username", "alice", "--full-name",
                                 "Alice Liddell", "--email", "alice@example.org",
                                 "--password-stdin"], PASSWORD_LINE, record=False, env=env)
        clients = [f"client{i}" for i in range(1, 2 * NPROC + 1)]
        for name in clients:
            self.timer.run("setup", [self.binary, "user", "add", "--username", name,
                                     "--full-name", name, "--email", f"{name}@example.org",
                                     "--password-stdin"], PASSWORD_LINE, record=False, env=env)
        salt = self.stored_salt(env)
        openssl = ["openssl", "kdf", "-keylen", "32", "-kdfopt", "digest:SHA256",
                   "-kdfopt", "pass:" + PASSWORD_LINE.decode().strip(), "-kdfopt",
                   f"salt:{salt}", "-kdfopt", f"iter:{iterations}", "PBKDF2"]
        pam_env = dict(PAM_ENV)
        pam = [self.binary, "pam-auth", "--database", env["ACCOUNTS_DATABASE"],
               "--time-limit", "300"]
        write = folder / "write.sqlite3"
        self.timer.run("setup", ["sqlite3", str(write), "PRAGMA journal_mode=WAL",
                                 "CREATE TABLE t(x)"], record=False, env=env)
        durable_write = ["sqlite3", str(write), "PRAGMA synchronous=FULL",
                         "INSERT INTO t VALUES (1)"]
        return {"env": env, "iterations": iterations, "clients": clients, "openssl": openssl,
                "pam": pam, "pam_env": pam_env, "folder": folder, "write": durable_write}

    def stored_salt(self, env: dict) -> str:
        out = self.timer.run("setup", ["sqlite3", env["ACCOUNTS_DATABASE"],
                                       "SELECT password_hash FROM account "
                                       "WHERE username_key = 'alice'"], record=False, env=env)
        algorithm, _count, salt, _key = out.decode().strip().split("$")
        if algorithm != "pbkdf2_sha256":
            fail(f"unexpected stored hash {algorithm}")
        return salt

    def login(self, name: str = "alice") -> list[str]:
        return [self.binary, "login", "--username", name, "--password-stdin"]

    def verify(self) -> list[str]:
        return [self.binary, "verify", "--username", "alice", "--password-stdin"]

    def measure(self) -> None:
        for cost, runs in (("cheap", self.options.latency_runs),
                           ("default", self.options.latency_default_runs)):
            store = self.stores[cost]
            env = store["env"]
            commands = [("login", self.login(), env), ("verify", self.verify(), env)]
            if cost == "default":
                commands.append(("pam", store["pam"], store["pam_env"]))
            else:
                commands += [("status", [self.binary, "status"], env),
                             ("write", store["write"], env), ("true", ["/bin/true"], env)]
            for name, argv, run_env in commands:
                self.timer.run("check", argv, PASSWORD_LINE, record=False, env=run_env)
            self.timer.run("check", store["openssl"], record=False, env=env)
            for _ in range(runs):
                for name, argv, run_env in commands:
                    self.timer.run(f"latency-{cost}-{name}", argv, PASSWORD_LINE, env=run_env)
                self.timer.run(f"latency-{cost}-kdf", store["openssl"], env=env)
        self.rates = {}
        for cost in ("cheap", "default"):
            logins = self.options.throughput_logins
            if cost == "default":
                logins = max(2 * NPROC, logins // 10)
            for cores in sorted({1, NPROC}):
                self.rates[(cost, cores)] = (self.throughput(cost, cores, logins), logins)

    def throughput(self, cost: str, cores: int, logins: int) -> float:
        """Logins a second: `logins` logins from two clients a core, each logging in to its own
        account one process after the other, all under `taskset -c 0[,1…]`."""
        store = self.stores[cost]
        cpus = ",".join(str(c) for c in sorted(os.sched_getaffinity(0))[:cores])
        clients = store["clients"][:2 * cores]
        taken = iter(range(logins))
        lock = threading.Lock()
        failures: list[str] = []

        def client(name: str) -> None:
            argv = ["taskset", "-c", cpus, *self.login(name)]
            while True:
                with lock:
                    if next(taken, None) is None or failures:
                        return
                proc = subprocess.run(argv, input=PASSWORD_LINE, capture_output=True,
                                      env=store["env"])
                if proc.returncode != 0 or b"Welcome back" not in proc.stdout:
                    with lock:
                        failures.append(f"exit {proc.returncode}: "
                                        f"{proc.stderr.decode(errors='replace').strip()[:300]}")
                    return

        threads = [threading.Thread(target=client, args=(name,)) for name in clients]
        start = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - start
        if failures:
            fail(f"a login of the throughput rows failed: {failures[0]}")
        return logins / elapsed

    def beyond(self, cost: str, name: str) -> tuple[float, float]:
        """p50 and p99 of the command minus those of the KDF of the same cost."""
        times, kdf = (self.timer.times[f"latency-{cost}-{n}"] for n in (name, "kdf"))
        return (percentile(times, 50) - percentile(kdf, 50),
                percentile(times, 99) - percentile(kdf, 99))

    def report(self, report) -> None:
        labels = {"login": "`accounts login`", "verify": "`accounts verify`",
                  "pam": "the PAM path (`accounts pam-auth` as pam_exec runs it)"}
        lines = ["A login's cost beyond PBKDF2 (p50 / p99 of the command, minus the same of "
                 "`openssl kdf` at the same cost):"]
        rows = []
        for cost, runs in (("cheap", self.options.latency_runs),
                           ("default", self.options.latency_default_runs)):
            iterations = self.stores[cost]["iterations"]
            names = ["login", "verify"] + (["pam"] if cost == "default" else [])
            kdf = self.timer.times[f"latency-{cost}-kdf"]
            lines.append(f"  {iterations:,} iterations, {runs} runs each, alternated: "
                         f"openssl kdf p50 {ms(percentile(kdf, 50))}, "
                         f"p99 {ms(percentile(kdf, 99))}")
            for name in names:
                times = self.timer.times[f"latency-{cost}-{name}"]
                p50, p99 = self.beyond(cost, name)
                lines.append(f"    {name:<7} p50 {ms(percentile(times, 50)):>10} "
                             f"p99 {ms(percentile(times, 99)):>10}   beyond the KDF: p50 "
                             f"{ms(p50)}, p99 {ms(p99)}")
                rows.append(f"| {labels[name]}, {iterations:,} iterations ({runs} runs) "
                            f"| {ms(percentile(times, 50))} | {ms(percentile(times, 99))} "
                            f"| {ms(p50)} | {ms(p99)} |")
            rows.append(f"| `openssl kdf … PBKDF2`, {iterations:,} iterations | "
                        f"{ms(percentile(kdf, 50))} | {ms(percentile(kdf, 99))} | 0 | 0 |")
        lines.append("  Logins a second (two clients a core, each its own account):")
        for (cost, cores), (rate, logins) in sorted(self.rates.items()):
            iterations = self.stores[cost]["iterations"]
            core_text = "1 core" if cores == 1 else f"{cores} cores"
            lines.append(f"    {iterations:>9,} iterations, {core_text}: {rate:.2f} logins/s "
                         f"({logins} logins)")
            rows.append(f"| logins a second, {iterations:,} iterations, {core_text} (taskset; "
                        f"{logins} logins, {2 * cores} clients) | {rate:.2f}/s | | | |")
        verify, status = (percentile(self.timer.times[f"latency-cheap-{n}"], 50)
                          for n in ("verify", "status"))
        ratio = verify / status
        lines.append(f"  verify against status at {CHEAP_ITERATIONS:,} iterations (p50): "
                     f"{ms(verify)} / {ms(status)} = {ratio:.2f}   target ≤ {VERIFY_TARGET}: "
                     f"{verdict(ratio <= VERIFY_TARGET)}")
        kdf, write, true = (percentile(self.timer.times[f"latency-cheap-{n}"], 50)
                            for n in ("kdf", "write", "true"))
        floor = kdf + write - true
        lines.append(f"  verify's floor: openssl kdf {ms(kdf)} + sqlite3's durable insert "
                     f"{ms(write)} - /bin/true {ms(true)} = {ms(floor)} = "
                     f"{floor / status:.2f}× status; verify is {verify / floor:.2f}× its floor")
        report.markdown(16, [
            f"| `accounts verify` against `accounts status`, {CHEAP_ITERATIONS:,} iterations "
            f"(p50, {self.options.latency_runs} runs alternated) | {ms(verify)} | | "
            f"{ratio:.2f}× status ({ms(status)}) | ≤ {VERIFY_TARGET}× "
            f"({verdict(ratio <= VERIFY_TARGET)}) |",
            f"| verify's floor: `openssl kdf` (1,000 iterations) + the sqlite3 shell's durable "
            f"insert (WAL, `synchronous=FULL`) − `/bin/true` | {ms(floor)} | | "
            f"{floor / status:.2f}× status; verify {verify / floor:.2f}× its floor | |"])
        report.section(16, lines)
        report.note(16, "\n".join([
            "| latency | p50 | p99 | p50 beyond the KDF | p99 beyond the KDF |",
            "|---|---:|---:|---:|---:|", *rows]))
        report.run_count(16, f"{self.options.latency_runs} and "
                             f"{self.options.latency_default_runs} per latency command")


def test_latency_beyond_the_kdf_and_throughput(bench):
    LatencyRows(bench).run(bench.report)
