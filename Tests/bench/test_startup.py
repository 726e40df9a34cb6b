"""How fast `accounts` starts and reads the state, against floors measured in the same run:

  the Glibc floor and the FoundationEssentials floor: two Swift programs that read the state's
            row through libsqlite3 and print it, importing nothing but Glibc, and that plus
            FoundationEssentials (one `ProcessInfo` read); a package of their own
            (Tests/bench/floors), built here once per run (cached in .build/bench-floors) with
            the release's flags, which this module checks against Package.swift's first.
  status    (with ACCOUNTS_DATABASE, and with `--database` on the command line, both where the
            usage line puts it and after `status`) vs the FoundationEssentials floor.
            Target: ≤ 1.05× each.
  --version vs the Glibc floor. Target: ≤ 1.05×.
  each of them, and the floors, also vs `sqlite3 DB 'SELECT state FROM activation'` on the same
            file; the earlier targets stay beside them: status ≤ 1.2× sqlite3 (≤ 1.5× before
            that), --version ≤ 1.3× sqlite3.
  the program as Scripts/install installs it (stripped: objcopy --strip-all). Target: ≤ 20 MB
  (20,000,000 bytes), ≤ 15 MB the stretch;
  and, to show where the time of `status` goes: `/bin/true` (process start floor),
  `accounts status` on a missing file (start-up without opening a database), and the shared
  libraries the binary links (ldd).

The commands run round robin (one unmeasured check each), the order reversed every other round
so that none always follows the same one; each ratio is of medians (of minimums beside it), to
three places against the floors, whose target is 5%."""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys

from .timing import fail, ms, ratio_line, say, shared_libraries, verdict

REPO = pathlib.Path(__file__).resolve().parents[2]
FLOORS = REPO / "Tests" / "bench" / "floors"
FLOORS_BUILD = REPO / ".build" / "bench-floors"

FLOOR_TARGET = 1.05  # status vs the FoundationEssentials floor, --version vs the Glibc floor
STATUS_TARGET = 1.2  # vs sqlite3
EARLIER_STATUS_TARGET = 1.5
VERSION_TARGET = 1.3  # vs sqlite3
SIZE_TARGET = 20_000_000
SIZE_STRETCH = 15_000_000


def release_flags(manifest: pathlib.Path) -> list[str]:
    """The quoted flags of a manifest's releaseSwiftSettings and releaseLinkerSettings, the
    library path's folder left out (each manifest names the Linker folder from where it is)."""
    text = manifest.read_text()
    flags = []
    for name in ("releaseSwiftSettings", "releaseLinkerSettings"):
        block = re.search(rf"let {name}: \[\w+\] = \[(.*?)\n\]", text, re.S)
        if block is None:
            fail(f"{manifest} has no {name}")
        flags += [f for f in re.findall(r'"([^"]*)"', block.group(1)) if "Linker" not in f]
    return flags


def build_floors() -> tuple[str, str]:
    """The two floor programs, built as the release is (a no-op when up to date)."""
    ours, theirs = release_flags(REPO / "Package.swift"), release_flags(FLOORS / "Package.swift")
    if ours != theirs:
        fail(f"Tests/bench/floors/Package.swift links with {theirs}, the release with {ours}: "
             "make them the same")
    command = ["swift", "build", "-c", "release", "--package-path", str(FLOORS),
               "--scratch-path", str(FLOORS_BUILD)]
    say(" ".join(command))
    result = subprocess.run(command, cwd=REPO, stdout=sys.stderr)
    folder = FLOORS_BUILD / "release"
    programs = (folder / "GlibcFloor", folder / "EssentialsFloor")
    if result.returncode != 0 or not all(p.exists() for p in programs):
        fail("the floor programs did not build (Tests/bench/floors)")
    return str(programs[0]), str(programs[1])


