"""Shared fixtures for the end-to-end tests of the `accounts` binary.

Every test gets its own `Device`: a temporary HOME, XDG_DATA_HOME and database, TZ=UTC and (unless
a test asks for the real count) ACCOUNTS_PBKDF2_ITERATIONS=1000 so new hashes are cheap.

The store is chosen by ACCOUNTS_TEST_BACKEND: `sqlite` (the default) gives every device
a database file; `postgresql` gives it a fresh database on the cluster the PG* variables name
(`eval "$(Scripts/postgres env DIR)"`), created at setup and dropped at teardown, and named to the
binary as `postgresql:///acc_<random>` (libpq takes the host, port and user from PG*): a copy of
a template in which the program made its schema once, with an identity of its own, or an empty
database for the tests marked `empty_database` (about a store not made yet). Tests about
the SQLite file itself are marked `sqlite_only` and deselected in a postgresql run (never skipped).
`pgbouncer` is the postgresql run through the pooler; `pgroles` is the postgresql run with the
program connecting as a fleet's roles (`accounts store roles`): the commands a host may run as
the host role, the others as the administrator role, the owner only to make or upgrade the
schema (Tests/support/fleet.py's HOST_COMMANDS, stores.py's PostgresStore.program_role); `pgfleet`
is both at once, the run Scripts/test makes (constants.py).

The helpers live in modules by subject beside this file: constants.py (the binary, the store, the
sample accounts and sentences), stores.py (the SQLite file or PostgreSQL database and reads and
writes on it), device.py (Device and Result), forms.py (typing into the program), timing.py
(CPU seconds and peak memory). This file holds the fixtures and the pytest hooks.
"""

from __future__ import annotations

import os

import pytest

# The test files import these names from here (`from conftest import X`).
from constants import (
    AS_ROOT, BACKEND, BIN, BOB, BOB_EMAIL, BOB_FULL_NAME, BOB_PASSWORD, DEFAULT_ITERATIONS, EMAIL,
    EMAIL_RULE, FAST_ITERATIONS, FILL, FULL_NAME, INPUT_ENDED, INVALID, MATCH, NEW_PASSWORD,
    NOBODY, NOBODY_UID, NOT_ACTIVATED, PASSWORD, PERSONAL, POOLED, POSTGRESQL, REPO, ROLES, SHORT,
    TOO_MANY, USERNAME, USERNAME_RULE, WRONG_PASSWORD, nobody_binary, program_server)
from device import Device, Result, changed_env, with_program_role
from forms import answer, answer_secret, ctrl_c_at_secret, finish, form, pty_echo, screen
from stores import (
    _CREATED, CLUSTER, PostgresCluster, PostgresStore, new_store, stamp_text, store_execute,
    store_query)
from timing import REAPER, TIMING_BIN, cpu_seconds

__all__ = [
    "AS_ROOT", "BACKEND", "BIN", "BOB", "BOB_EMAIL", "BOB_FULL_NAME", "BOB_PASSWORD",
    "DEFAULT_ITERATIONS", "EMAIL", "EMAIL_RULE", "FAST_ITERATIONS", "FILL", "FULL_NAME",
    "INPUT_ENDED", "INVALID", "MATCH", "NEW_PASSWORD", "NOBODY", "NOBODY_UID", "NOT_ACTIVATED",
    "PASSWORD", "PERSONAL", "POSTGRESQL", "REPO", "SHORT", "TOO_MANY", "USERNAME", "USERNAME_RULE",
    "WRONG_PASSWORD", "nobody_binary",
    "Device", "Result", "changed_env", "with_program_role",
    "answer", "answer_secret", "ctrl_c_at_secret", "finish", "form", "pty_echo", "screen",
    "CLUSTER", "PostgresCluster", "PostgresStore", "new_store", "stamp_text", "store_execute",
    "store_query",
    "REAPER", "TIMING_BIN", "cpu_seconds",
]


