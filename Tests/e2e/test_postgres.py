"""The PostgreSQL store through the built binary, against real servers: choosing the
store (--database, postgres://, ACCOUNTS_DATABASE, PG* variables, a service file, ~/.pgpass,
PGPASSWORD over TCP with a SCRAM role, sslmode, connect_timeout), never showing the password,
faults (a server stopped before or during a command, a killed connection, a wrong password, a
closed port, an address that does not answer, an unknown database), the schema refusals, and
libpq bound only for a PostgreSQL store.

Oracles: psql (what the server holds), libpq's own files (.pgpass, pg_service.conf), the
loader's trace (LD_DEBUG), and the SQLite store's answers for the same commands. Tests that stop
a server use a cluster of their own (Scripts/postgres start in a temporary folder), never the
shared one."""

import json
import os
import re
import secrets
import signal
import stat
import subprocess
import time
import urllib.parse

import pexpect
import pyotp
import pytest

from conftest import BIN, FULL_NAME, PASSWORD, USERNAME, Result, form, screen
from pgcluster import (FOREIGN, LOST_SUFFIX, NEWER, WARNING, Client, Cluster, assert_clean,
                       assert_one_sentence, at_tcp, cannot_connect, cannot_connect_prefix,
                       closed_port, csv_of, dump_accounts_schema, freeze_while_writing, lost_prefix,
                       on_socket, permission_prefix, pg, pgdb, client, silent_listener)  # noqa: F401
from test_second_factor import enable

# These tests name their stores themselves (PostgreSQL databases of their own, SQLite files),
# whatever ACCOUNTS_TEST_BACKEND says: they run once, in the postgresql run.
pytestmark = pytest.mark.postgresql_only

WELCOME = f"Welcome back {FULL_NAME}!"
ACTIVATED = f"Device activated for {USERNAME}.\n"
TABLES = ["account", "activation", "audit_event", "audit_kind", "login_throttle",
          "recovery_code", "schema_migration", "second_factor", "session"]


# Helpers.

def activate(client, *args, env=None):
    result = client.run(*args, "activate", input=form(), env=env)
    assert (result.code, result.stdout, result.stderr) == (0, ACTIVATED, ""), result
    return result


def login(client, *args, env=None, username=USERNAME, password=PASSWORD):
    return client.run(*args, "login", input=f"{username}\n{password}\n", env=env)


def assert_welcome(result, stderr=""):
    assert (result.code, result.stderr) == (0, stderr), result
    assert result.out_lines[0] == WELCOME, result


def stored_accounts(cluster, database):
    """(username, owner?) of every account in the PostgreSQL store, by psql."""
    return cluster.psql("SELECT a.username, a.id = v.owner_id FROM accounts.account a, "
                        "accounts.activation v ORDER BY a.id", database).split()


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


def status_lines(location, state="Activated"):
    return f"State: {state}\nDatabase: {location}\n"


def no_sqlite_file_made(client):
    """Nothing took the URI for a file: no default database, nothing new in the working
    folder but the client's own folders."""
    assert not (client.xdg / "accounts").exists()
    assert sorted(p.name for p in client.root.iterdir()) == sorted(
        ["home", "xdg", "state", "config"]), list(client.root.iterdir())


@pytest.fixture
def scram_role(pg):
    """A login role with a SCRAM password, owning a new database: (role, password, database).
    The password has characters a URI must percent-encode, and a random part to search for."""
    needle = secrets.token_hex(6)
    password = f"Pw/{needle}@%x"
    role = pg.create_role("acct", password=password)
    assert pg.value(f"SELECT rolpassword LIKE 'SCRAM-SHA-256$%' FROM pg_authid WHERE rolname = "
                    f"'{role}'") == "t"
    database = pg.create_database(owner=role)
    yield role, password, database, needle
    pg.drop_database(database)
    pg.drop_role(role)


# What the store looks like in PostgreSQL.

