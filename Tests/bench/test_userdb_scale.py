"""User records at scale, with 1,000 PBKDF2 iterations (the hash is not what is measured), each
store made by million.py (the real `activate` and one `user add`, the rest inserted) and kept
in a folder of the bench's own (`--uids 200000-399999`):

  userdb enable   of 100,000 accounts (`--userdb-accounts`): every record written. Target:
                  ≤ 60 s.
  user add        with records kept, in that store vs in a store of 10 accounts (alternated,
                  `--userdb-runs` each): only the new account's files are written. Target:
                  ≤ 2×.
  userdb sync     with nothing behind: one read of the store's change counter.
And the folder's weight at that size: its files and what `du` says it takes."""

from __future__ import annotations

import subprocess

from . import million
from .timing import PASSWORD, PASSWORD_LINE, Rows, fail, ratio_line, say, verdict

ITERATIONS = 1000
SMALL = 10
ENABLE_TARGET_S = 60
ADD_TARGET = 2


class UserdbRows(Rows):
    def __init__(self, bench) -> None:
        super().__init__(bench, "userdb")
        self.count = bench.options.userdb_accounts
        self.runs = bench.options.userdb_runs
        self.env = dict(bench.env, ACCOUNTS_PBKDF2_ITERATIONS=str(ITERATIONS))
        self.stores = {}
        self.added = 0
        self.weight = ""

    def store(self, size: int) -> dict[str, str]:
        """The environment of the store of `size` accounts (made once)."""
        if size not in self.stores:
            folder = self.work / f"store-{size}"
            folder.mkdir(mode=0o700)
            env = dict(self.env, ACCOUNTS_DATABASE=str(folder / "accounts.sqlite3"))
            million.make_store(self.binary, env["ACCOUNTS_DATABASE"], env, size, PASSWORD,
                               log=say)
            self.stores[size] = env
        return self.stores[size]

    def enable_argv(self, size: int) -> list[str]:
        return [self.binary, "userdb", "enable", "--folder", str(self.work / f"records-{size}"),
                "--uids", "200000-399999"]

    def add_argv(self) -> list[str]:
        self.added += 1
        name = f"bench_records_{self.added:04d}"
        return [self.binary, "user", "add", "--username", name, "--full-name", "Bench Added",
                "--email", f"{name}@example.org", "--password-stdin"]

    def prepare(self) -> None:
        self.store(SMALL)
        self.store(self.count)
        self.timer.run("setup", self.enable_argv(SMALL), record=False, env=self.store(SMALL))

    def measure(self) -> None:
        out = self.timer.run("userdb-enable", self.enable_argv(self.count),
                             env=self.store(self.count))
        written = f"{self.count} users, {self.count} groups; {4 * self.count} files written"
        if written.encode() not in out:
            fail(f"userdb enable said {out[:300]!r}, not '{written}'")
        for _ in range(self.runs):
            for size, name in ((self.count, "userdb-add-many"), (SMALL, "userdb-add-few")):
                self.timer.run(name, self.add_argv(), PASSWORD_LINE, env=self.store(size))
        for _ in range(self.runs):
            out = self.timer.run("userdb-sync-idle", [self.binary, "userdb", "sync"],
                                 env=self.store(self.count))
            if not out.endswith(b"; 0 files written, 0 removed.\n"):
                fail(f"userdb sync with nothing behind said {out[:300]!r}")
        folder = self.work / f"records-{self.count}"
        files = sum(1 for _ in folder.rglob("*"))
        used = subprocess.run(["du", "-sk", str(folder)], capture_output=True, text=True,
                              check=True).stdout.split()[0]
        apparent = subprocess.run(["du", "-sk", "--apparent-size", str(folder)],
                                  capture_output=True, text=True, check=True).stdout.split()[0]
        manifest = subprocess.run(["du", "-skc"] + [str(p) for p in folder.glob(".accounts-*")],
                                  capture_output=True, text=True, check=True).stdout.split()[-2]
        self.weight = (f"{files:,} files, {int(used) / 1024:.0f} MiB on disk "
                       f"({int(apparent) / 1024:.0f} MiB of content; the manifest "
                       f"{int(manifest) / 1024:.0f} MiB)")

    def report(self, report) -> None:
        t = self.timer
        n = f"{self.count:,}"
        enable = t.median("userdb-enable")
        add_ratio, add_min = t.ratios("userdb-add-many", "userdb-add-few")
        report.section(60, [
            f"User records (1,000 iterations), {n} accounts, uids 200000-399999:",
            t.row(f"accounts userdb enable, {n} accounts", "userdb-enable")
            + f"   target ≤ {ENABLE_TARGET_S} s: {verdict(enable <= ENABLE_TARGET_S)}"
            + f"   (CPU {t.cpu['userdb-enable'][0]:.1f} s)",
            t.row(f"accounts user add, records kept, {n} accounts", "userdb-add-many"),
            t.row(f"accounts user add, records kept, {SMALL} accounts", "userdb-add-few"),
            ratio_line(f"{n}/{SMALL}", add_ratio, add_min, ADD_TARGET),
            t.row(f"accounts userdb sync, nothing behind, {n}", "userdb-sync-idle"),
            f"  the folder: {self.weight}",
        ])
        report.markdown(60, [
            f"| `accounts userdb enable`, {n} accounts | {t.cells('userdb-enable')} "
            f"| | ≤ {ENABLE_TARGET_S} s |",
            f"| `accounts user add`, records kept, {n} accounts | {t.cells('userdb-add-many')} "
            f"| {add_ratio:.2f}× {SMALL} accounts | ≤ {ADD_TARGET}× |",
            f"| `accounts user add`, records kept, {SMALL} accounts "
            f"| {t.cells('userdb-add-few')} | 1 | |",
            f"| `accounts userdb sync`, nothing behind, {n} accounts "
            f"| {t.cells('userdb-sync-idle')} | | |",
            f"| the records folder, {n} accounts | {self.weight} | | | |",
        ])
        report.run_count(60, f"{self.runs} per user record command, 1 enable")


def test_user_records_at_scale(bench):
    UserdbRows(bench).run(bench.report)
