"""The bench's options and shared fixtures: the binary under measurement (the release build,
made here as Scripts/run makes it, or $ACCOUNTS_BENCH_BIN), the private work folder, the first
store (alice, activated by the program), the program as installed (stripped), the PostgreSQL
server (Tests/support/pgserver.py), and the report printed at the end of the run.

Scripts/bench runs this package with pytest; `--smoke` runs every module with tiny counts, to
show the bench still works, not to measure anything.
"""

from __future__ import annotations

import os
import pathlib
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
from dataclasses import dataclass

import pgserver  # Tests/support, on the path by pytest.ini
import pytest

from .timing import (DEFAULT_ITERATIONS, NPROC, PASSWORD_LINE, Report, Timer, fail,
                     load_average, require, say, shared_libraries)

REPO = pathlib.Path(__file__).resolve().parents[2]
RELEASE = REPO / ".build" / "release" / "accounts"
REPORT = pytest.StashKey[Report]()

# name, default, help; an int each. The defaults are a full run's.
COUNTS = [
    ("runs", int(os.environ.get("ACCOUNTS_BENCH_RUNS", "15")),
     "runs of login and of openssl (default 15, or $ACCOUNTS_BENCH_RUNS)"),
    ("fast-runs", 60, "runs of each fast command (default 60)"),
    ("blocklist-runs", 20, "runs of each blocklist command (default 20)"),
    ("blocklist-lines", 3_000_000, "lines of the big blocklist (default 3,000,000)"),
    ("iterations", int(os.environ.get("ACCOUNTS_BENCH_ITERATIONS", str(DEFAULT_ITERATIONS))),
     "PBKDF2 iteration count (default 1,200,000, or $ACCOUNTS_BENCH_ITERATIONS)"),
    ("accounts", 1_000_000,
     "accounts in the big store (default 1,000,000; 0 leaves out its measurements)"),
    ("million-runs", 15, "runs of each login of the big-store/1-account pair (default 15)"),
    ("list-runs", 7, "runs of `user list --json` and of its sqlite3 query (default 7)"),
    ("add-runs", 15, "runs of each `user add` and of `activate` (default 15)"),
    ("import-count", 1_000_000,
     "users in the csv file (default 1,000,000; 0 leaves out the import)"),
    ("import-runs", 3, "runs of the import and of each sqlite3 `.import`, and of each memory "
                       "import (default 3; no warm-up: each run starts from fresh copies)"),
    ("memory-users", 200_000, "users in the Django dump of the memory rows (default 200,000, "
                              "about 80 MiB; 0 leaves the memory rows out); the csv has M / 200 "
                              "records"),
    ("memory-lines", 1_000, "lines of each record's quoted field in that csv (default 1,000)"),
    ("postgres-runs", 15, "runs of each login of the PostgreSQL/SQLite pair (default 15; 0 "
                          "leaves the PostgreSQL rows out)"),
    ("concurrent-logins", 100, "logins of each concurrent round (default 100)"),
    ("clients", 4, "concurrent clients (default 4)"),
    ("concurrent-rounds", 4, "rounds on each store at each cost (default 4; even: A B B A …)"),
    ("latency-runs", 200, "runs of each latency command at 1,000 iterations (default 200; 0 "
                          "leaves the latency rows out)"),
    ("latency-default-runs", 50, "runs of each latency command at the default cost (default 50)"),
    ("userdb-accounts", 100_000, "accounts of the store keeping user records (default 100,000; 0 "
                                 "leaves the user record rows out)"),
    ("userdb-runs", 5, "runs of each user record command (default 5)"),
    ("throughput-logins", 400, "logins of each throughput row at 1,000 iterations (default 400; "
                               "a tenth of it at the default cost)"),
]

# What --smoke runs with: every module, every check, in seconds (not figures to read).
SMOKE = {"runs": 1, "fast_runs": 1, "blocklist_runs": 1, "blocklist_lines": 1_000,
         "iterations": 1_000, "accounts": 10, "million_runs": 1, "list_runs": 1, "add_runs": 1,
         "import_count": 10, "import_runs": 1, "memory_users": 200, "memory_lines": 3,
         "postgres_runs": 1, "concurrent_logins": 2, "clients": 2, "concurrent_rounds": 1,
         "latency_runs": 1, "latency_default_runs": 1, "throughput_logins": 4,
         "userdb_accounts": 20, "userdb_runs": 1}