def test_schema_follows_the_contract(pg, pgdb, client):
    """After activation: the tables of schema.sql in the schema `accounts`, plus
    schema_migration (identifier text primary key, applied_at timestamptz); every time a
    timestamptz, every flag a boolean, every blob a bytea; account, audit_event and session ids
    bigint identities; one activation row, id 1."""
    activate(client)
    assert pg.tables(pgdb) == TABLES
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
                 ("recovery_code", "code_hash")]:
        assert kinds[blob] == "bytea", blob
    for table in ("account", "audit_event", "session"):
        assert kinds[(table, "id")] == "bigint" and (table, "id") in identity, table
    assert kinds[("schema_migration", "identifier")] == "text"
    assert kinds[("schema_migration", "applied_at")] == "timestamp with time zone"
    key = pg.value("SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = "
                   "i.indrelid AND a.attnum = ANY(i.indkey) WHERE i.indisprimary AND i.indrelid "
                   "= 'accounts.schema_migration'::regclass", pgdb)
    assert key == "identifier"
    assert pg.psql("SELECT id, state FROM accounts.activation", pgdb).split() == ["1|Activated"]


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


@pytest.mark.parametrize("where,seconds", [("uri", 2), ("PGCONNECT_TIMEOUT", 3),
                                           ("default", 10)])
def test_connect_timeout(tmp_path, where, seconds):
    """A server that accepts the connection and never answers: `connect_timeout` in the URI,
    else PGCONNECT_TIMEOUT, else 10 seconds ends the wait with `timeout expired`, exit 3."""
    listener = silent_listener()
    port = listener.getsockname()[1]
    try:
        uri = f"postgresql://postgres@127.0.0.1:{port}/accounts?sslmode=disable"
        if where == "uri":
            uri += f"&connect_timeout={seconds}"
        client = Client(tmp_path / "c", uri)
        env = client.env(PGCONNECT_TIMEOUT=str(seconds) if where == "PGCONNECT_TIMEOUT"
                         else None)
        result, elapsed = client.timed("status", env=env, timeout=40)
        assert (result.code, result.stdout, result.stderr) == (3, "", cannot_connect(
            at_tcp(port), uri, "timeout expired") + "\n"), result
        assert seconds - 0.5 <= elapsed <= seconds + 4, elapsed
    finally:
        listener.close()


def test_server_notices_never_reach_the_output(pg, pgdb, client):
    """A database set to send every notice (client_min_messages = debug5, which psql prints
    as DEBUG lines): libpq's notices never reach accounts' output, which stays exact."""
    pg.psql(f'ALTER DATABASE "{pgdb}" SET client_min_messages = \'debug5\'')
    assert "DEBUG:" in pg.psql("SELECT 1", pgdb, check=False).stderr
    activate(client)
    result = client.run("status")
    assert (result.code, result.stdout, result.stderr) == (
        0, status_lines(client.database), ""), result
    assert_welcome(login(client))
    for args in (["user", "list"], ["log"], ["whoami"], ["logout"]):
        result = client.run(*args)
        assert (result.code, result.stderr) == (0, ""), (args, result)
        assert "DEBUG" not in result.stdout, (args, result)


# Never the password.

def everything_shown(client, *results):
    """Every output of the given results, the session file and the audit log."""
    texts = [r.stdout + r.stderr for r in results]
    if client.session_file.exists():
        texts.append(client.session_file.read_text())
    return "\n".join(texts)


def assert_no_password(needle, text, cluster=None, database=None):
    assert needle not in text, text
    if cluster is not None:
        dump = json.dumps(dump_accounts_schema(cluster, database))
        assert needle not in dump


def activate_and_log_in_warned(client, uri, shown) -> list:
    """activate, status, status --json and login on `uri`, which holds a password: each warns
    once and goes on, and shows the URI as `shown`, as does the session file. Their results."""
    results = []
    result = client.run("--database", uri, "activate", input=form())
    assert (result.code, result.stdout, result.stderr) == (0, ACTIVATED, WARNING + "\n"), result
    results.append(result)
    result = client.run("status", "--database", uri)
    assert (result.code, result.stdout, result.stderr) == (
        0, status_lines(shown), WARNING + "\n"), result
    results.append(result)
    result = client.run("status", "--json", "--database", uri)
    assert (result.code, result.stderr) == (0, WARNING + "\n"), result
    assert json.loads(result.stdout)["database"] == shown
    results.append(result)
    result = login(client, "--database", uri)
    assert_welcome(result, stderr=WARNING + "\n")
    results.append(result)
    lines = client.session_file.read_text().splitlines()
    assert f"database {shown}" in lines, lines
    return results


