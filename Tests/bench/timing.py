"""The bench's machinery: the timer that runs alternated commands, the reaper that reads a
command's peak memory, the formatting of figures, and the report every module adds its rows to.

A command that exits with another code than expected, or says the wrong thing, fails the test
that ran it (pytest.fail); a figure that misses its target never does: the report says MISSED.
"""

from __future__ import annotations

import json
import os
import pathlib
import platform
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import time

import pytest

PASSWORD = "correct horse battery staple"  # a throwaway password for a throwaway database
PASSWORD_LINE = (PASSWORD + "\n").encode()
DEFAULT_ITERATIONS = 1_200_000
NPROC = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def fail(message: str) -> None:
    """The program misbehaved (or the bench could not set up): the test fails, without a
    Python traceback."""
    pytest.fail(f"bench: {message}", pytrace=False)


def say(text: str) -> None:
    """A progress line on standard error (seen with `pytest -s`, as Scripts/bench runs it)."""
    print(f"bench: {text}", file=sys.stderr, flush=True)


def require(*tools: str) -> None:
    for tool in tools:
        if shutil.which(tool) is None:
            fail(f"{tool} is not installed (Scripts/setup installs it)")


class Timer:
    """Runs commands and keeps their wall times (fork to exit, as a shell would see them)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.times: dict[str, list[float]] = {}
        self.cpu: dict[str, list[float]] = {}  # user + system time of the command

    def run(self, name: str, argv: list[str], stdin: bytes = b"", expect: int = 0,
            record: bool = True, env: dict[str, str] | None = None) -> bytes:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(argv, input=stdin, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env or self.env)
        elapsed = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        if proc.returncode != expect:
            shown = argv[0] if name.startswith("openssl") else " ".join(argv)
            fail(f"{shown} exited {proc.returncode} (expected {expect}): "
                 f"{proc.stderr.decode(errors='replace').strip()[:300]}")
        if record:
            self.times.setdefault(name, []).append(elapsed)
            self.cpu.setdefault(name, []).append(cpu)
        return proc.stdout

    def median(self, name: str) -> float:
        return statistics.median(self.times[name])

    def min(self, name: str) -> float:
        return min(self.times[name])

    def ratios(self, a: str, b: str) -> tuple[float, float]:
        """The ratios of the medians and of the minimums."""
        return self.median(a) / self.median(b), self.min(a) / self.min(b)

    def cpu_ratio(self, a: str, b: str) -> float:
        """The ratio of median CPU times (steadier than wall time where the machine's speed
        drifts during a run)."""
        return statistics.median(self.cpu[a]) / statistics.median(self.cpu[b])

    def row(self, label: str, name: str) -> str:
        """One line of the plain report: a command's median and min wall time."""
        return f"  {label:<48} median {ms(self.median(name)):>10}   min {ms(self.min(name)):>10}"

    def cells(self, name: str) -> str:
        """The median and min cells of a markdown row."""
        return f"{ms(self.median(name))} | {ms(self.min(name))}"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def ratio_line(label: str, ratio: float, least: float, target: float, places: int = 2) -> str:
    """One line of the plain report: a ratio of medians and of minimums (`Timer.ratios`), and
    whether the median one is within its target (at most)."""
    return (f"  ratio {label}: {ratio:.{places}f} (median), {least:.{places}f} (min)"
            f"   target ≤ {target}: {verdict(ratio <= target)}")


class Rows:
    """Rows of the report measured in a folder of their own under the bench's work folder, by
    the bench's binary and timer: prepared, measured, then reported (`run`)."""

    def __init__(self, bench, folder: str) -> None:
        self.work = bench.work / folder
        self.work.mkdir(mode=0o700)
        self.binary = bench.binary
        self.timer = bench.timer

    def run(self, report) -> None:
        self.prepare()
        self.measure()
        self.report(report)


# Runs a command and writes its exit code, wall time (fork to exit) and peak RSS (KiB) as JSON to
# a file; its standard output goes to a file or /dev/null. A small process of its own, as
# Tests/e2e/timing.py's REAPER: on Linux a child's ru_maxrss starts from its parent's
# high-water mark when it execs, and the bench's (pytest's) is far above what `accounts` uses.
REAPER = r"""
import json, os, subprocess, sys, threading, time
timeout, report, output, *command = sys.argv[1:]
with open(output, "wb") as out:
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out)
    watchdog = threading.Timer(float(timeout), proc.kill)
    watchdog.start()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    watchdog.cancel()
with open(report, "w") as f:
    json.dump({"code": os.waitstatus_to_exitcode(status), "seconds": elapsed,
               "rss_kib": usage.ru_maxrss}, f)
"""


