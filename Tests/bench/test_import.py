"""With a csv file of 1,000,000 users (`--import-count`; written once per run by importing.py,
the contract's `username,full_name,email,password_hash`, every line with the same real PBKDF2
hash): `user import FILE --format csv` into a fresh copy of a store the program activated, vs
the sqlite3 shell's `.mode csv` + `.import FILE imported` (the file's 4 columns defined as in
`account`, the name UNIQUE) in a fresh copy of the same file. Target: ≤ 3×. And the peak RSS of
the import (the reaper). Target: ≤ 128 MiB. And, for scale, `.import` through a view into a
copy of `account` (every column and the key filled by a trigger: the row the program writes).
No warm-up: each run starts from fresh copies, the csv file is in the page cache."""

from __future__ import annotations

import re
import shutil
import sqlite3
import subprocess
import time

from . import importing, million
from .timing import (PASSWORD_LINE, Reaper, Rows, fail, fresh_copy, ratio_line, say,
                     verdict)

IMPORT_RSS_TARGET_MIB = 128
IMPORT_RATIO_TARGET = 3
IMPORTED = re.compile(r"^Imported ([\d,]+) accounts? from ")


class ImportUsers(Rows):
    """`accounts user import FILE --format csv` of many users into a freshly activated device
    vs the sqlite3 shell's `.import` of the same file."""

    def __init__(self, bench, password_hash: str) -> None:
        self.count = bench.options.import_count
        self.runs = bench.options.import_runs
        super().__init__(bench, "import")
        self.password_hash = password_hash
        self.csv = self.work / "users.csv"
        # Activated once by the program; every run imports into a copy of it.
        self.pristine = self.work / "pristine" / "accounts.sqlite3"
        # A copy of the pristine file with the reference tables added; sqlite3 imports into a
        # copy of it.
        self.reference = self.work / "reference" / "accounts.sqlite3"
        self.fresh = self.work / "fresh"
        self.fresh_db = self.fresh / "accounts.sqlite3"
        self.env = dict(bench.env, ACCOUNTS_DATABASE=str(self.fresh_db))
        self.reaper = Reaper(self.work, self.timer, self.env)
        self.made = ""

    def import_argv(self, path, *more: str) -> list[str]:
        return [self.binary, "user", "import", str(path), "--format", "csv", *more]

    def sqlite3_argv(self, table: str) -> list[str]:
        return ["sqlite3", str(self.fresh_db), ".mode csv",
                f'.import --skip 1 "{self.csv}" {table}']

    def count_rows(self, table: str) -> int:
        con = sqlite3.connect(f"file:{self.fresh_db}?mode=ro", uri=True)
        try:
            return con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        finally:
            con.close()

    # Before the measurements

    def prepare(self) -> None:
        began = time.perf_counter()
        try:
            size = importing.write_csv(str(self.csv), self.count, self.password_hash)
        except importing.InputError as error:
            fail(f"writing the csv of {self.count:,} users: {error}")
        self.made = (f"{self.count:,} users, {size / 2**20:.0f} MiB, written in "
                     f"{time.perf_counter() - began:.1f} s")
        say(f"csv of {self.made}")

        self.pristine.parent.mkdir(mode=0o700)
        self.timer.run("setup", [self.binary, "activate", "--username", "alice", "--full-name",
                                 "Alice Liddell", "--email", "alice@example.org",
                                 "--password-stdin"], PASSWORD_LINE,
                       record=False, env=dict(self.env, ACCOUNTS_DATABASE=str(self.pristine)))
        fresh_copy(self.pristine, self.fresh)
        con = sqlite3.connect(str(self.fresh_db), isolation_level=None)
        try:
            (account_sql,) = con.execute(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'account'"
            ).fetchone()
            con.executescript(importing.reference_sql(account_sql))
        except (importing.InputError, sqlite3.Error, TypeError) as error:
            fail(f"making the reference tables: {error}")
        finally:
            con.close()
        self.reference.parent.mkdir(mode=0o700)
        for suffix in ("", "-wal"):
            path = self.fresh_db.with_name(self.fresh_db.name + suffix)
            if path.exists():
                shutil.copy2(path, self.reference.with_name(self.reference.name + suffix))

        # The program takes the file's form before minutes are spent on it.
        sample = self.work / "sample.csv"
        importing.write_csv(str(sample), 3, self.password_hash)
        fresh_copy(self.pristine, self.fresh)
        proc = subprocess.run(self.import_argv(sample, "--dry-run"), capture_output=True,
                              env=self.env)
        said = (proc.stdout + proc.stderr).decode(errors="replace").strip()
        if proc.returncode != 0 or not said.startswith("Dry run: 3 accounts would be imported"):
            fail(f"`accounts user import FILE --format csv --dry-run` of 3 users exited "
                 f"{proc.returncode}: {said[:300]} (--import-count 0 leaves the import out)")
        sample.unlink()
        self.reaper.floor()
        shutil.rmtree(self.fresh, ignore_errors=True)

    # The measurements, alternated; every run starts from a fresh copy

    def measure(self) -> None:
        for run in range(self.runs):
            fresh_copy(self.pristine, self.fresh)
            out = self.work / "import.out"
            self.reaper.run("import", self.import_argv(self.csv), output=str(out))
            said = out.read_text(errors="replace").strip()
            stored = self.count_rows("account")
            if stored != self.count + 1:
                fail(f"after `user import` the store holds {stored:,} accounts, not "
                     f"{self.count + 1:,} (the owner and {self.count:,}); it said {said[:200]!r}")
            if run == 0:
                self.check_import(said)

            for name, table, counted in (("import-sqlite3", "imported", "imported"),
                                         ("import-sqlite3-full", "imported_full",
                                          "account_copy")):
                fresh_copy(self.reference, self.fresh)
                errors = self.reaper.run(name, self.sqlite3_argv(table))
                rows = self.count_rows(counted)
                if rows != self.count or errors.strip():
                    fail(f"sqlite3 .import into {table} stored {rows:,} rows, not "
                         f"{self.count:,}: {errors.strip()[:300]}")
        shutil.rmtree(self.fresh, ignore_errors=True)

    def check_import(self, said: str) -> None:
        """Once: what the import said and stored; a user it added logs in with the password of
        the hash in the file."""
        match = IMPORTED.match(said)
        if not match or int(match.group(1).replace(",", "")) != self.count:
            fail(f"user import said {said[:200]!r}, not 'Imported {self.count} accounts from "
                 f"FILE.'")
        con = sqlite3.connect(f"file:{self.fresh_db}?mode=ro", uri=True)
        try:
            (same,) = con.execute(
                "SELECT count(*) FROM account WHERE password_hash = ? AND email = username || "
                "'@example.org' AND username_key = username AND disabled_at IS NULL",
                (self.password_hash,)).fetchone()
            (events,) = con.execute("SELECT count(*) FROM audit_event "
                                    "WHERE kind = 'accounts_imported'").fetchone()
        finally:
            con.close()
        if same != self.count:
            fail(f"{self.count - same:,} imported accounts differ from their csv line (hash, "
                 f"e-mail, key or disabled)")
        if events != 1:
            fail(f"{events} accounts_imported events, not 1")
        target = million.name_of(self.count // 2)
        out = self.timer.run("check", [self.binary, "login", "--username", target,
                                       "--password-stdin"], PASSWORD_LINE,
                             record=False, env=self.env)
        if b"Welcome back" not in out:
            fail(f"login as the imported {target} did not say Welcome back")

    # The figures

    def report(self, report) -> None:
        t, peak_mib = self.timer, self.reaper.peak_mib
        ratio, least = t.ratios("import", "import-sqlite3")
        full, full_least = t.ratios("import", "import-sqlite3-full")
        peak = peak_mib("import")
        report.section(60, [
            f"Importing a csv file of {self.made}, into a fresh copy of an activated store "
            f"each run:",
            t.row("accounts user import FILE --format csv", "import"),
            t.row("sqlite3 DB .mode csv '.import FILE imported'", "import-sqlite3"),
            ratio_line("import/sqlite3", ratio, least, IMPORT_RATIO_TARGET),
            t.row("sqlite3 .import into a copy of account (view)", "import-sqlite3-full"),
            f"  (the row the program writes: every column of account, key and timestamps "
            f"filled by a trigger; import/that: {full:.2f} (median), {full_least:.2f} (min))",
            f"  peak RSS of user import: {peak:.1f} MiB (highest of "
            f"{len(self.reaper.rss['import'])} runs; sqlite3 {peak_mib('import-sqlite3'):.1f} "
            f"MiB; /bin/true {peak_mib('floor'):.1f} MiB, the reaper's own mark, which a child "
            f"starts from)   target ≤ {IMPORT_RSS_TARGET_MIB} MiB: "
            f"{verdict(peak <= IMPORT_RSS_TARGET_MIB)}",
        ])
        n = f"{self.count:,}"
        report.markdown(60, [
            f"| `accounts user import FILE --format csv`, {n} users, fresh activated store "
            f"| {t.cells('import')} | {ratio:.2f}× sqlite3 | ≤ {IMPORT_RATIO_TARGET}× |",
            f"| `sqlite3 DB` `.mode csv` `.import FILE imported` (same file; its 4 columns "
            f"as in `account`, the name UNIQUE) | {t.cells('import-sqlite3')} | 1 | |",
            f"| `sqlite3` `.import` through a view into a copy of `account` (every column, "
            f"key and timestamps by a trigger) | {t.cells('import-sqlite3-full')} "
            f"| {t.median('import-sqlite3-full') / t.median('import-sqlite3'):.2f}× sqlite3 | |",
            f"| peak RSS of `accounts user import`, {n} users | {peak:.1f} MiB "
            f"| | sqlite3 {peak_mib('import-sqlite3'):.1f} MiB | ≤ {IMPORT_RSS_TARGET_MIB} MiB |",
        ])
        report.run_count(60, f"{self.runs} per import command ({n} users)")


def test_import_of_a_big_csv_beside_sqlite3(bench, alice):
    ImportUsers(bench, alice).run(bench.report)