@pytest.mark.parametrize("shape", ["userinfo", "parameter", "both", "userinfo-no-query"])
def test_status_and_errors_never_show_the_password(pg, scram_role, tmp_path, shape):
    """A URI with a password on --database: one warning line on stderr and the command goes on;
    status, status --json, the session file's database line and every error sentence show the
    URI without its password (the user-info `:password` and any `password=` parameter dropped,
    nothing else changed); the audit log and the tables never hold it."""
    role, password, database, needle = scram_role
    encoded = quote_all(password)
    base = f"postgresql://{role}@127.0.0.1:{pg.port}/{database}"
    uri, shown = {
        "userinfo": (f"postgresql://{role}:{encoded}@127.0.0.1:{pg.port}/{database}"
                     "?sslmode=disable", f"{base}?sslmode=disable"),
        "parameter": (f"{base}?password={encoded}&sslmode=disable", f"{base}?sslmode=disable"),
        "both": (f"postgresql://{role}:{encoded}@127.0.0.1:{pg.port}/{database}"
                 f"?sslmode=disable&password={encoded}", f"{base}?sslmode=disable"),
        "userinfo-no-query": (f"postgresql://{role}:{encoded}@127.0.0.1:{pg.port}/{database}",
                              base),
    }[shape]
    client = Client(tmp_path / "c")
    results = activate_and_log_in_warned(client, uri, shown)
    for args in (["whoami"], ["log"], ["log", "--json"], ["user", "list", "--json"],
                 ["session", "list", "--json"], ["user", "export"]):
        result = client.run(*args, "--database", uri)
        assert (result.code, result.stderr) == (0, WARNING + "\n"), (args, result)
        results.append(result)

    # A wrong password in the same place: the sentence names host and user, not the password.
    wrong = f"Wrong/{secrets.token_hex(6)}@x"
    wrong_uri = uri.replace(encoded, quote_all(wrong))
    result = client.run("status", "--database", wrong_uri)
    assert (result.code, result.stdout, result.stderr) == (3, "", WARNING + "\n" + cannot_connect(
        at_tcp(pg.port), shown, f'password authentication failed for user "{role}"') + "\n"), \
        result
    assert wrong not in result.stderr and quote_all(wrong) not in result.stderr
    results.append(result)

    # An unknown database, and a newer schema: the location is shown without the password.
    missing = uri.replace(f"/{database}", f"/{database}_none")
    result = client.run("status", "--database", missing)
    assert (result.code, result.stdout, result.stderr) == (3, "", WARNING + "\n" + cannot_connect(
        at_tcp(pg.port), shown.replace(f"/{database}", f"/{database}_none"),
        f'database "{database}_none" does not exist') + "\n"), result
    results.append(result)
    pg.psql("INSERT INTO accounts.schema_migration (identifier, applied_at) VALUES "
            "('v999', now())", database)
    result = client.run("status", "--database", uri)
    assert (result.code, result.stdout, result.stderr) == (
        3, "", WARNING + "\n" + NEWER.format(shown) + "\n"), result
    results.append(result)

    text = everything_shown(client, *results)
    assert_no_password(needle, text, pg, database)
    assert password not in text and encoded not in text
    assert_clean(text)


def quote_all(text):
    """Percent-encodes every character a URI's user-info or query value may not hold."""
    return urllib.parse.quote(text, safe="")


