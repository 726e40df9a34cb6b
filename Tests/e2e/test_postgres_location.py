"""The PostgreSQL store through the built binary, against the shared server: choosing the
store. --database postgresql:// (or postgres://, or the socket folder as an encoded host),
ACCOUNTS_DATABASE, which one wins, PG* variables filling a bare URI, a service file, ~/.pgpass
and PGPASSFILE, PGPASSWORD over TCP with a SCRAM role, sslmode; and libpq bound only for a
PostgreSQL store.

Oracles: psql (what the server holds), libpq's own files (.pgpass, pg_service.conf) and the
loader's trace (LD_DEBUG)."""

import json
import os
import subprocess
import urllib.parse

import pytest

from conftest import BIN, PASSWORD, USERNAME
from pgcluster import (TABLES, Client, activate, assert_one_sentence, assert_welcome, at_tcp,
                       cannot_connect, cannot_connect_prefix, login, status_lines, stored_accounts)
from pgcluster import client, pg, pgdb, scram_role  # noqa: F401

# These tests name their stores themselves (PostgreSQL databases of their own, SQLite files),
# whatever ACCOUNTS_TEST_BACKEND says: they run once, in the postgresql run.
pytestmark = pytest.mark.postgresql_only


# Helpers.

def assert_activated_in(cluster, database):
    """psql sees what the activation wrote: the schema and its tables, the activation row
    naming alice's account, an activation event, and the first migration `v1`."""
    assert "accounts" in cluster.schemas(database)
    assert set(TABLES) <= set(cluster.tables(database)), cluster.tables(database)
    assert cluster.value("SELECT state FROM accounts.activation WHERE id = 1",
                         database) == "Activated"
    assert stored_accounts(cluster, database) == [f"{USERNAME}|t"]
    assert cluster.value("SELECT kind FROM accounts.audit_event ORDER BY id LIMIT 1",
                         database) == "activation"
    assert cluster.value("SELECT identifier FROM accounts.schema_migration ORDER BY "
                         "applied_at, identifier LIMIT 1", database) == "v1"


def no_sqlite_file_made(client):
    """Nothing took the URI for a file: no default database, nothing new in the working
    folder but the client's own folders."""
    assert not (client.xdg / "accounts").exists()
    assert sorted(p.name for p in client.root.iterdir()) == sorted(
        ["home", "xdg", "state", "config"]), list(client.root.iterdir())


# Choosing the store.

@pytest.mark.parametrize("scheme", ["postgresql", "postgres", "encoded-host"])
def test_database_flag_selects_postgresql(pg, pgdb, tmp_path, scheme):
    """`--database postgresql://…` (or `postgres://…`, or the socket folder percent-encoded as
    the host) is a PostgreSQL store: activate writes the schema `accounts` there (psql sees the
    account, the activation and migration v1), status shows the URI as given, login works, and
    no SQLite file is made."""
    if scheme == "encoded-host":
        uri = (f"postgresql://postgres@{urllib.parse.quote(str(pg.socket), safe='')}:"
               f"{pg.port}/{pgdb}")
    else:
        uri = pg.uri(pgdb, scheme=scheme)
    client = Client(tmp_path / "c")
    activate(client, "--database", uri)
    assert_activated_in(pg, pgdb)
    result = client.run("status", "--database", uri)
    assert (result.code, result.stdout, result.stderr) == (0, status_lines(uri), ""), result
    result = client.run("status", "--json", "--database", uri)
    assert (result.code, result.stderr) == (0, ""), result
    status = json.loads(result.stdout)
    assert (status["state"], status["database"], status["exists"]) == ("Activated", uri, True)
    assert status["changedAt"] is not None
    assert_welcome(login(client, "--database", uri))
    no_sqlite_file_made(client)