@pytest.fixture(autouse=True)
def _drop_test_databases(request):
    """Drops every PostgreSQL database the test made (its devices' and new_store's), whatever
    its clients left connected."""
    CLUSTER.empty = request.node.get_closest_marker("empty_database") is not None
    yield
    while _CREATED:
        CLUSTER.drop(_CREATED.pop())


@pytest.fixture
def device(tmp_path) -> Device:
    return Device(tmp_path)


@pytest.fixture
def activated(device) -> Device:
    device.activate()
    return device


@pytest.fixture(scope="session")
def django_hashers():
    """Django's password hashers, with a minimal settings module."""
    import django
    from django.conf import settings

    if not settings.configured:
        settings.configure(
            PASSWORD_HASHERS=["django.contrib.auth.hashers.PBKDF2PasswordHasher"],
            INSTALLED_APPS=[], USE_TZ=True)
        django.setup()
    from django.contrib.auth import hashers

    return hashers



@pytest.fixture(scope="session", autouse=True)
def binary_exists():
    assert os.access(BIN, os.X_OK), f"accounts binary not found at {BIN}; set ACCOUNTS_BIN"


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "sqlite_only: about the SQLite file itself (its modes, -wal/-shm, upgrades, "
        "the key beside it…); deselected when ACCOUNTS_TEST_BACKEND=postgresql")
    config.addinivalue_line(
        "markers", "postgresql_only: about PostgreSQL itself (tests that make their own "
        "databases on the cluster); deselected when ACCOUNTS_TEST_BACKEND=sqlite, so that they "
        "run once")
    config.addinivalue_line(
        "markers", "every_postgresql_run: about a store on the shared cluster that the test "
        "makes and reaches itself, as the owner and as the run's roles through its pooler where "
        "the run has them; deselected when ACCOUNTS_TEST_BACKEND=sqlite, kept in every "
        "PostgreSQL run")
    config.addinivalue_line(
        "markers", "empty_database: in a PostgreSQL run the test's stores start as empty "
        "databases (the program makes its schema at the first write), not as copies of the "
        "schema the program made once: the tests about that first use")
    config.addinivalue_line(
        "markers", "front_end: about what the program does before and after its store (arguments, "
        "the terminal, input and its refusals, signals, start-up, the cost of an answer, the "
        "install): the same code whichever store is named, so it runs once, in the sqlite run")


def pytest_collection_modifyitems(config, items):
    """A postgresql run deselects the sqlite_only and front_end tests, an sqlite run the
    postgresql_only and every_postgresql_run ones (pytest reports how many): they are not skipped,
    they do not apply to that store, or were run on the other one."""
    def elsewhere(item) -> bool:
        if not POSTGRESQL:
            return any(item.get_closest_marker(name)
                       for name in ("postgresql_only", "every_postgresql_run"))
        if item.get_closest_marker("every_postgresql_run"):
            return False
        if item.get_closest_marker("postgresql_only"):
            # A front end's test about PostgreSQL itself runs in the postgresql run; the pooled
            # and roles runs leave them out: they make clusters, URIs and roles of their own.
            return POOLED or ROLES
        return any(item.get_closest_marker(name) for name in ("sqlite_only", "front_end"))

    kept, dropped = [], []
    for item in items:
        (dropped if elsewhere(item) else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def pytest_report_header(config):
    host, port = program_server(os.environ.get('PGHOST', '?'), os.environ.get('PGPORT', '?'))
    where = f" ({host}, port {port})" if POSTGRESQL else ""
    return f"accounts store: {BACKEND}{where}"


@pytest.fixture(scope="session", autouse=True)
def postgresql_reachable():
    """In a postgresql run, the cluster answers before any test starts."""
    if POSTGRESQL:
        assert CLUSTER.admin().execute("SELECT 1").fetchone() == (1,), \
            "no PostgreSQL cluster: eval \"$(Scripts/postgres env DIR)\" first"
    if ROLES:
        CLUSTER.make_roles()
    yield
    if POSTGRESQL:
        CLUSTER.drop_template()
    if CLUSTER._admin is not None:
        CLUSTER._admin.close()