@pytest.mark.parametrize("shape", ["userinfo", "userinfo-port", "parameter"])
def test_a_password_typed_with_reserved_characters_is_never_shown(pg, tmp_path, shape):
    """A password holding `?`, `/` and `@` typed into the URI as they are, not percent-encoded:
    in a parameter libpq reads it (the value runs to the next `&`), and status, status --json
    and the session file show the URI without it; in the user part libpq cannot read the URI
    (it takes the password's first piece for a port, or its end for parameters), and the one
    sentence saying so (libpq's own words quote a piece of it, or name the host and port it
    read) holds no piece of the password either."""
    pieces = [f"Kq{secrets.token_hex(3)}", f"Zx{secrets.token_hex(3)}",
              f"Wm{secrets.token_hex(3)}", f"Tn{secrets.token_hex(3)}"]
    if shape == "userinfo-port":
        pieces.pop(1)
        password = f"{pieces[0]}/{pieces[1]}@{pieces[2]}"
    else:
        password = f"{pieces[0]}?{pieces[1]}/{pieces[2]}@{pieces[3]}"
    role = pg.create_role("acct", password=password)
    database = pg.create_database(owner=role)
    try:
        shown = f"postgresql://{role}@127.0.0.1:{pg.port}/{database}?sslmode=disable"
        client = Client(tmp_path / "c")
        results = []
        if shape == "parameter":
            results += activate_and_log_in_warned(client, f"{shown}&password={password}", shown)
        else:
            uri = f"postgresql://{role}:{password}@127.0.0.1:{pg.port}/{database}?sslmode=disable"
            result = client.run("status", "--database", uri)
            assert (result.code, result.stdout) == (3, ""), result
            assert result.stderr.startswith(WARNING + "\n" + "Cannot connect to the PostgreSQL "
                                            "server "), result
            assert f" for the database {shown}: " in result.stderr, result
            assert len(result.err_lines) == 2, result
            results.append(result)
        text = everything_shown(client, *results)
        for piece in pieces:
            assert piece not in text, text
        assert_clean(text)
    finally:
        pg.drop_database(database)
        pg.drop_role(role)


def test_variable_with_a_password_is_not_warned_about_and_is_hidden(pg, scram_role, tmp_path):
    """ACCOUNTS_DATABASE holding a password: no warning (it is not on the command line), and
    status shows the URI without the password."""
    role, password, database, needle = scram_role
    shown = f"postgresql://{role}@127.0.0.1:{pg.port}/{database}?sslmode=disable"
    uri = (f"postgresql://{role}:{quote_all(password)}@127.0.0.1:{pg.port}/{database}"
           "?sslmode=disable")
    client = Client(tmp_path / "c", uri)
    activate(client)
    result = client.run("status")
    assert (result.code, result.stdout, result.stderr) == (0, status_lines(shown), ""), result
    result = client.run("status", "--json")
    assert json.loads(result.stdout)["database"] == shown
    assert needle not in result.stdout


def test_no_warning_without_a_password(pg, scram_role, tmp_path):
    """A URI on --database without a password (PGPASSWORD gives it): no warning."""
    role, password, database, _ = scram_role
    uri = pg.tcp_uri(database, role)
    client = Client(tmp_path / "c")
    env = client.env(PGPASSWORD=password)
    result = client.run("--database", uri, "activate", input=form(), env=env)
    assert (result.code, result.stdout, result.stderr) == (0, ACTIVATED, ""), result


# Faults: a server of our own that the tests stop and start.

@pytest.fixture(scope="module")
def own(request):
    """A private cluster for this module's fault tests (durable: it is stopped with
    `-m immediate` too), removed after."""
    cluster = Cluster.start(durable=True)
    request.addfinalizer(cluster.remove)
    return cluster


@pytest.fixture
def own_db(own):
    own.ensure_running()
    name = own.create_database("fault")
    yield name
    own.ensure_running()
    own.drop_database(name)


@pytest.fixture
def own_client(own, own_db, tmp_path):
    client = Client(tmp_path / "c", own.uri(own_db))
    activate(client)
    return client