def test_accounts_database_variable_selects_postgresql(pg, pgdb, client):
    """ACCOUNTS_DATABASE=postgresql://… works like --database."""
    activate(client)
    assert_activated_in(pg, pgdb)
    result = client.run("status")
    assert (result.code, result.stdout, result.stderr) == (
        0, status_lines(client.database), ""), result
    assert_welcome(login(client))
    no_sqlite_file_made(client)


def test_flag_wins_over_the_variable(pg, pgdb, tmp_path):
    """--database URI beats ACCOUNTS_DATABASE=PATH (the file is not made), and --database PATH
    beats ACCOUNTS_DATABASE=URI (the server gets no schema)."""
    uri = pg.uri(pgdb)
    path = tmp_path / "file" / "accounts.sqlite3"
    client = Client(tmp_path / "c", str(path))
    activate(client, "--database", uri)
    assert not path.exists()
    assert_activated_in(pg, pgdb)
    other = pg.create_database()
    try:
        client.database = pg.uri(other)
        activate(client, "--database", str(path))
        assert path.exists()
        assert "accounts" not in pg.schemas(other)
    finally:
        pg.drop_database(other)


def test_pg_variables_fill_a_bare_uri(pg, pgdb, tmp_path):
    """`postgresql:///DB` with PGHOST (the socket folder), PGPORT and PGUSER set: libpq's
    variables choose the server; status shows the URI as given."""
    uri = f"postgresql:///{pgdb}"
    client = Client(tmp_path / "c", uri)
    env = client.env(PGHOST=str(pg.socket), PGPORT=str(pg.port), PGUSER="postgres")
    activate(client, env=env)
    assert_activated_in(pg, pgdb)
    result = client.run("status", env=env)
    assert (result.code, result.stdout, result.stderr) == (0, status_lines(uri), ""), result
    assert_welcome(login(client, env=env))


def test_pgdatabase_names_the_database(pg, pgdb, tmp_path):
    """`postgresql://` with PGDATABASE too: every part from the environment."""
    uri = "postgresql://"
    client = Client(tmp_path / "c", uri)
    env = client.env(PGHOST=str(pg.socket), PGPORT=str(pg.port), PGUSER="postgres",
                     PGDATABASE=pgdb)
    activate(client, env=env)
    assert_activated_in(pg, pgdb)


def test_service_file(pg, pgdb, tmp_path):
    """PGSERVICEFILE and `postgresql:///?service=accounts`: the service's host, port, user and
    dbname are used."""
    client = Client(tmp_path / "c", "postgresql:///?service=accounts")
    services = client.root / "pg_service.conf"
    services.write_text(f"[other]\ndbname=postgres\n\n[accounts]\nhost={pg.socket}\n"
                        f"port={pg.port}\nuser=postgres\ndbname={pgdb}\n")
    env = client.env(PGSERVICEFILE=str(services))
    activate(client, env=env)
    assert_activated_in(pg, pgdb)
    result = client.run("status", env=env)
    assert (result.code, result.stdout, result.stderr) == (
        0, status_lines("postgresql:///?service=accounts"), ""), result
    assert_welcome(login(client, env=env))


@pytest.mark.parametrize("where", ["~/.pgpass", "PGPASSFILE"])
def test_pgpass_gives_the_password(pg, scram_role, tmp_path, where):
    """Over TCP the server asks a SCRAM password: ~/.pgpass (mode 0600), or the file PGPASSFILE
    names, gives it. Without the file: exit 3, the cannot-connect sentence naming 127.0.0.1 and
    the port."""
    role, password, database, needle = scram_role
    uri = pg.tcp_uri(database, role)
    client = Client(tmp_path / "c", uri)
    pgpass = client.home / ".pgpass"
    if where == "PGPASSFILE":
        pgpass = client.root / "passwords"
        client.settings["PGPASSFILE"] = str(pgpass)
    escaped = password.replace("\\", "\\\\").replace(":", "\\:")
    pgpass.write_text(f"127.0.0.1:{pg.port}:{database}:{role}:{escaped}\n")
    pgpass.chmod(0o600)
    activate(client)
    assert_activated_in(pg, database)
    result = client.run("status")
    assert (result.code, result.stdout, result.stderr) == (0, status_lines(uri), ""), result
    assert_welcome(login(client))
    pgpass.unlink()
    result = client.run("status")
    reason = assert_one_sentence(result, cannot_connect_prefix(at_tcp(pg.port), uri))
    assert "password" in reason, result
    assert needle not in result.stderr


