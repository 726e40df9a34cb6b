"""`accounts store copy` refusals: a target that is not empty (both ways), a missing source,
the same store on both sides, both ends required, a target with someone else's schema, a source
written by a newer version; and a copy adds no audit event."""

import json

import pytest

from conftest import form
from copyhelp import (CAROL, CAROL_PASSWORD, DAVE, DAVE_PASSWORD, add_user, copy, small_sqlite,
                      sqlite_everything, sqlite_rows)
from pgcluster import Client, NEWER, assert_clean, dump_accounts_schema, pg, pgdb  # noqa: F401


# These tests name their stores themselves (PostgreSQL databases of their own, SQLite files),
# whatever ACCOUNTS_TEST_BACKEND says: they run once, in the postgresql run.
pytestmark = pytest.mark.postgresql_only


# Refusals.

def not_empty(dst, accounts, events) -> str:
    return (f"Cannot copy to {dst}: it is not empty (it holds {accounts} accounts and {events} "
            "audit events). Copy only into a new store.\n")


def test_refuses_a_postgresql_target_that_is_not_empty(pg, pgdb, tmp_path):
    """A PostgreSQL target that already holds a store: exit 1, the sentence with its counts,
    nothing written there (every row and sequence as before) nor at the source."""
    source = small_sqlite(tmp_path / "src")
    target = Client(tmp_path / "dst", pg.uri(pgdb))
    assert target.run("activate", input=form()).code == 0
    add_user(target, CAROL, CAROL_PASSWORD)
    add_user(target, DAVE, DAVE_PASSWORD)
    events = int(pg.value("SELECT count(*) FROM accounts.audit_event", pgdb))
    before = dump_accounts_schema(pg, pgdb)
    source_before = sqlite_everything(source.database)
    result = copy(Client(tmp_path / "tool"), source.database, target.database)
    assert (result.code, result.stdout, result.stderr) == (
        1, "", not_empty(target.database, 3, events)), result
    assert dump_accounts_schema(pg, pgdb) == before
    assert sqlite_everything(source.database) == source_before


def test_refuses_a_public_target_that_kept_its_log(pg, pgdb, tmp_path):
    """A target made Public again by reset keeps its audit log: still not empty (0 accounts,
    2 audit events), exit 1, nothing written."""
    source = small_sqlite(tmp_path / "src")
    target = Client(tmp_path / "dst", pg.uri(pgdb))
    assert target.run("activate", input=form()).code == 0
    assert target.run("reset", "--yes").code == 0
    before = dump_accounts_schema(pg, pgdb)
    result = copy(Client(tmp_path / "tool"), source.database, target.database)
    assert (result.code, result.stdout, result.stderr) == (
        1, "", not_empty(target.database, 0, 2)), result
    assert dump_accounts_schema(pg, pgdb) == before


def test_refuses_an_sqlite_target_that_is_not_empty(pg, pgdb, tmp_path):
    """PostgreSQL → an SQLite file that holds a store: exit 1, the file's rows unchanged."""
    source = Client(tmp_path / "src", pg.uri(pgdb))
    assert source.run("activate", input=form()).code == 0
    target = small_sqlite(tmp_path / "dst")
    add_user(target, CAROL, CAROL_PASSWORD)
    events = sqlite_rows(target.database, "SELECT count(*) FROM audit_event")[0][0]
    before = sqlite_everything(target.database)
    result = copy(Client(tmp_path / "tool"), source.database, target.database)
    assert (result.code, result.stdout, result.stderr) == (
        1, "", not_empty(target.database, 3, events)), result
    assert sqlite_everything(target.database) == before


def assert_no_source(result, src):
    """Exit 1 and the noDatabase sentence naming SRC (as every administrator command says it)."""
    assert (result.code, result.stdout) == (1, ""), result
    assert len(result.err_lines) == 1, result
    line = result.err_lines[0]
    assert line == (f"No database exists at {src}; nothing was changed. Check --database or "
                    "ACCOUNTS_DATABASE."), result
    assert_clean(result.stderr)