def test_server_stopped_before_a_command(own, own_db, own_client):
    """The server stopped (its socket gone): every command says it cannot connect on the
    socket, naming the folder and port, with libpq's reason, exit 3 at once; restarted, the
    next command works and the data is whole."""
    own.stop_server()
    try:
        for args, stdin in ((["status"], None), (["status", "--json"], None),
                            (["login"], f"{USERNAME}\n{PASSWORD}\n"), (["user", "list"], None),
                            (["log"], None), (["activate"], form())):
            result, elapsed = own_client.timed(*args, input=stdin)
            reason = assert_one_sentence(result, cannot_connect_prefix(
                on_socket(own), own_client.database))
            # libpq's reason, possibly followed by its hint in words ("(is the server
            # running?)").
            assert reason.startswith(("No such file or directory", "Connection refused")), result
            assert elapsed < 10, (args, elapsed)
    finally:
        own.start_server()
    result = own_client.run("status")
    assert (result.code, result.stdout, result.stderr) == (
        0, status_lines(own_client.database), ""), result
    assert_welcome(login(own_client))
    assert stored_accounts(own, own_db) == [f"{USERNAME}|t"]


def test_server_stopped_before_a_command_over_tcp(own, own_db, tmp_path):
    """Over TCP: `at 127.0.0.1:PORT` and `Connection refused`, exit 3 within the timeout."""
    password = f"pw-{secrets.token_hex(8)}"
    role = own.create_role("tcp", password=password)
    own.psql(f'ALTER DATABASE "{own_db}" OWNER TO "{role}"')
    uri = own.tcp_uri(own_db, role, connect_timeout="5")
    client = Client(tmp_path / "tcp", uri)
    env = client.env(PGPASSWORD=password)
    activate(client, env=env)
    own.stop_server()
    try:
        result, elapsed = client.timed("status", env=env)
        reason = assert_one_sentence(result, cannot_connect_prefix(at_tcp(own.port), uri))
        assert reason.startswith("Connection refused"), result
        assert elapsed < 5
    finally:
        own.start_server()
    assert client.run("status", env=env).code == 0
    own.drop_database(own_db)
    own.drop_role(role)


@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_server_stopped_while_login_waits_for_the_password(own, own_db, own_client, mode):
    """`accounts login` at a terminal has the user name and waits at `Password:`; the server is
    stopped; the password typed then gets one sentence (the connection was lost, or cannot be
    made again) and exit 3, within the connect timeout; nothing was recorded; restarted, the
    login works."""
    events_before = own.value("SELECT count(*) FROM accounts.audit_event", own_db)
    child = own_client.spawn("login")
    child.expect_exact("User name: ")
    child.sendline(USERNAME)
    child.expect_exact("Password: ")
    own.stop_server(mode)
    try:
        start = time.monotonic()
        child.sendline(PASSWORD)
        child.expect(pexpect.EOF, timeout=30)
        elapsed = time.monotonic() - start
        child.close()
    finally:
        own.start_server()
    # First the data: nothing recorded, and the next login works.
    assert own.value("SELECT count(*) FROM accounts.audit_event", own_db) == events_before
    assert_welcome(login(own_client))
    # Then what the person saw.
    shown = screen(child)
    assert child.signalstatus is None, (child.signalstatus, shown)
    assert child.exitstatus == 3, shown
    assert elapsed < 10, elapsed
    after = shown.split("Password: ", 1)[1]
    lines = [line for line in after.splitlines() if line.strip()]
    assert len(lines) == 1, shown
    line = lines[0]
    location = own_client.database
    lost = line.startswith(lost_prefix(location)) and line.endswith(LOST_SUFFIX)
    refused = line.startswith(cannot_connect_prefix(on_socket(own), location))
    assert lost or refused, shown
    assert WELCOME not in shown
    assert_clean(shown)


IMPORT_ROWS = 300_000


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("import") / "big.csv"
    path.write_text(csv_of(IMPORT_ROWS))
    return path


def assert_import_whole(cluster, database, client, count):
    """After the fault: zero or all of the imported accounts (and the event iff all), and the
    next commands work."""
    accounts = int(cluster.value("SELECT count(*) FROM accounts.account", database))
    imported = int(cluster.value("SELECT count(*) FROM accounts.audit_event WHERE kind = "
                                 "'accounts_imported'", database))
    assert (accounts, imported) in ((1, 0), (count + 1, 1)), (accounts, imported)
    result = client.run("user", "show", USERNAME, "--json")
    assert result.code == 0, result
    result = client.run("user", "add", "--username", "bob", "--full-name", "Bob Builder",
                        "--email", "bob@example.org", "--password-stdin",
                        input="can we fix it yes we can\n")
    assert (result.code, result.stdout, result.stderr) == (0, "Account added: bob.\n", ""), result
    assert_welcome(login(client))
    return accounts


