"""The PostgreSQL store through the built binary: its secrets. A password in the URI is never
shown (status, status --json, the session file, every error sentence, the audit log and the
tables hold the URI without it, typed percent-encoded or not; one warning when it is on the
command line, none from ACCOUNTS_DATABASE); and the key file of a PostgreSQL store, kept
outside the database, in the user's configuration folder."""

import json
import os
import re
import secrets
import stat
import urllib.parse

import pyotp
import pytest

from conftest import PASSWORD, USERNAME, form
from pgcluster import (ACTIVATED, NEWER, WARNING, WELCOME, Client, activate, assert_clean,
                       assert_welcome, at_tcp, cannot_connect, dump_accounts_schema, login,
                       status_lines)
from pgcluster import client, pg, pgdb, scram_role  # noqa: F401
from secondfactor import enable

# These tests name their stores themselves (PostgreSQL databases of their own, SQLite files),
# whatever ACCOUNTS_TEST_BACKEND says: they run once, in the postgresql run.
pytestmark = pytest.mark.postgresql_only


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
    # What a person reads: the session file's token is random hex, which may hold any code.
    assert_clean(*(r.stdout + r.stderr for r in results))


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
        assert_clean(*(r.stdout + r.stderr for r in results))
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


# The key file of a PostgreSQL store.

def pg_rewind(cluster, database, username=USERNAME, steps=10):
    """Moves the account's last accepted step back, as if its last code was minutes ago."""
    changed = cluster.psql(
        f"UPDATE accounts.second_factor SET last_step = last_step - {steps} WHERE account_id = "
        f"(SELECT id FROM accounts.account WHERE username_key = '{username}') RETURNING 1",
        database)
    assert changed.split() == ["1"], changed


@pytest.mark.parametrize("config", ["XDG_CONFIG_HOME", "HOME"])
def test_no_key_file_for_a_postgresql_store(pg, pgdb, client, tmp_path, config):
    """2fa enable on a PostgreSQL store makes no key file ($XDG_CONFIG_HOME/accounts/
    postgresql.key, else ~/.config/accounts/postgresql.key) nor any other: the server keeps the
    secret. Another host, without any key file, logs in with a TOTP code, and with a recovery
    code."""
    env = client.env() if config == "XDG_CONFIG_HOME" else client.env(XDG_CONFIG_HOME=None)
    key_file = client.pg_key_file if config == "XDG_CONFIG_HOME" else \
        client.home / ".config" / "accounts" / "postgresql.key"
    activate(client)
    enrollment = enable(client, code=lambda key: pyotp.TOTP(key).now(), env=env)
    assert enrollment.result.code == 0, enrollment.result
    assert not key_file.exists()
    assert not any(p.name.endswith(".key") for p in client.root.rglob("*"))
    other = Client(tmp_path / "other-host", client.database)
    pg_rewind(pg, pgdb)
    result = other.run("login", input=f"{USERNAME}\n{PASSWORD}\n"
                       f"{pyotp.TOTP(enrollment.key).now()}\n")
    assert (result.code, result.stderr) == (0, "You are successfully authorized.\n"), result
    result = other.run("login", input=f"{USERNAME}\n{PASSWORD}\n{enrollment.codes[0]}\n")
    assert result.code == 0 and result.out_lines[0] == WELCOME, result
    assert not any(p.name.endswith(".key") for p in other.root.rglob("*"))