def test_pgpassword_over_tcp(pg, scram_role, tmp_path):
    """PGPASSWORD gives the password of a SCRAM role over TCP."""
    role, password, database, needle = scram_role
    uri = pg.tcp_uri(database, role)
    client = Client(tmp_path / "c", uri)
    env = client.env(PGPASSWORD=password)
    activate(client, env=env)
    assert_activated_in(pg, database)
    assert pg.value(f"SELECT tableowner FROM pg_tables WHERE schemaname = 'accounts' AND "
                    f"tablename = 'account'", database) == role
    result = client.run("status", env=env)
    assert (result.code, result.stdout, result.stderr) == (0, status_lines(uri), ""), result
    assert needle not in result.stdout + result.stderr


def test_sslmode_require_without_ssl(pg, scram_role, tmp_path):
    """`sslmode=require` against this server (no SSL): exit 3, one clear sentence."""
    role, password, database, _ = scram_role
    uri = pg.tcp_uri(database, role, sslmode="require")
    client = Client(tmp_path / "c", uri)
    result = client.run("status", env=client.env(PGPASSWORD=password))
    assert (result.code, result.stdout, result.stderr) == (3, "", cannot_connect(
        at_tcp(pg.port), uri, "server does not support SSL, but SSL was required") + "\n"), result
    assert "accounts" not in pg.schemas(database)


# libpq is bound only for PostgreSQL.

RELEASE = os.environ.get("ACCOUNTS_RELEASE_BIN", "")
BINARIES = [BIN] + ([RELEASE] if RELEASE else [])


@pytest.mark.parametrize("binary", BINARIES, ids=["debug", "release"][:len(BINARIES)])
def test_libpq_is_bound_only_for_a_postgresql_store(pg, pgdb, tmp_path, binary):
    """LD_DEBUG=libs (the loader's trace, on stderr): commands on an SQLite file never mention
    libpq; status on a postgresql:// store loads libpq.so.5."""
    path = str(tmp_path / "db" / "accounts.sqlite3")
    sqlite = Client(tmp_path / "s", path)
    activate(sqlite)
    for args, stdin in ((["status"], None), (["status", "--json"], None),
                        (["login"], f"{USERNAME}\n{PASSWORD}\n"), (["user", "list"], None),
                        (["log"], None)):
        result = sqlite.run(*args, input=stdin, binary=binary,
                            env=sqlite.env(LD_DEBUG="libs"))
        assert result.code == 0, result
        assert "calling init" in result.stderr, "LD_DEBUG=libs wrote no trace"
        assert "libpq" not in result.stderr, (args, [
            line for line in result.err_lines if "libpq" in line])
    postgres = Client(tmp_path / "p", pg.uri(pgdb))
    activate(postgres)
    result = postgres.run("status", binary=binary, env=postgres.env(LD_DEBUG="libs"))
    assert result.code == 0, result
    assert "libpq.so.5" in result.stderr


@pytest.mark.parametrize("binary", BINARIES, ids=["debug", "release"][:len(BINARIES)])
def test_binaries_do_not_link_libpq(binary):
    """libpq is not in the program's DT_NEEDED entries (readelf) nor in ldd's list: it is
    opened when a PostgreSQL store is named."""
    dynamic = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True,
                             check=True).stdout
    needed = [line for line in dynamic.splitlines() if "(NEEDED)" in line]
    assert needed and not any("libpq" in line for line in needed), needed
    libraries = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
    assert "libpq" not in libraries, libraries