@pytest.mark.parametrize("fault", ["stop", "stop-immediate", "terminate"])
def test_fault_during_a_long_import(own, own_db, own_client, big_csv, fault):
    """A 300,000-line `user import` runs in one transaction; the server is stopped (fast or
    immediate) or its backend terminated in the middle: exit 3, one sentence saying the
    connection was lost and nothing was half-written; after a restart no account of the file is
    there (or all of them, with their event), and the next commands work."""
    proc = own_client.popen("user", "import", str(big_csv))
    try:
        pid = freeze_while_writing(own, own_db, proc, "import")
        start = time.monotonic()
        if fault.startswith("stop"):
            own.stop_server("immediate" if fault == "stop-immediate" else "fast")
        else:
            own.psql(f"SELECT pg_terminate_backend({pid})")
        proc.send_signal(signal.SIGCONT)
        stdout, stderr = proc.communicate(timeout=60)
        elapsed = time.monotonic() - start
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if not own.is_running():
            own.start_server()
    result = Result(proc.returncode, stdout, stderr)
    # First the data (zero or all, and the next commands work), then the sentence.
    accounts = assert_import_whole(own, own_db, own_client, IMPORT_ROWS)
    assert_one_sentence(result, lost_prefix(own_client.database), LOST_SUFFIX)
    assert elapsed < 10, elapsed
    assert accounts == 1, "the import said the connection was lost, yet it was stored"


def test_wrong_password_names_host_and_user(pg, scram_role, tmp_path):
    """A wrong PGPASSWORD: exit 3, `password authentication failed for user "ROLE"` at
    127.0.0.1:PORT; the wrong password is not shown."""
    role, _, database, _ = scram_role
    uri = pg.tcp_uri(database, role)
    client = Client(tmp_path / "c", uri)
    wrong = f"not-it-{secrets.token_hex(6)}"
    result = client.run("status", env=client.env(PGPASSWORD=wrong))
    assert (result.code, result.stdout, result.stderr) == (3, "", cannot_connect(
        at_tcp(pg.port), uri, f'password authentication failed for user "{role}"') + "\n"), \
        result
    assert wrong not in result.stderr
    result = client.run("login", input=form(), env=client.env(PGPASSWORD=wrong))
    assert result.code == 3 and wrong not in result.stdout + result.stderr, result


def test_closed_port_is_refused_at_once(tmp_path):
    """TCP to a port where nothing listens: `Connection refused`, exit 3, at once."""
    port = closed_port()
    uri = f"postgresql://postgres@127.0.0.1:{port}/accounts"
    client = Client(tmp_path / "c", uri)
    result, elapsed = client.timed("status")
    reason = assert_one_sentence(result, cannot_connect_prefix(at_tcp(port), uri))
    assert reason.startswith("Connection refused"), result  # a hint in words may follow
    assert elapsed < 5, elapsed


def test_unreachable_address_within_the_timeout(tmp_path):
    """A non-routable address with connect_timeout=2: exit 3 within about the timeout, one
    sentence naming 10.255.255.1:5432 (whatever the network answers: silence, no route, or a
    stranger that does not speak PostgreSQL)."""
    uri = "postgresql://postgres@10.255.255.1/accounts?connect_timeout=2"
    client = Client(tmp_path / "c", uri)
    result, elapsed = client.timed("status", timeout=30)
    assert_one_sentence(result, cannot_connect_prefix(at_tcp(5432, "10.255.255.1"), uri))
    assert elapsed < 2 + 3, elapsed


