"""docs/fleet.md as an operator follows it: a server with TLS only (a certificate a CA of the
test signed for `localhost`), SCRAM passwords in pg_hba.conf, the owner, administrator and host
roles with their passwords in private files, `store roles --apply`, `store hosts add`, and a
host reaching the store directly and through PgBouncer with `sslmode=verify-full`: every `sh`
block of the page typed into a root shell, every configuration block written where the test's
server and pooler read it (fleetpage.py says which names the test changes). Then what the page
says a host is told: a wrong password and a wrong CA refused in one sentence each, exit 3, and
the server stopped behind PgBouncer said by the program's own wait, before PgBouncer's. And
the tests' own pooler (Scripts/pgbouncer, the `pgfleet` run's) authenticates and waits as the
page's does.

Oracles: each command's exit status; the sentences `store roles` and `hosts add` print; the
host's `status` and a PAM login through `pam-auth` as the page's URI gives them; the refusals'
exact lines and exit codes; the settings Scripts/pgbouncer writes against the page's; psql
through it with and without the role's password file."""

import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest

from constants import BIN, PASSWORD
from fleetpage import HOST_ROLE, OWNER, PAGE, Fleet, blocks
from pgcluster import Cluster
from pgserver import Pooler, clean_environment

pytestmark = [pytest.mark.front_end, pytest.mark.postgresql_only,
              pytest.mark.xdist_group("fleet_page")]


@pytest.fixture(scope="module")
def fleet():
    """The page followed once, on a server of the module's own."""
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="accounts-fleet-page-", dir="/tmp"))
    fleet = Fleet(tmp)
    try:
        fleet.follow_page()
        yield fleet
    finally:
        fleet.remove()
        shutil.rmtree(tmp, ignore_errors=True)


