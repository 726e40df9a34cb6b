"""`accounts store copy` writes the target in one transaction: a copy killed or terminated
part way leaves nothing on the target."""

import signal
import subprocess
import time

import pytest

from conftest import BIN, Result, form
from copyhelp import copied_line, copy, counts_of
from pgcluster import (Client, LOST_SUFFIX, assert_one_sentence, csv_of,  # noqa: F401
                       freeze_while_writing, lost_prefix, pg, pgdb)


# These tests name their stores themselves (PostgreSQL databases of their own, SQLite files),
# whatever ACCOUNTS_TEST_BACKEND says: they run once, in the postgresql run.
# On one worker under Scripts/test's `--dist loadgroup`:
# the big store it copies is made once, not once in each worker.
pytestmark = [pytest.mark.postgresql_only, pytest.mark.xdist_group("store_copy_cut_short")]


# One transaction on the target.

BIG = 10_000


@pytest.fixture(scope="module")
def big_sqlite(tmp_path_factory) -> Client:
    """An SQLite store of 10,001 accounts (imported from a CSV), slow enough to copy that a
    fault can land in the middle."""
    root = tmp_path_factory.mktemp("big")
    client = Client(root / "c", str(root / "db" / "accounts.sqlite3"))
    assert client.run("activate", input=form()).code == 0
    (root / "big.csv").write_text(csv_of(BIG))
    result = client.run("user", "import", str(root / "big.csv"), timeout=300)
    assert result.code == 0, result
    return client


def target_accounts(cluster, database) -> int:
    if "accounts" not in cluster.schemas(database) or "account" not in cluster.tables(database):
        return 0
    return int(cluster.value("SELECT count(*) FROM accounts.account", database))


@pytest.mark.parametrize("fault", ["SIGKILL", "terminate"])
def test_a_copy_cut_short_writes_nothing(pg, pgdb, big_sqlite, tmp_path, fault):
    """The copy to PostgreSQL is one transaction: the client killed (SIGKILL), or its
    connection terminated by the server, in the middle leaves no account and no event at the
    target (the terminated one says the connection was lost, exit 3); the same copy again then
    works, whole."""
    uri = pg.uri(pgdb)
    tool_client = Client(tmp_path / "tool")
    proc = subprocess.Popen([BIN, "store", "copy", "--from", big_sqlite.database, "--to", uri],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=tool_client.env(),
                            cwd=str(tool_client.root))
    try:
        pid = freeze_while_writing(pg, pgdb, proc, "copy")
        if fault == "SIGKILL":
            proc.kill()
        else:
            pg.psql(f"SELECT pg_terminate_backend({pid})")
            proc.send_signal(signal.SIGCONT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
            proc.kill()
            proc.wait()
    deadline = time.monotonic() + 10
    while pg.backends(pgdb) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert target_accounts(pg, pgdb) == 0
    if "audit_event" in pg.tables(pgdb):
        assert pg.value("SELECT count(*) FROM accounts.audit_event", pgdb) == "0"
    if fault == "terminate":
        result = Result(proc.returncode, stdout, stderr)
        assert_one_sentence(result, lost_prefix(uri), LOST_SUFFIX)
    result = copy(tool_client, big_sqlite.database, uri)
    assert (result.code, result.stdout, result.stderr) == (
        0, copied_line(big_sqlite.database, uri, counts_of(big_sqlite.database)), ""), result
    assert target_accounts(pg, pgdb) == BIG + 1