def test_unknown_database_and_role(pg, tmp_path):
    """An unknown database or role: exit 3, libpq's reason in the sentence, nothing created."""
    name = f"nope_{secrets.token_hex(4)}"
    uri = pg.uri(name)
    client = Client(tmp_path / "c", uri)
    for args, stdin in ((["status"], None), (["activate"], form())):
        result = client.run(*args, input=stdin)
        assert (result.code, result.stdout, result.stderr) == (3, "", cannot_connect(
            on_socket(pg), uri, f'database "{name}" does not exist') + "\n"), result
    assert pg.value(f"SELECT count(*) FROM pg_database WHERE datname = '{name}'") == "0"
    role = f"ghost_{secrets.token_hex(4)}"
    uri = pg.uri("postgres", user=role)
    result = Client(tmp_path / "r", uri).run("status")
    assert (result.code, result.stdout, result.stderr) == (3, "", cannot_connect(
        on_socket(pg), uri, f'role "{role}" does not exist') + "\n"), result


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


# The key file of a PostgreSQL store.

def pg_rewind(cluster, database, username=USERNAME, steps=10):
    """Moves the account's last accepted step back, as if its last code was minutes ago."""
    changed = cluster.psql(
        f"UPDATE accounts.second_factor SET last_step = last_step - {steps} WHERE account_id = "
        f"(SELECT id FROM accounts.account WHERE username_key = '{username}') RETURNING 1",
        database)
    assert changed.split() == ["1"], changed


@pytest.mark.parametrize("config", ["XDG_CONFIG_HOME", "HOME"])
def test_key_file_of_a_postgresql_store(pg, pgdb, client, tmp_path, config):
    """2fa enable on a PostgreSQL store makes the key file $XDG_CONFIG_HOME/accounts/
    postgresql.key (else ~/.config/accounts/postgresql.key), mode 0600, 64 hex digits. Another
    host without it: a TOTP code is refused exit 3 naming the key file, a recovery code works;
    with a copy named by ACCOUNTS_KEY_FILE the TOTP login works there."""
    env = client.env() if config == "XDG_CONFIG_HOME" else client.env(XDG_CONFIG_HOME=None)
    key_file = client.pg_key_file if config == "XDG_CONFIG_HOME" else \
        client.home / ".config" / "accounts" / "postgresql.key"
    activate(client)
    enrollment = enable(client, code=lambda key: pyotp.TOTP(key).now(), env=env)
    assert enrollment.result.code == 0, enrollment.result
    info = os.lstat(key_file)
    assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600
    assert re.fullmatch(rb"[0-9a-f]{64}\n", key_file.read_bytes())
    assert not any(p.name.endswith(".key") for p in client.root.rglob("*") if p != key_file)
    pg_rewind(pg, pgdb)
    result = client.run("login", input=f"{USERNAME}\n{PASSWORD}\n"
                        f"{pyotp.TOTP(enrollment.key).now()}\n", env=env)
    assert (result.code, result.stderr) == (0, "You are successfully authorized.\n"), result

    other = Client(tmp_path / "other-host", client.database)
    pg_rewind(pg, pgdb)
    result = other.run("login", input=f"{USERNAME}\n{PASSWORD}\n"
                       f"{pyotp.TOTP(enrollment.key).now()}\n")
    assert (result.code, result.stdout) == (3, ""), result
    assert len(result.err_lines) == 1 and f"key file {other.pg_key_file}" in result.stderr, \
        result
    result = other.run("login", input=f"{USERNAME}\n{PASSWORD}\n{enrollment.codes[0]}\n")
    assert result.code == 0 and result.out_lines[0] == WELCOME, result
    copied = tmp_path / "copied.key"
    copied.write_bytes(key_file.read_bytes())
    copied.chmod(0o600)
    result = other.run("login", input=f"{USERNAME}\n{PASSWORD}\n"
                       f"{pyotp.TOTP(enrollment.key).now()}\n",
                       env=other.env(ACCOUNTS_KEY_FILE=str(copied)))
    assert (result.code, result.stderr) == (0, "You are successfully authorized.\n"), result


# A writer held up by another.