def test_status_and_start_up_beside_their_floors(bench, alice):
    timer, options, binary = bench.timer, bench.options, bench.binary
    db = bench.env["ACCOUNTS_DATABASE"]
    glibc_source, essentials_source = build_floors()
    floors = bench.work / "floors"
    floors.mkdir(mode=0o700)
    glibc, essentials = (str(floors / os.path.basename(p)) for p in (glibc_source,
                                                                      essentials_source))
    shutil.copy2(glibc_source, glibc)
    shutil.copy2(essentials_source, essentials)
    no_variable = {k: v for k, v in bench.env.items() if k != "ACCOUNTS_DATABASE"}
    # name, argv, environment (None: the bench's)
    commands = [
        ("true", [shutil.which("true") or "/bin/true"], None),
        ("sqlite3", ["sqlite3", db, "SELECT state FROM activation"], None),
        ("glibc-floor", [glibc, db], None),
        ("essentials-floor", [essentials, db], None),
        ("version", [binary, "--version"], None),
        ("status", [binary, "status"], None),
        ("status-database", [binary, "--database", db, "status"], no_variable),
        ("status-database-after", [binary, "status", "--database", db], no_variable),
        # The same command and start-up, but the file does not exist: nothing is opened.
        ("no-database", [binary, "status", "--database",
                         os.path.join(os.path.dirname(db), "none", "missing.sqlite3")], None),
    ]

    for name, argv, env in commands:
        out = timer.run("check", argv, record=False, env=env)
        if name in ("sqlite3", "glibc-floor", "essentials-floor") and out.strip() != b"Activated":
            fail(f"{name} did not read Activated: {out[:100]!r}")
        if name.startswith("status") and (b"Activated" not in out or db.encode() not in out):
            fail(f"{' '.join(argv[1:])} did not say Activated at {db}: {out[:200]!r}")

    for round_ in range(options.fast_runs):
        for name, argv, env in (commands if round_ % 2 == 0 else reversed(commands)):
            timer.run(name, argv, env=env)

    def against(name: str, floor: str, target: float | None, places: int = 2) -> str:
        ratio, least = timer.ratios(name, floor)
        if target is None:
            return f"  ratio {name}/{floor}: {ratio:.2f} (median), {least:.2f} (min)"
        return ratio_line(f"{name}/{floor}", ratio, least, target, places)

    def median_ratio(name: str, floor: str) -> float:
        return timer.ratios(name, floor)[0]

    status_names = ("status", "status-database", "status-database-after")
    labels = {
        "status": "accounts status (ACCOUNTS_DATABASE)",
        "status-database": "accounts --database DB status",
        "status-database-after": "accounts status --database DB",
        "version": "accounts --version",
        "glibc-floor": "Glibc floor (Swift, libsqlite3, print)",
        "essentials-floor": "FoundationEssentials floor (+ ProcessInfo)",
        "sqlite3": "sqlite3 DB 'SELECT state FROM activation'",
    }
    lines = ["Start-up against the floors (same run, same store):"]
    for name in ("sqlite3", "glibc-floor", "essentials-floor"):
        lines.append(timer.row(labels[name], name))
    lines += [against("glibc-floor", "sqlite3", None),
              against("essentials-floor", "sqlite3", None)]
    for name in status_names:
        lines += [timer.row(labels[name], name),
                  against(name, "essentials-floor", FLOOR_TARGET, 3),
                  against(name, "sqlite3", STATUS_TARGET)
                  + f"   (earlier target ≤ {EARLIER_STATUS_TARGET}: "
                  f"{verdict(median_ratio(name, 'sqlite3') <= EARLIER_STATUS_TARGET)})"]
    lines += [timer.row(labels["version"], "version"),
              against("version", "glibc-floor", FLOOR_TARGET, 3),
              against("version", "sqlite3", VERSION_TARGET)]
    bench.report.section(20, lines)

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

    def floor_cell(name: str, floor: str) -> str:
        ratio = median_ratio(name, floor)
        return f"≤ {FLOOR_TARGET}× ({verdict(ratio <= FLOOR_TARGET)})"

    markdown_labels = {
        "status": "`accounts status` (`ACCOUNTS_DATABASE`)",
        "status-database": "`accounts --database DB status`",
        "status-database-after": "`accounts status --database DB`",
    }
    rows = [
        f"| `sqlite3 DB 'SELECT state FROM activation'` | {timer.cells('sqlite3')} | 1 | |",
        f"| Glibc floor (Swift: libsqlite3 reads the row, print; Tests/bench/floors) | "
        f"{timer.cells('glibc-floor')} | {median_ratio('glibc-floor', 'sqlite3'):.2f}× sqlite3 "
        f"| |",
        f"| FoundationEssentials floor (the same + one `ProcessInfo` read) | "
        f"{timer.cells('essentials-floor')} | "
        f"{median_ratio('essentials-floor', 'sqlite3'):.2f}× sqlite3 | |",
    ]
    for name in status_names:
        to_sqlite3 = median_ratio(name, "sqlite3")
        rows.append(
            f"| {markdown_labels[name]} | {timer.cells(name)} | "
            f"{median_ratio(name, 'essentials-floor'):.3f}× the FoundationEssentials floor "
            f"({to_sqlite3:.2f}× sqlite3) | {floor_cell(name, 'essentials-floor')}; "
            f"≤ {STATUS_TARGET}× sqlite3 ({verdict(to_sqlite3 <= STATUS_TARGET)}; earlier "
            f"≤ {EARLIER_STATUS_TARGET}×: {verdict(to_sqlite3 <= EARLIER_STATUS_TARGET)}) |")
    version_to_sqlite3 = median_ratio("version", "sqlite3")
    rows += [
        f"| `accounts status`, no database file (start-up only) | {timer.cells('no-database')} "
        f"| {start / timer.median('sqlite3'):.2f}× sqlite3 | |",
        f"| `accounts --version` | {timer.cells('version')} | "
        f"{median_ratio('version', 'glibc-floor'):.3f}× the Glibc floor "
        f"({version_to_sqlite3:.2f}× sqlite3) | {floor_cell('version', 'glibc-floor')}; "
        f"≤ {VERSION_TARGET}× sqlite3 ({verdict(version_to_sqlite3 <= VERSION_TARGET)}) |",
    ]
    bench.report.markdown(20, rows)
    bench.report.markdown(40, [
        f"| `/bin/true` (process start floor) | {timer.cells('true')} | | |",
    ])
    bench.report.run_count(20, f"{options.fast_runs} per fast command")


def test_installed_size(bench, installed):
    """The stripped program's size beside the 20 MB target and the 15 MB stretch (what
    Scripts/install installs)."""
    size = os.path.getsize(installed)
    built = os.path.getsize(bench.binary)
    met = f"≤ {SIZE_TARGET:,}: {verdict(size <= SIZE_TARGET)}; stretch ≤ {SIZE_STRETCH:,}: " \
          f"{verdict(size <= SIZE_STRETCH)}"
    bench.report.section(21, [
        "The installed program (stripped, as Scripts/install installs it):",
        f"  {size:,} bytes (built: {built:,})   target {met}",
    ])
    bench.report.markdown(21, [
        f"| the installed program (stripped) | {size / 1e6:.1f} MB | | built {built / 1e6:.1f} MB "
        f"| ≤ 20 MB ({verdict(size <= SIZE_TARGET)}); stretch ≤ 15 MB "
        f"({verdict(size <= SIZE_STRETCH)}) |",
    ])