# The module left out when its count (or one of its counts) is 0.
LEFT_OUT_BY = {"test_big_store.py": ("accounts",), "test_import.py": ("import_count",),
               "test_import_memory.py": ("memory_users",), "test_postgres.py": ("postgres_runs",),
               "test_offline.py": ("postgres_runs",),
               "test_postgres_code.py": ("postgres_runs",),
               "test_postgres_import.py": ("import_count", "postgres_runs"),
               "test_latency.py": ("latency_runs",), "test_userdb_scale.py": ("userdb_accounts",)}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("bench", "the bench's counts (Tests/bench)")
    for name, default, text in COUNTS:
        group.addoption(f"--{name}", type=int, default=default, help=text)
    group.addoption("--smoke", action="store_true",
                    help="tiny counts for every module: checks that the bench works, measures "
                         "nothing worth reading")


def pytest_configure(config: pytest.Config) -> None:
    o = config.option
    if o.smoke:
        for name, value in SMOKE.items():
            setattr(o, name, value)
    if min(o.runs, o.fast_runs, o.blocklist_runs, o.million_runs, o.list_runs, o.add_runs,
           o.import_runs, o.concurrent_rounds, o.latency_default_runs, o.throughput_logins) < 1 \
            or o.iterations < 1000:
        raise pytest.UsageError("every --...-runs must be at least 1, --iterations at least 1000")
    if o.postgres_runs < 0:
        raise pytest.UsageError("--postgres-runs must be 0 (left out) or more")
    if o.latency_runs < 0:
        raise pytest.UsageError("--latency-runs must be 0 (left out) or more")
    if not 1 <= o.clients <= 64 or o.concurrent_logins < o.clients:
        raise pytest.UsageError("--clients must be 1 to 64, --concurrent-logins at least --clients")
    if o.accounts != 0 and o.accounts < 10:
        raise pytest.UsageError("--accounts must be 0 (left out) or at least 10")
    if o.import_count != 0 and not 10 <= o.import_count <= 10_000_000:
        raise pytest.UsageError("--import-count must be 0 (left out) or 10 to 10,000,000")
    if o.memory_users != 0 and not 200 <= o.memory_users <= 10_000_000:
        raise pytest.UsageError("--memory-users must be 0 (left out) or 200 to 10,000,000")
    if not 1 <= o.memory_lines <= 100_000:
        raise pytest.UsageError("--memory-lines must be 1 to 100,000")
    if o.blocklist_lines < 1:
        raise pytest.UsageError("--blocklist-lines must be at least 1")

    # A stopped bench still stops its PostgreSQL server and removes its folder: pytest runs the
    # fixtures' teardown after an interrupt.
    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)


