"""Through PgBouncer with the server stopped: PgBouncer accepts the connection and may hold the
first statement (up to its query_wait_timeout, then "connection lost"). The program waits for
the first answer no longer than it waits to connect, so a cached person logs in within seconds,
and a person the cache cannot answer for, or a host without a cache, is told in one sentence
that the server cannot be reached (exit 3) within seconds: never that the password is wrong.

Oracles: the exact lines and exit codes; which wait ended a command is told by its sentence,
never by the time it took (a busy machine takes longer)."""

import pytest

from cachehelp import server_away
from conftest import BOB, BOB_PASSWORD, FULL_NAME, USERNAME
from pgcluster import Client, Cluster, activate, cannot_connect_prefix, login
from pgserver import Pooler

pytestmark = pytest.mark.postgresql_only

INVALID = "Invalid user name or password!"


@pytest.fixture
def pooled(tmp_path):
    """A private cluster behind its own PgBouncer, a store activated through it, a client with
    a login cache that alice filled (one online login)."""
    cluster = Cluster.start()
    pooler = Pooler(cluster)
    try:
        database = cluster.create_database()
        client = Client(tmp_path / "host", pooler.uri(database))
        client.settings["ACCOUNTS_LOGIN_CACHE"] = str(tmp_path / "cache" / "login.sqlite3")
        activate(client)
        assert client.run("user", "add", "--username", BOB, "--full-name", "Bob B", "--email",
                          "bob@example.org", "--password-stdin", input=BOB_PASSWORD).code == 0
        assert client.run("store", "cache", "enable").code == 0
        assert login(client).code == 0
        yield cluster, client
    finally:
        pooler.remove()
        cluster.remove()


def test_a_cached_person_logs_in_within_seconds(pooled):
    cluster, client = pooled
    cluster.stop_server()
    result = login(client, env=client.env())
    assert (result.code, result.stderr) == (0, ""), result
    assert result.out_lines[0] == f"Welcome back {FULL_NAME}!", result


def test_a_stranger_and_a_host_without_cache_are_told_the_server_is_away(pooled):
    cluster, client = pooled
    cluster.stop_server()
    result = login(client, username=BOB, password=BOB_PASSWORD)
    assert (result.code, result.stdout) == (3, ""), result
    assert result.err_lines == [server_away(client.database)], result
    assert client.run("store", "cache", "disable").code == 0
    result = login(client)
    assert (result.code, result.stdout) == (3, ""), result
    assert len(result.err_lines) == 1 and INVALID not in result.stderr, result
    query = dict(part.split("=") for part in client.database.split("?")[1].split("&"))
    where = f"on the socket {query['host']} (port {query['port']})"
    assert result.err_lines[0].startswith(cannot_connect_prefix(where, client.database)), result
