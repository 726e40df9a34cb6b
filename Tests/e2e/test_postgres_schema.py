"""The PostgreSQL store through the built binary: its schema and the roles that use it. The
tables activation makes (psql against the contract), a schema `accounts` of another program
and a newer migration refused, reading commands on a database without the schema answering as
on a missing SQLite file, and roles that may not create the schema or may only read it.

Oracles: psql (what the server holds) and the SQLite store's answers for the same commands."""

import json
import re

import pytest

from conftest import PASSWORD, USERNAME, form
from pgcluster import (FOREIGN, NEWER, TABLES, Client, activate, assert_one_sentence,
                       dump_accounts_schema, permission_prefix, status_lines)
from pgcluster import client, pg, pgdb  # noqa: F401

# These tests name their stores themselves (PostgreSQL databases of their own, SQLite files),
# whatever ACCOUNTS_TEST_BACKEND says: they run once, in the postgresql run.
pytestmark = pytest.mark.postgresql_only


# What the store looks like in PostgreSQL.

def test_schema_follows_the_contract(pg, pgdb, client):
    """After activation: the tables of schema.sql in the schema `accounts`, plus
    schema_migration (identifier text primary key, applied_at timestamptz); every time a
    timestamptz, every flag a boolean, every blob a bytea; account, account_group, audit_event
    and session ids bigint identities; one activation row, id 1."""
    activate(client)
    # And the user records' change counter and notes, the fleet's roles and hosts with a role
    # of their own, the server's key for second factors, and the hosts' reports: each store's
    # own (not copied).
    assert pg.tables(pgdb) == sorted(TABLES + ["userdb_change", "userdb_generation",
                                               "fleet_host", "fleet_role", "second_factor_key",
                                               "host_report", "schema_expansion"])
    columns = pg.json_rows(
        "SELECT table_name, column_name, data_type, is_identity FROM information_schema.columns "
        "WHERE table_schema = 'accounts'", pgdb)
    kinds = {(c["table_name"], c["column_name"]): c["data_type"] for c in columns}
    identity = {(c["table_name"], c["column_name"]) for c in columns if c["is_identity"] == "YES"}
    times = {k for k in kinds if k[1].endswith("_at") or k[1] in ("locked_until", "idle_until")}
    assert times and all(kinds[k] == "timestamp with time zone" for k in times), kinds
    for flag in [("account", "must_change_password"), ("session", "second_factor")]:
        assert kinds[flag] == "boolean", flag
    for blob in [("session", "token_hash"), ("second_factor", "sealed_secret"),
                 ("second_factor", "server_secret"), ("recovery_code", "code_hash")]:
        assert kinds[blob] == "bytea", blob
    for table in ("account", "account_group", "audit_event", "session"):
        assert kinds[(table, "id")] == "bigint" and (table, "id") in identity, table
    assert kinds[("schema_migration", "identifier")] == "text"
    assert kinds[("schema_migration", "applied_at")] == "timestamp with time zone"
    key = pg.value("SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = "
                   "i.indrelid AND a.attnum = ANY(i.indkey) WHERE i.indisprimary AND i.indrelid "
                   "= 'accounts.schema_migration'::regclass", pgdb)
    assert key == "identifier"
    assert pg.psql("SELECT id, state FROM accounts.activation", pgdb).split() == ["1|Activated"]


# Schema refusals.

@pytest.mark.parametrize("table", ["orders", "account"])
def test_someone_elses_schema_is_refused(pg, pgdb, client, table):
    """A schema `accounts` holding another program's table (no schema_migration): every command
    says it was not made by accounts (exit 3) and nothing is added or changed."""
    pg.psql(f"CREATE SCHEMA accounts; CREATE TABLE accounts.{table} (id int, note text); "
            f"INSERT INTO accounts.{table} VALUES (1, 'theirs')", pgdb)
    before = dump_accounts_schema(pg, pgdb)
    sentence = FOREIGN.format(client.database) + "\n"
    differences = []
    for args, stdin in ((["status"], None), (["status", "--json"], None),
                        (["activate"], form()), (["login"], f"{USERNAME}\n{PASSWORD}\n"),
                        (["user", "list"], None), (["log"], None), (["whoami"], None),
                        (["unlock", "bob"], None)):
        result = client.run(*args, input=stdin)
        if (result.code, result.stdout, result.stderr) != (3, "", sentence):
            differences.append((args, result))
    assert differences == [], f"expected exit 3 and {sentence!r}"
    assert pg.tables(pgdb) == [table]
    assert dump_accounts_schema(pg, pgdb) == before