class Reaper:
    """Runs commands under the REAPER, keeping their wall times in the timer and their peak
    RSS here."""

    def __init__(self, work: pathlib.Path, timer: Timer, env: dict[str, str]) -> None:
        self.work = work
        self.timer = timer
        self.env = env
        self.rss: dict[str, list[int]] = {}

    def run(self, name: str, argv: list[str], env: dict[str, str] | None = None,
            output: str = os.devnull, record: bool = True) -> str:
        """Runs `argv`; fails unless it exits 0; returns its standard error."""
        report = self.work / "reaper.json"
        errors = self.work / "reaper.err"
        with open(errors, "wb") as err:
            subprocess.run([sys.executable, "-c", REAPER, "900", str(report), output, *argv],
                           env=env or self.env, stderr=err, check=True)
        result = json.loads(report.read_text())
        said = errors.read_text(errors="replace")
        code = result["code"]
        if code != 0:
            how = (f"was killed by {signal.Signals(-code).name}" if code < 0
                   else f"exited {code}")
            fail(f"{' '.join(argv[:4])} {how}: {said.strip()[:300]}")
        if record:
            self.timer.times.setdefault(name, []).append(result["seconds"])
            self.rss.setdefault(name, []).append(result["rss_kib"])
        return said

    def floor(self) -> None:
        """The floor of what the reaper can report: its own mark, which a child starts from."""
        self.run("floor", [shutil.which("true") or "/bin/true"])

    def peak_mib(self, name: str) -> float:
        return max(self.rss[name]) / 1024


def fresh_copy(source: pathlib.Path, folder: pathlib.Path) -> None:
    """`folder` made anew, holding a copy of the SQLite file `source` (and its -wal)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(mode=0o700)
    for suffix in ("", "-wal"):
        path = pathlib.Path(str(source) + suffix)
        if path.exists():
            shutil.copy2(path, folder / ("accounts.sqlite3" + suffix))


def shared_libraries(binary: str) -> tuple[int, list[str]]:
    try:
        out = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
    except OSError:
        return -1, []
    names = [line.split()[0] for line in out.splitlines()
             if line.strip() and not line.strip().startswith("linux-vdso")]
    return len(names), names


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def cpu_model() -> str:
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


class Report:
    """What the modules measured, printed once at the end of the run (conftest's
    pytest_terminal_summary): the plain sections, then the markdown table for
    docs/performance.md, then the notes under it and the line that says how the figures were
    made. Each part has an order key, so the report reads the same whichever modules ran and in
    whatever order."""

    def __init__(self, header: str, libraries: int) -> None:
        self.header = header
        self.libraries = libraries
        self.sections: list[tuple[int, list[str]]] = []
        self.rows: list[tuple[int, list[str]]] = []
        self.notes: list[tuple[int, str]] = []
        self.runs: list[tuple[int, str]] = []

    def section(self, order: int, lines: list[str]) -> None:
        self.sections.append((order, lines))

    def markdown(self, order: int, lines: list[str]) -> None:
        self.rows.append((order, lines))

    def note(self, order: int, line: str) -> None:
        self.notes.append((order, line))

    def run_count(self, order: int, phrase: str) -> None:
        self.runs.append((order, phrase))

    def empty(self) -> bool:
        return not self.sections

    def lines(self, command: str) -> list[str]:
        out = [self.header]
        for _, lines in sorted(self.sections, key=lambda s: s[0]):
            out += [""] + lines
        out += ["", "Markdown (the table of docs/performance.md):", "",
                "| Measurement | Median | Min | Ratio (median) | Target |",
                "|---|---:|---:|---:|---:|"]
        for _, lines in sorted(self.rows, key=lambda s: s[0]):
            out += lines
        for _, line in sorted(self.notes, key=lambda s: s[0]):
            out += ["", line]
        runs = ", ".join(phrase for _, phrase in sorted(self.runs, key=lambda s: s[0]))
        out += ["", f"Release build, {self.libraries} shared libraries; {NPROC} CPUs (`nproc`) "
                    f"{cpu_model()}, {platform.system()} {platform.release()}; runs alternated, "
                    f"{runs}, load average {load_average()} at the end; produced by "
                    f"`{command}`."]
        return out