# The order the modules run in, as the one script ran them: the quick pairs first, before the
# big files are made.
ORDER = ["test_login.py", "test_pam_module.py", "test_latency.py", "test_startup.py", "test_blocklist.py", "test_big_store.py",
         "test_import.py", "test_import_memory.py", "test_postgres.py", "test_postgres_import.py"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The modules in ORDER; a count of 0 leaves its module out (deselected, as `-k` would)."""
    items.sort(key=lambda item: ORDER.index(item.path.name) if item.path.name in ORDER
               else len(ORDER))
    kept, left = [], []
    for item in items:
        options = LEFT_OUT_BY.get(item.path.name, ())
        out = any(getattr(config.option, option) == 0 for option in options)
        (left if out else kept).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept


@dataclass
class Bench:
    """What every module measures with: the counts, the private folder, the copied binary and
    the environment of every command (this folder only), one timer, the report."""
    options: object
    work: pathlib.Path
    source: pathlib.Path
    binary: str
    env: dict[str, str]
    timer: Timer
    report: Report


def binary_to_measure() -> pathlib.Path:
    """$ACCOUNTS_BENCH_BIN as it is, else the release build, made exactly as Scripts/run makes
    it (`swift build -c release`; the flags live in Package.swift; a no-op when up to date)."""
    given = os.environ.get("ACCOUNTS_BENCH_BIN")
    if given:
        path = pathlib.Path(given)
        if not os.access(path, os.X_OK):
            fail(f"ACCOUNTS_BENCH_BIN={given} is not an executable file")
        return path
    command = ["swift", "build", "-c", "release", "--product", "accounts"]
    say(" ".join(command))
    result = subprocess.run(command, cwd=REPO, stdout=sys.stderr)
    if result.returncode != 0 or not RELEASE.exists():
        fail("the release build failed")
    return RELEASE


@pytest.fixture(scope="session")
def bench(request: pytest.FixtureRequest):
    """A private folder, with a copy of the binary (a rebuild meanwhile cannot change the binary
    under measurement); removed after the run."""
    options = request.config.option
    require("sqlite3")
    source = binary_to_measure()
    work = pathlib.Path(tempfile.mkdtemp(prefix="accounts-bench-"))
    try:
        binary = str(work / "accounts")
        shutil.copy2(source, binary)
        env = {k: v for k, v in os.environ.items() if not k.startswith("ACCOUNTS_")}
        env.update(HOME=str(work), TZ="UTC", ACCOUNTS_DATABASE=str(work / "accounts.sqlite3"),
                   ACCOUNTS_PBKDF2_ITERATIONS=str(options.iterations))
        report = Report(f"bench: {source} (copied), {options.iterations:,} iterations; nproc "
                        f"{NPROC}, load average {load_average()} at the start",
                        shared_libraries(binary)[0])
        request.config.stash[REPORT] = report
        yield Bench(options, work, source, binary, env, Timer(env), report)
    finally:
        shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="session")
def installed(bench: Bench) -> str:
    """The program as Scripts/install installs it (`objcopy --strip-all` of the binary under
    measurement), in the bench's folder: the size row's subject and the PAM rows' helper."""
    require("objcopy")
    path = bench.work / "installed" / "accounts"
    path.parent.mkdir(mode=0o700)
    subprocess.run(["objcopy", "--strip-all", bench.binary, str(path)], check=True)
    return str(path)


@pytest.fixture(scope="session")
def alice(bench: Bench) -> str:
    """The store of one account (alice, the owner), activated by the program in the bench's
    environment; returns her stored password hash."""
    bench.timer.run("setup", [bench.binary, "activate", "--username", "alice", "--full-name",
                              "Alice Liddell", "--email", "alice@example.org",
                              "--password-stdin"], PASSWORD_LINE, record=False)
    con = sqlite3.connect(f"file:{bench.env['ACCOUNTS_DATABASE']}?mode=ro", uri=True)
    try:
        tables = {row[0] for row in con.execute("SELECT name FROM sqlite_master")}
        (stored,) = con.execute(  # schema v2 keeps accounts in `account`, v1 its one user in `user`
            f"SELECT password_hash FROM {'account' if 'account' in tables else 'user'}"
            " WHERE username_key = 'alice'").fetchone()
    finally:
        con.close()
    return stored


@pytest.fixture(scope="session")
def pg_server():
    """A private durable PostgreSQL cluster (`Scripts/postgres start DIR --durable`: fsync and
    synchronous_commit on, as SQLite's synchronous=FULL), stopped and removed after the run."""
    try:
        server = pgserver.Server.start(durable=True, prefix="accounts-bench-pg-")
    except pgserver.ServerError as error:
        fail(f"the PostgreSQL cluster: {error}")
    try:
        yield server
    finally:
        server.remove()


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    """The report, after every module ran: the plain figures and the markdown table."""
    report = config.stash.get(REPORT, None)
    if report is None or report.empty():
        return
    command = os.environ.get("ACCOUNTS_BENCH_COMMAND") or "python3 -m pytest " + " ".join(
        shlex.quote(a) for a in config.invocation_params.args)
    terminalreporter.write_sep("=", "bench report")
    for line in report.lines(command):
        terminalreporter.write_line(line)