def test_a_write_held_up_more_than_5_seconds_is_busy(pg, pgdb, client):
    """Another session holds the activation row (SELECT … FOR UPDATE) for 9 seconds: a write
    gives up after 5 seconds with the busy sentence (exit 3), status still reads at once, and
    once the lock is gone the write works."""
    activate(client)
    holder = subprocess.Popen(
        ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c",
         "BEGIN; SELECT state FROM accounts.activation WHERE id = 1 FOR UPDATE; "
         "SELECT pg_sleep(9); COMMIT;"],
        env=pg.env(pgdb), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while not [b for b in pg.backends(pgdb) if b["in_transaction"]]:
            assert time.monotonic() < deadline, "psql never took the lock"
            time.sleep(0.05)
        result, elapsed = client.timed("status")
        assert (result.code, result.stdout) == (0, status_lines(client.database)), result
        assert elapsed < 4.5, elapsed  # did not wait for the lock (a write gives up at 5 s)
        result, elapsed = client.timed(
            "user", "add", "--username", "bob", "--full-name", "Bob Builder", "--email",
            "bob@example.org", "--password-stdin", input="can we fix it yes we can\n")
        assert (result.code, result.stdout, result.stderr) == (
            3, "", f"The database {client.database} is busy: another program held it for more "
            "than 5 seconds. Try again later.\n"), result
        assert 4.5 <= elapsed <= 8.5, elapsed
        assert holder.poll() is None, "the lock was let go too early for this test to mean it"
    finally:
        holder.wait(timeout=30)
    result = client.run("user", "add", "--username", "bob", "--full-name", "Bob Builder",
                        "--email", "bob@example.org", "--password-stdin",
                        input="can we fix it yes we can\n")
    assert (result.code, result.stdout, result.stderr) == (0, "Account added: bob.\n", ""), result


# pam-auth.

PAM = {"PAM_USER": USERNAME, "PAM_SERVICE": "sshd", "PAM_RHOST": "203.0.113.9",
       "PAM_TTY": "ssh", "PAM_TYPE": "auth"}


def pam_auth(client, database, password=PASSWORD, **extra):
    env = dict(PAM, **extra)
    proc = subprocess.run([BIN, "pam-auth", "--database", database], input=password.encode(),
                          capture_output=True, env=env, cwd=str(client.root), timeout=60)
    return Result(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def test_pam_auth_on_postgresql(pg, pgdb, client):
    """pam-auth --database URI (pam_exec's environment: no HOME, no PG*): exit 0 silent for the
    right password, 1 for a wrong one; the events say where from."""
    activate(client)
    result = pam_auth(client, client.database)
    assert (result.code, result.stdout, result.stderr) == (0, "", ""), result
    result = pam_auth(client, client.database, password="not the password, but long enough")
    assert (result.code, result.stdout, result.stderr) == (1, "", ""), result
    details = pg.psql("SELECT kind || ' ' || coalesce(detail, '') FROM accounts.audit_event "
                      "ORDER BY id", pgdb).splitlines()
    assert details[-2:] == [
        "login_success pam service=sshd rhost=203.0.113.9 tty=ssh",
        "login_failure invalid user name or password; pam service=sshd rhost=203.0.113.9 "
        "tty=ssh"] or (details[-2].startswith("login_success") and "pam service=sshd" in
                       details[-2] and details[-1].startswith("login_failure")
                       and "pam service=sshd" in details[-1]), details


def test_pam_auth_ignores_pg_variables(pg, pgdb, client):
    """pam-auth unsets every PG* variable: `postgresql:///DB` with PGHOST, PGPORT, PGUSER and
    PGPASSWORD set does not reach the server they name (libpq's defaults are used, where no
    such server answers); nothing is counted in the store."""
    activate(client)
    events = pg.value("SELECT count(*) FROM accounts.audit_event", pgdb)
    bare = f"postgresql:///{pgdb}"
    result = pam_auth(client, bare, PGHOST=str(pg.socket), PGPORT=str(pg.port),
                      PGUSER="postgres", PGPASSWORD="x", PGDATABASE=pgdb)
    assert result.code == 3 and result.stdout == "", result
    assert len(result.err_lines) == 1, result
    assert result.err_lines[0].startswith("Cannot connect to the PostgreSQL server "), result
    assert str(pg.socket) not in result.stderr, result
    assert f" for the database {bare}: " in result.stderr, result
    assert pg.value("SELECT count(*) FROM accounts.audit_event", pgdb) == events