def test_missing_source(pg, pgdb, tmp_path):
    """No file at the SQLite source: exit 1, nothing made at the PostgreSQL target (no schema);
    a PostgreSQL source without the schema: exit 1, no file made at the SQLite target."""
    tool_client = Client(tmp_path / "tool")
    missing = tmp_path / "none" / "accounts.sqlite3"
    result = copy(tool_client, str(missing), pg.uri(pgdb))
    assert_no_source(result, missing)
    assert "accounts" not in pg.schemas(pgdb)
    assert not missing.exists()
    target = tmp_path / "t" / "accounts.sqlite3"
    result = copy(tool_client, pg.uri(pgdb), str(target))
    assert_no_source(result, pg.uri(pgdb))
    assert not target.exists()
    assert "accounts" not in pg.schemas(pgdb)


def test_same_source_and_target(pg, pgdb, tmp_path):
    """The same store on both sides: exit 2 (usage), nothing changed."""
    source = small_sqlite(tmp_path / "src")
    before = sqlite_everything(source.database)
    tool_client = Client(tmp_path / "tool")
    result = copy(tool_client, source.database, source.database)
    assert (result.code, result.stdout) == (2, ""), result
    assert len(result.err_lines) >= 1, result
    assert sqlite_everything(source.database) == before
    uri = pg.uri(pgdb)
    assert Client(tmp_path / "pg", uri).run("activate", input=form()).code == 0
    pg_before = dump_accounts_schema(pg, pgdb)
    result = copy(tool_client, uri, uri)
    assert (result.code, result.stdout) == (2, ""), result
    assert dump_accounts_schema(pg, pgdb) == pg_before


@pytest.mark.parametrize("missing", ["--from", "--to"])
def test_both_ends_are_required(tmp_path, missing):
    """`store copy` without --from or without --to: exit 2, nothing made."""
    tool_client = Client(tmp_path / "tool")
    given = {"--from": str(tmp_path / "a.sqlite3"), "--to": str(tmp_path / "b.sqlite3")}
    given.pop(missing)
    args = [part for pair in given.items() for part in pair]
    result = tool_client.run("store", "copy", *args)
    assert (result.code, result.stdout) == (2, ""), result
    assert not (tmp_path / "a.sqlite3").exists() and not (tmp_path / "b.sqlite3").exists()


def test_copy_adds_no_audit_event(pg, pgdb, tmp_path):
    """The copy adds no event at either end (the target equals the source)."""
    source = small_sqlite(tmp_path / "src")
    events = sqlite_rows(source.database, "SELECT count(*) FROM audit_event")[0][0]
    uri = pg.uri(pgdb)
    assert copy(Client(tmp_path / "tool"), source.database, uri).code == 0
    assert sqlite_rows(source.database, "SELECT count(*) FROM audit_event")[0][0] == events
    assert pg.value("SELECT count(*) FROM accounts.audit_event", pgdb) == str(events)
    assert json.loads(Client(tmp_path / "v", uri).run("status", "--json").stdout)[
        "state"] == "Activated"


def test_refuses_a_target_with_someone_elses_schema(pg, pgdb, tmp_path):
    """A PostgreSQL target whose schema `accounts` another program made: exit 3, its table
    untouched and nothing added."""
    source = small_sqlite(tmp_path / "src")
    pg.psql("CREATE SCHEMA accounts; CREATE TABLE accounts.orders (id int); "
            "INSERT INTO accounts.orders VALUES (7)", pgdb)
    before = dump_accounts_schema(pg, pgdb)
    result = copy(Client(tmp_path / "tool"), source.database, pg.uri(pgdb))
    assert (result.code, result.stdout) == (3, ""), result
    assert len(result.err_lines) == 1 and pg.uri(pgdb) in result.stderr, result
    assert_clean(result.stderr)
    assert pg.tables(pgdb) == ["orders"]
    assert dump_accounts_schema(pg, pgdb) == before


def test_refuses_a_source_written_by_a_newer_version(pg, pgdb, tmp_path):
    """A PostgreSQL source with a migration this build does not know: exit 3 with the newer-
    version sentence naming it, and no file is made at the SQLite target."""
    source = Client(tmp_path / "src", pg.uri(pgdb))
    assert source.run("activate", input=form()).code == 0
    pg.psql("INSERT INTO accounts.schema_migration (identifier, applied_at) VALUES "
            "('v999', now())", pgdb)
    target = tmp_path / "t" / "accounts.sqlite3"
    result = copy(Client(tmp_path / "tool"), source.database, str(target))
    assert (result.code, result.stdout, result.stderr) == (
        3, "", NEWER.format(source.database) + "\n"), result
    assert not target.exists()
