"""The session table: its columns (schema v3), rows removed with their account, and a file
the v1 release made upgraded on login."""

import os
import shutil

import pytest

from conftest import BOB, BOB_PASSWORD, USERNAME
from sessionhelp import (COLUMNS, Client, FIXTURES, WELCOME, read_session_file,  # noqa: F401
                         sessions, token_hash, two, whoami)


# Schema v3.

def test_schema_v3_tables(activated):
    """After activation the database is at v3: session, second_factor and recovery_code exist,
    STRICT (recovery_code WITHOUT ROWID), with the contract's columns and the new audit kinds.
    PostgreSQL: the same tables and columns in the schema `accounts`, from its own migration v1."""
    if activated.postgresql:
        assert "v1" in activated.migrations(), activated.migrations()
    else:
        tables = dict(activated.query("SELECT name, sql FROM sqlite_master WHERE type = 'table'"))
        for name in ("session", "second_factor", "recovery_code"):
            assert name in tables, sorted(tables)
            assert "STRICT" in tables[name].upper()
        assert "WITHOUT ROWID" in tables["recovery_code"].upper()
        assert {"v1", "v2", "v3"} <= activated.migrations(), activated.migrations()
    assert activated.columns("session") == COLUMNS
    # PostgreSQL's v17 adds the secret its server encrypts (server_secret).
    assert activated.columns("second_factor") == [
        "account_id", "sealed_secret", "key_id", "last_step", "enabled_at"] + (
        ["server_secret"] if activated.postgresql else [])
    assert activated.columns("recovery_code") == ["account_id", "code_hash", "used_at"]
    kinds = {r[0] for r in activated.query("SELECT name FROM audit_kind")}
    assert {"logout", "session_revoked", "second_factor_enabled", "second_factor_disabled",
            "second_factor_reset", "recovery_codes_made", "recovery_code_used"} <= kinds


def test_session_rows_cascade_with_the_account(two):
    """The session table's account_id cascades: removing an account with sessions leaves
    `PRAGMA foreign_key_check` empty and no orphan row."""
    for name in ("b1", "b2", "b3"):
        Client(two, name).login(BOB, BOB_PASSWORD)
    assert len(sessions(two, BOB)) == 3
    assert two.run("user", "remove", BOB, "--yes").code == 0
    assert two.foreign_key_violations() == []
    assert two.query("SELECT count(*) FROM session WHERE account_id NOT IN "
                     "(SELECT id FROM account)") == [(0,)]
    assert two.foreign_keys("session") == [("account", "account_id", "id", "CASCADE")]


@pytest.mark.sqlite_only  # upgrading a file an old SQLite release made
def test_v1_database_upgrades_to_the_latest_on_login(device):
    """A v1 database (the fixture) is upgraded through v2 and v3 (sessions) to the latest schema
    by a login, which then starts a session; the v1 account and its history are kept."""
    folder = device.root / "v1"
    folder.mkdir(mode=0o700)
    device.db = folder / "accounts.sqlite3"
    shutil.copyfile(FIXTURES / "v1.sqlite3", device.db)
    os.chmod(device.db, 0o600)
    events_before = device.query("SELECT count(*) FROM audit_event")[0][0]
    result = device.login()
    assert (result.code, result.stderr) == (0, ""), result
    assert result.out_lines == [WELCOME, "Last login: Mon Nov 23 12:56:46 UTC 2026"]
    assert device.migrations() == {"v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9",
                                    "v10", "v12", "v13", "v14"}
    (row,) = sessions(device)
    assert row["token_hash"] == token_hash(read_session_file(device.session_file)[1])
    assert [a["username"].lower() for a in device.accounts()] == [USERNAME]
    assert device.query("SELECT count(*) FROM audit_event")[0][0] == events_before + 1
    assert whoami(device).code == 0
