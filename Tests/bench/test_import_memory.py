"""The peak memory of `accounts user import` against the size of its file (files written once
per run by importing.py, each imported into a fresh copy of a store the program activated,
`--import-runs` times, the highest peak kept): a Django dump of many users on one line
(`dumpdata auth.user` without --indent; `--memory-users`), and a csv whose records each hold a
quoted field of many lines (`--memory-lines`) in a column import ignores (`--memory-users` / 200
records). The peak RSS is read by the reaper. Target: under 1× the file (the file is streamed,
never held whole)."""

from __future__ import annotations

import time

from . import importing
from .test_import import IMPORTED
from .timing import PASSWORD_LINE, Reaper, Rows, fail, fresh_copy, ms, say, verdict

MEMORY_RATIO_TARGET = 1.0


class ImportMemory(Rows):
    def __init__(self, bench, password_hash: str) -> None:
        o = bench.options
        self.users = o.memory_users
        self.records = max(1, o.memory_users // 200)
        self.lines = o.memory_lines
        self.runs = o.import_runs
        super().__init__(bench, "import-memory")
        self.password_hash = password_hash
        self.files = {"django": self.work / "users.json", "csv": self.work / "notes.csv"}
        self.sizes: dict[str, int] = {}
        self.pristine = self.work / "pristine" / "accounts.sqlite3"
        self.fresh = self.work / "fresh"
        self.env = dict(bench.env, ACCOUNTS_DATABASE=str(self.fresh / "accounts.sqlite3"))
        self.reaper = Reaper(self.work, self.timer, self.env)

    def prepare(self) -> None:
        began = time.perf_counter()
        self.sizes["django"] = importing.write_django_json(
            str(self.files["django"]), self.users, self.password_hash)
        self.sizes["csv"] = importing.write_multiline_csv(
            str(self.files["csv"]), self.records, self.lines, self.password_hash)
        say(f"memory files: a Django dump of {self.users:,} users "
            f"({self.sizes['django'] / 2**20:.0f} MiB), a csv of {self.records:,} records of "
            f"{self.lines:,} lines ({self.sizes['csv'] / 2**20:.0f} MiB), written in "
            f"{time.perf_counter() - began:.1f} s")
        self.pristine.parent.mkdir(mode=0o700)
        self.timer.run("setup", [self.binary, "activate", "--username", "alice", "--full-name",
                                 "Alice Liddell", "--email", "alice@example.org",
                                 "--password-stdin"], PASSWORD_LINE,
                       record=False, env=dict(self.env, ACCOUNTS_DATABASE=str(self.pristine)))
        self.reaper.floor()

    def measure(self) -> None:
        expected = {"django": self.users, "csv": self.records}
        for _ in range(self.runs):
            for kind, path in self.files.items():
                fresh_copy(self.pristine, self.fresh)
                out = self.work / "import.out"
                self.reaper.run(f"memory-{kind}", [self.binary, "user", "import", str(path),
                                                   "--format", kind], output=str(out))
                said = out.read_text(errors="replace").strip()
                match = IMPORTED.match(said)
                if not match or int(match.group(1).replace(",", "")) != expected[kind]:
                    fail(f"user import of the {kind} file said {said[:200]!r}, not 'Imported "
                         f"{expected[kind]} accounts from …'")

    def ratio(self, kind: str) -> float:
        return self.reaper.peak_mib(f"memory-{kind}") * 2**20 / self.sizes[kind]

    def label(self, kind: str) -> str:
        size = self.sizes[kind] / 2**20
        if kind == "django":
            return (f"a Django dump of {self.users:,} users on one line ({size:.0f} MiB, "
                    f"`--format django`)")
        return (f"a csv of {self.records:,} records, each with a quoted field of "
                f"{self.lines:,} lines ({size:.0f} MiB, `--format csv`)")

    def report(self, report) -> None:
        t, peak_mib = self.timer, self.reaper.peak_mib
        lines = [f"Peak memory of user import against the file's size ({self.runs} run(s) each, "
                 f"into a fresh copy of an activated store):"]
        for kind in self.files:
            ratio = self.ratio(kind)
            lines += [
                t.row(f"user import, {kind}", f"memory-{kind}"),
                f"  {self.label(kind)}: peak RSS {peak_mib(f'memory-{kind}'):.1f} MiB, "
                f"{ratio:.2f}× the file   target < {MEMORY_RATIO_TARGET:.0f}×: "
                f"{verdict(ratio < MEMORY_RATIO_TARGET)}",
            ]
        lines.append(f"  (/bin/true {peak_mib('floor'):.1f} MiB: the reaper's own mark, which a "
                     f"child starts from)")
        report.section(70, lines)
        report.markdown(70, [
            f"| peak RSS of `accounts user import`, {self.label(kind)} "
            f"| {peak_mib(f'memory-{kind}'):.1f} MiB | | {self.ratio(kind):.2f}× the file "
            f"({ms(t.median(f'memory-{kind}'))}) | < {MEMORY_RATIO_TARGET:.0f}× |"
            for kind in self.files
        ])
        report.run_count(70, f"{self.runs} run(s) per memory import, the highest peak shown")


def test_import_memory_against_the_file_size(bench, alice):
    ImportMemory(bench, alice).run(bench.report)
