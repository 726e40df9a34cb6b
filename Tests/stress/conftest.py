"""Fixtures of the stress suite: the binary under test, a sandbox per test, the knobs, and the
PostgreSQL server of the tests across hosts (Tests/support/pgserver.py).

The binary is ACCOUNTS_BIN (default <repo>/.build/release/accounts, the program that ships), run
from a private copy so that a rebuild of the original meanwhile (ETXTBSY, or a newer binary
halfway through) cannot disturb the run; its libraries are found by absolute paths.

The PostgreSQL tests never use a server they were given (PG* variables are dropped from every
client's environment): each pytest process (each xdist worker) starts a private cluster of its
own (`Scripts/postgres start` in a temporary folder, stopped and removed at the end) and every
test makes fresh databases in it; the test that stops the server starts one more, its own.

Knobs (environment): STRESS_SEED fixes the random choices (default: the time; the seed is in
the header and in every message that depends on it); the round counts below raise or lower
how much each test repeats what it proves.
"""

from __future__ import annotations

import os
import pathlib
import random
import shutil
import tempfile
import time
from dataclasses import dataclass

import pytest

import runner
from hosts import FLEET_ADMIN, FLEET_HOST, Hosts
from pg_store import PgContext, new_database
from pgserver import PooledServer, Pooler, Server


REPO = pathlib.Path(__file__).resolve().parents[2]


# One seed for the whole run: set here, in the first process, before pytest-xdist starts its
# workers, which inherit the environment.
os.environ.setdefault("STRESS_SEED", str(int(time.time())))


def knob(name: str, default: int) -> int:
    return int(os.environ.get(name, str(default)))


@dataclass(frozen=True)
class Knobs:
    seed: int = knob("STRESS_SEED", 0)
    kill_runs: int = knob("STRESS_KILL_RUNS", 30)  # killed commands (SQLite)
    account_kill_runs: int = knob("STRESS_ACCOUNT_KILL_RUNS", 30)  # killed account changes
    passwd_rounds: int = knob("STRESS_PASSWD_ROUNDS", 16)  # passwd racing login
    upgrade_rounds: int = knob("STRESS_UPGRADE_ROUNDS", 6)  # killed upgrade
    factor_race_rounds: int = knob("STRESS_FACTOR_RACE_ROUNDS", 2)  # TOTP code race
    factor_kill_runs: int = knob("STRESS_FACTOR_KILL_RUNS", 40)  # killed second factor
    activation_rounds: int = knob("STRESS_ACTIVATION_ROUNDS", 2)  # activation race, each kind
    shell_rounds: int = knob("STRESS_SHELL_ROUNDS", 8)  # activation race started by /bin/sh
    pg_kill_runs: int = knob("STRESS_PG_KILL_RUNS", 12)  # killed PostgreSQL clients
    pg_import_rows: int = knob("STRESS_PG_IMPORT_ROWS", 1000)  # rows of each killed import
    pg_stop_rounds: int = knob("STRESS_PG_STOP_ROUNDS", 3)  # server stopped (the 3rd immediate)
    pg_factor_race_rounds: int = knob("STRESS_PG_FACTOR_RACE_ROUNDS", 2)  # code race, hosts


KNOBS = Knobs()


def pytest_report_header(config) -> str:
    return (f"stress: seed {KNOBS.seed} (STRESS_SEED), binary "
            f"{os.environ.get('ACCOUNTS_BIN') or REPO / '.build/release/accounts'}")


@pytest.fixture(scope="session")
def knobs() -> Knobs:
    return KNOBS


@pytest.fixture(scope="session", autouse=True)
def binary():
    """A private copy of the binary under test, in runner.BIN for every helper."""
    original = os.environ.get("ACCOUNTS_BIN") or str(REPO / ".build" / "release" / "accounts")
    assert os.access(original, os.X_OK), (
        f"no executable at {original}; build it with `swift build --product accounts` or set "
        "ACCOUNTS_BIN")
    # The programs that hold the database here stand for other `accounts` processes, which
    # keep every file they make private (accounts refuses a -journal or -wal others may read).
    os.umask(0o077)
    folder = pathlib.Path(tempfile.mkdtemp(prefix="accounts-stress-bin-"))
    copy = folder / "accounts"
    shutil.copy2(original, copy)
    runner.BIN = str(copy)
    yield str(copy)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def box():
    """A temporary HOME with its own databases, removed after the test."""
    sandbox = runner.Sandbox()
    yield sandbox
    sandbox.remove()


def takes_postgresql(server: Server, box: runner.Sandbox) -> None:
    """The binary takes a PostgreSQL store: `status` on an empty database says 'State: Public'
    and names the URI."""
    hosts = Hosts(box, server)
    _, uri = new_database(server, "preflight")
    r = hosts.run(hosts.host("host-00"), ["status"], uri)
    assert r.code == 0 and "State: Public" in r.stdout and f"\nDatabase: {uri}" in r.stdout, (
        f"`status --database postgresql://…` on an empty database: {r.brief()}")


@pytest.fixture(scope="session")
def pg_server(binary):
    """This pytest process's own cluster, shared by its PostgreSQL tests (a database each)."""
    server = Server.start(prefix="accounts-stress-pg-")
    try:
        sandbox = runner.Sandbox()
        try:
            takes_postgresql(server, sandbox)
        finally:
            sandbox.remove()
        yield server
    finally:
        server.remove()


@pytest.fixture(scope="session")
def pg_pooler(pg_server):
    """PgBouncer in transaction pooling mode in front of this process's cluster."""
    pooler = Pooler(pg_server, roles=(FLEET_ADMIN, FLEET_HOST))
    try:
        yield pooler
    finally:
        pooler.remove()


@pytest.fixture(params=["direct", "pgbouncer"])
def pg(request, pg_server, box, knobs) -> PgContext:
    """The shared cluster, and hosts whose homes are in this test's sandbox. Each test runs
    twice: with the hosts connected to the server, then through PgBouncer in transaction
    pooling mode (how fleets are run: a host's transactions each on any server connection),
    the oracles still reading the server itself."""
    server = pg_server
    if request.param == "pgbouncer":
        server = PooledServer(pg_server, request.getfixturevalue("pg_pooler"))
    hosts = Hosts(box, pg_server)
    print(f"hosts: {hosts.mode}; {request.param}")
    return PgContext(server, hosts, random.Random(knobs.seed))


@pytest.fixture
def own_pg(binary, box, knobs):
    """A cluster of this test's own (a test that stops its server must not stop its
    neighbours'), durable (fsync and synchronous commits on): an immediate stop is a crash to
    the server, and without them it loses commits it had acknowledged, even ones made before
    the round began, which the test would take for the program's fault."""
    server = Server.start(durable=True, prefix="accounts-stress-pg-")
    try:
        hosts = Hosts(box, server)
        print(f"hosts: {hosts.mode}")
        yield PgContext(server, hosts, random.Random(knobs.seed))
    finally:
        server.remove()


def pytest_terminal_summary(terminalreporter) -> None:
    terminalreporter.write_line(f"stress: seed {KNOBS.seed} (STRESS_SEED={KNOBS.seed} repeats "
                                "the random choices)")
