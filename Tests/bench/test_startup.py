"""How fast `accounts` starts and reads the state, round robin (one unmeasured check each):

  status    vs `sqlite3 DB 'SELECT state FROM activation'` on the same file. Target: ≤ 1.2×
            (the earlier target, ≤ 1.5×, is reported beside it).
  --version vs the same sqlite3 run (start-up alone). Target: ≤ 1.3×.
  the program as Scripts/install installs it (stripped: objcopy --strip-all). Target: ≤ 20 MB
  (20,000,000 bytes);
  and, to show where the time of `status` goes: `/bin/true` (process start floor),
  `accounts status` on a missing file (start-up without opening a database), and the shared
  libraries the binary links (ldd)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

from .timing import fail, ms, ratio_line, shared_libraries, verdict

STATUS_TARGET = 1.2
EARLIER_STATUS_TARGET = 1.5
VERSION_TARGET = 1.3
SIZE_TARGET = 20_000_000


def test_status_and_start_up_beside_sqlite3(bench, alice):
    timer, options, binary = bench.timer, bench.options, bench.binary
    db = bench.env["ACCOUNTS_DATABASE"]
    select = ["sqlite3", db, "SELECT state FROM activation"]
    status = [binary, "status"]
    version = [binary, "--version"]
    # The same command and start-up, but the file does not exist: nothing is opened.
    no_database = [binary, "status", "--database", os.path.join(os.path.dirname(db), "none",
                                                                 "missing.sqlite3")]
    true = [shutil.which("true") or "/bin/true"]

    if timer.run("check", select, record=False).strip() != b"Activated":
        fail("sqlite3 did not read Activated")
    if b"Activated" not in timer.run("check", status, record=False):
        fail("status did not say Activated")
    timer.run("check", version, record=False)
    timer.run("check", no_database, record=False)

    for _ in range(options.fast_runs):
        timer.run("true", true)
        timer.run("version", version)
        timer.run("no-database", no_database)
        timer.run("status", status)
        timer.run("sqlite3", select)

    status_ratio, status_least = timer.ratios("status", "sqlite3")
    version_ratio, version_least = timer.ratios("version", "sqlite3")
    bench.report.section(20, [
        "Reading the state:",
        timer.row("accounts status", "status"),
        timer.row("sqlite3 DB 'SELECT state FROM activation'", "sqlite3"),
        ratio_line("status/sqlite3", status_ratio, status_least, STATUS_TARGET)
        + f"   (earlier target ≤ {EARLIER_STATUS_TARGET}: "
        f"{verdict(status_ratio <= EARLIER_STATUS_TARGET)})",
        timer.row("accounts --version", "version"),
        ratio_line("--version/sqlite3", version_ratio, version_least, VERSION_TARGET),
    ])
    floor, start, full = (timer.median(n) for n in ("true", "no-database", "status"))
    count, libraries = shared_libraries(binary)
    swift = sum(1 for n in libraries if n.startswith("libswift") or "Foundation" in n
                or n in ("libdispatch.so", "libBlocksRuntime.so"))
    bench.report.section(40, [
        "Where the time of `accounts status` goes (medians):",
        timer.row("/bin/true (process start floor)", "true"),
        timer.row("accounts status, no database file", "no-database"),
        timer.row("accounts status", "status"),
        timer.row("accounts --version", "version"),
        f"  process start {ms(floor)}; + loading and relocating the binary, Swift runtime, "
        f"environment {ms(start - floor)}; + opening and reading the database {ms(full - start)}",
        f"  ldd: {count} shared libraries ({swift} from the Swift toolchain): "
        + ", ".join(libraries),
    ])
    sqlite3_median = timer.median("sqlite3")
    bench.report.markdown(20, [
        f"| `accounts status` | {timer.cells('status')} | {status_ratio:.2f}× sqlite3 "
        f"| ≤ {STATUS_TARGET}× ({verdict(status_ratio <= STATUS_TARGET)}; earlier ≤ "
        f"{EARLIER_STATUS_TARGET}×: {verdict(status_ratio <= EARLIER_STATUS_TARGET)}) |",
        f"| `sqlite3 DB 'SELECT state FROM activation'` | {timer.cells('sqlite3')} | 1 | |",
        f"| `accounts status`, no database file (start-up only) | {timer.cells('no-database')} "
        f"| {start / sqlite3_median:.2f}× sqlite3 | |",
        f"| `accounts --version` | {timer.cells('version')} | {version_ratio:.2f}× sqlite3 "
        f"| ≤ {VERSION_TARGET}× |",
    ])
    bench.report.markdown(40, [
        f"| `/bin/true` (process start floor) | {timer.cells('true')} | | |",
    ])
    bench.report.run_count(20, f"{options.fast_runs} per fast command")


def test_installed_size(bench):
    """The stripped program's size beside the 20 MB target (what Scripts/install installs)."""
    with tempfile.TemporaryDirectory() as folder:
        stripped = os.path.join(folder, "accounts")
        subprocess.run(["objcopy", "--strip-all", bench.binary, stripped], check=True)
        size = os.path.getsize(stripped)
    built = os.path.getsize(bench.binary)
    bench.report.section(21, [
        "The installed program (stripped, as Scripts/install installs it):",
        f"  {size:,} bytes (built: {built:,})   target ≤ {SIZE_TARGET:,}: "
        f"{verdict(size <= SIZE_TARGET)}",
    ])
