"""The PostgreSQL store through the built binary: the connection and its faults. A server that
never answers (connect_timeout, PGCONNECT_TIMEOUT, the 10-second default), the server's notices
kept out of the output, a server stopped before or during a command, a connection killed in the
middle of a long import, a wrong password, a closed port, an address that does not answer, an
unknown database or role, and a write held up by another session for more than 5 seconds.

Tests that stop a server use a cluster of their own (Scripts/postgres start in a temporary
folder), never the shared one."""

import secrets
import signal
import subprocess
import time

import pexpect
import pytest

from conftest import PASSWORD, USERNAME, Result, form, screen
from pgcluster import (LOST_SUFFIX, WELCOME, Client, Cluster, activate, assert_clean,
                       assert_one_sentence, assert_welcome, at_tcp, cannot_connect,
                       cannot_connect_prefix, closed_port, csv_of, freeze_while_writing, login,
                       lost_prefix, on_socket, silent_listener, status_lines, stored_accounts)
from pgcluster import client, pg, pgdb, scram_role  # noqa: F401

# These tests name their stores themselves (PostgreSQL databases of their own, SQLite files),
# whatever ACCOUNTS_TEST_BACKEND says: they run once, in the postgresql run.
# On one worker under Scripts/test's `--dist loadgroup`:
# its own cluster is made once, not once in each worker.
pytestmark = [pytest.mark.postgresql_only, pytest.mark.xdist_group("postgres_connection")]


# A server that does not answer, and one that says too much.

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