def host_run(fleet, uri, *args, input=None):
    """The program as a host's root runs it: only the URI, no PG* variable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ACCOUNTS_", "PG"))}
    env.update(HOME=str(fleet.tmp / "kiosk-1"), LC_ALL="C.UTF-8")
    return subprocess.run([BIN, "--database", uri, *args], input=input, capture_output=True,
                          text=True, env=env, timeout=60)


def on_the_page(sentence_end: str) -> bool:
    """Whether the page says `sentence_end` (its lines joined as a reader reads them)."""
    return sentence_end in " ".join(PAGE.read_text().split())


def printed_by(fleet, start: str) -> str:
    return next(out for command, out in fleet.printed if command.startswith(start))


def test_the_owner_gives_the_roles_their_rights_and_the_administrator_adds_the_host(fleet):
    owner_uri = ("postgresql://accounts_owner@localhost:{}/accounts?sslmode=verify-full&"
                 f"sslrootcert={fleet.etc / 'ca.crt'}").format(fleet.server.port)
    assert (f"The role accounts_admin may now administer {owner_uri}, and the role "
            "accounts_host may log people in there.") in printed_by(
                fleet, 'accounts --database "$owner" store roles')
    assert (f"The host kiosk-1 now logs in as the role {HOST_ROLE} (a member of accounts_host);"
            " set how it authenticates in the server's pg_hba.conf.") in printed_by(
                fleet, 'accounts --database "$admin" store hosts add')


def test_the_host_reaches_the_store_directly_and_through_pgbouncer(fleet):
    for port in (fleet.server.port, fleet.pooler_port):
        uri = fleet.host_uri(port)
        result = host_run(fleet, uri, "status")
        assert (result.returncode, result.stdout, result.stderr) == (
            0, f"State: Activated\nDatabase: {uri}\n", ""), result


def test_pam_logs_a_person_in_with_the_hosts_password_file(fleet):
    env = {"PAM_USER": OWNER, "PAM_SERVICE": "login", "PATH": "/usr/bin:/bin"}
    result = subprocess.run([BIN, "pam-auth", "--database", fleet.host_uri(fleet.pooler_port)],
                            input=PASSWORD, capture_output=True, text=True, env=env,
                            timeout=60)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", ""), result


def test_a_wrong_password_is_refused_in_one_sentence(fleet):
    wrong = fleet.tmp / "wrong-pgpass"
    line = (fleet.etc / "pgpass").read_text()
    wrong.write_text(line.rsplit(":", 1)[0] + ":not the password\n")
    wrong.chmod(0o600)
    uri = fleet.host_uri(fleet.server.port, passfile=str(wrong))
    result = host_run(fleet, uri, "status")
    reason = f'password authentication failed for user "{HOST_ROLE}".'
    assert (result.returncode, result.stdout, result.stderr) == (
        3, "", f"Cannot connect to the PostgreSQL server at localhost:{fleet.server.port} for "
        f"the database {uri}: {reason}\n"), result
    assert on_the_page(reason)


def test_a_server_another_ca_signed_is_refused_in_one_sentence(fleet):
    other = fleet.tmp / "other-ca.crt"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-days", "1", "-subj", "/CN=other CA",
                    "-keyout", str(fleet.tmp / "other-ca.key"), "-out", str(other)],
                   check=True, capture_output=True)
    reason = ("the server's certificate could not be verified against the CA that sslrootcert "
              "names (another CA signed it, or it has expired).")
    for port in (fleet.server.port, fleet.pooler_port):
        uri = fleet.host_uri(port, sslrootcert=str(other))
        result = host_run(fleet, uri, "status")
        assert (result.returncode, result.stdout, result.stderr) == (
            3, "", f"Cannot connect to the PostgreSQL server at localhost:{port} for the "
            f"database {uri}: {reason}\n"), result
    assert on_the_page(reason)


def test_the_server_stopped_behind_pgbouncer_is_said_within_seconds(fleet):
    uri = fleet.host_uri(fleet.pooler_port)
    fleet.stop_server()
    # The program's own wait ends it (its sentence), before PgBouncer's query_wait_timeout.
    result = host_run(fleet, uri, "status")
    reason = "it gave no answer within 10 seconds."
    assert (result.returncode, result.stdout, result.stderr) == (
        3, "", f"Cannot connect to the PostgreSQL server at localhost:{fleet.pooler_port} for "
        f"the database {uri}: {reason}\n"), result
    assert on_the_page(reason)


# The settings of the page's pgbouncer.ini that Scripts/pgbouncer, the tests' pooler, shares.
SHARED_SETTINGS = ("auth_type", "pool_mode", "server_connect_timeout", "server_login_retry",
                   "query_wait_timeout", "client_login_timeout")


def settings(text: str) -> dict:
    return dict(tuple(part.strip() for part in line.split("=", 1))
                for line in text.splitlines() if "=" in line and not line.startswith("#"))


def test_the_tests_pooler_follows_the_pages_recipe(tmp_path):
    page = settings(next("\n".join(lines) for _, lines in blocks()
                         if lines[:1] == ["# /etc/pgbouncer/pgbouncer.ini"]))
    cluster = Cluster.start()
    pooler = Pooler(cluster, roles=("fleet_page_host",))
    try:
        ours = settings((pooler.dir / "pgbouncer.ini").read_text())
        assert {key: ours.get(key) for key in SHARED_SETTINGS} == {
            key: page[key] for key in SHARED_SETTINGS}
        command = ["psql", "-X", "-w", "-At", "-c", "SELECT current_user"]
        with_file = subprocess.run(
            [*command, pooler.uri("postgres", user="fleet_page_host")], capture_output=True,
            text=True, env=clean_environment(), timeout=60)
        assert (with_file.returncode, with_file.stdout) == (0, "fleet_page_host\n"), with_file
        uri = pooler.uri("postgres", user="fleet_page_host", passfile=str(tmp_path / "none"))
        without = subprocess.run([*command, uri], capture_output=True, text=True,
                                 env=clean_environment(), timeout=60)
        assert without.returncode == 2 and "no password supplied" in without.stderr, without
    finally:
        pooler.remove()
        cluster.remove()