def test_unknown_migration_is_refused_as_newer(pg, pgdb, client):
    """A schema_migration row this build does not know: written by a newer version (exit 3),
    for reading and writing commands alike; nothing changes."""
    activate(client)
    pg.psql("INSERT INTO accounts.schema_migration (identifier, applied_at) VALUES "
            "('v999-from-the-future', now())", pgdb)
    before = dump_accounts_schema(pg, pgdb)
    sentence = NEWER.format(client.database) + "\n"
    for args, stdin in ((["status"], None), (["status", "--json"], None),
                        (["login"], f"{USERNAME}\n{PASSWORD}\n"), (["user", "list"], None),
                        (["log"], None), (["activate"], form()),
                        (["user", "add", "--username", "bob", "--full-name", "Bob Builder",
                          "--email", "bob@example.org", "--password-stdin"],
                         "can we fix it yes we can\n")):
        result = client.run(*args, input=stdin)
        assert (result.code, result.stdout, result.stderr) == (3, "", sentence), (args, result)
    assert dump_accounts_schema(pg, pgdb) == before


READING = [["status"], ["status", "--json"], ["user", "list"], ["user", "list", "--json"],
           ["log"], ["log", "--json"], ["whoami"], ["whoami", "--json"], ["session", "list"],
           ["2fa", "status", "--user", USERNAME], ["user", "show", USERNAME],
           ["unlock", "bob"], ["user", "export"], ["logout"],
           ["verify", "--username", USERNAME, "--password-stdin"], ["login"]]


def test_reading_commands_on_a_database_without_the_schema(pg, pgdb, client, tmp_path):
    """On a database with no schema `accounts`, reading commands (and those that refuse where
    no database exists) answer exactly as on a missing SQLite file, the location in place of
    the path, and create nothing: psql sees no schema `accounts` after them all. (status's
    words after the location, `(no database exists at this path)` for a file, may say it in
    words that fit a database: the contract asks for the same behaviour, not for "path".)"""
    missing = tmp_path / "none" / "accounts.sqlite3"
    reference = Client(tmp_path / "sqlite", str(missing))
    differences = []
    for args in READING:
        stdin = f"{USERNAME}\n{PASSWORD}\n" if args[0] in ("login", "verify") else None
        expected = reference.run(*args, input=stdin)
        result = client.run(*args, input=stdin)
        swap = lambda text: text.replace(str(missing), client.database)  # noqa: E731
        want = (expected.code, swap(expected.stdout), swap(expected.stderr))
        got = (result.code, result.stdout, result.stderr)
        if args == ["status"] and got != want:
            lines = result.out_lines
            if (result.code, result.stderr, len(lines), lines[:1]) == (
                    0, "", 2, ["State: Public"]) and re.fullmatch(
                    re.escape(f"Database: {client.database} (") + r"[^()]+\)", lines[1]):
                continue
        if got != want:
            differences.append((args, want, got))
    assert differences == []
    assert not missing.exists()
    assert "accounts" not in pg.schemas(pgdb)
    assert pg.value("SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = "
                    "c.relnamespace WHERE n.nspname = 'public'", pgdb) == "0"


def test_role_without_create_rights(pg, pgdb, tmp_path):
    """A role that may connect but not create a schema: activate says the role has no
    permission (exit 3) and nothing is created; reading commands still read a Public store."""
    role = pg.create_role("nocreate")
    try:
        uri = pg.uri(pgdb, user=role)
        client = Client(tmp_path / "c", uri)
        result = client.run("activate", input=form())
        assert_one_sentence(result, permission_prefix(uri), ").")
        assert "accounts" not in pg.schemas(pgdb)
        result = client.run("status", "--json")
        assert result.code == 0 and json.loads(result.stdout)["state"] == "Public", result
    finally:
        pg.drop_role(role)


def test_role_that_may_only_read(pg, pgdb, client, tmp_path):
    """A role granted only SELECT on the store: status and user list read it; login, user add
    and unlock say the role has no permission (exit 3) and change nothing."""
    activate(client)
    role = pg.create_role("reader")
    try:
        pg.psql(f'GRANT USAGE ON SCHEMA accounts TO "{role}"; '
                f'GRANT SELECT ON ALL TABLES IN SCHEMA accounts TO "{role}"', pgdb)
        before = dump_accounts_schema(pg, pgdb)
        uri = pg.uri(pgdb, user=role)
        reader = Client(tmp_path / "reader", uri)
        result = reader.run("status")
        assert (result.code, result.stdout, result.stderr) == (
            0, status_lines(uri), ""), result
        assert reader.run("user", "list").code == 0
        for args, stdin in ((["login"], f"{USERNAME}\n{PASSWORD}\n"),
                            (["user", "add", "--username", "bob", "--full-name", "Bob Builder",
                              "--email", "bob@example.org", "--password-stdin"],
                             "can we fix it yes we can\n"),
                            (["unlock", "bob"], None)):
            result = reader.run(*args, input=stdin)
            assert_one_sentence(result, permission_prefix(uri), ").")
        assert dump_accounts_schema(pg, pgdb) == before
    finally:
        pg.psql(f'DROP OWNED BY "{role}"', pgdb, check=False)
        pg.drop_role(role)
