"""A database the last release with GRDB made (Tests/fixtures/release.sqlite3, every row recorded
in release.expected.json by make_release_fixture.py) is read and written by this version with
nothing lost: every table compared row by row, the second factor and its recovery codes still
working, and the migrations still recorded in `grdb_migrations`."""

import json
import os
import pathlib
import shutil
import sqlite3

import pytest

pytestmark = pytest.mark.sqlite_only

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"
EXPECTED = json.loads((FIXTURES / "release.expected.json").read_text())
UNUSED_CODES = EXPECTED.pop("unused recovery codes")
PASSWORD = "correct horse battery staple"
# What the migrations after the fixture's add when this version opens it: their records, v9's
# kinds of events, v10's empty table, v12's change counter (0: the rows before it are no
# change) and its empty notes, v13's kinds of events, v14's offline ids (none: every event the
# release wrote is an online one). Nothing else may differ.
MIGRATED_SINCE = ["v9", "v10", "v12", "v13", "v14"]
ADDED_KINDS = ["access_refused", "fleet_host_added", "fleet_host_removed", "store_upgraded",
               "userdb_disabled", "userdb_enabled", "userdb_synced"]
ADDED_TABLES = {"pending_second_factor": [], "userdb_change": [],
                "userdb_generation": [{"id": 1, "generation": 0}]}
ADDED_COLUMNS = {"audit_event": {"offline_id": None}}


@pytest.fixture
def release(device):
    """The device's database is a copy of the release fixture: the file 0600 in a 0700 folder."""
    folder = device.root / "release"
    folder.mkdir()
    os.chmod(folder, 0o700)
    db = folder / "accounts.sqlite3"
    shutil.copyfile(FIXTURES / "release.sqlite3", db)
    os.chmod(db, 0o600)
    device.db = db
    return device


def tables(device):
    """Every row of every table, as the fixture maker records them (blobs in hex)."""
    db = sqlite3.connect(device.db)
    try:
        dump = {}
        for (table,) in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall():
            cursor = db.execute(f"SELECT * FROM {table} ORDER BY 1")
            columns = [c[0] for c in cursor.description]
            dump[table] = [dict(zip(columns, [v.hex() if isinstance(v, bytes) else v
                                              for v in row])) for row in cursor]
        return dump
    finally:
        db.close()


def test_fixture_is_what_the_maker_recorded(release):
    assert tables(release) == EXPECTED


def test_reads_every_account_and_event(release):
    accounts = {a["username"]: a for a in release.accounts()}
    assert sorted(accounts) == ["Alice", "bob", "carol"]
    assert accounts["bob"]["groups"] == ["staff"]
    events = release.events()
    assert [e["event"] for e in events] == [e["kind"] for e in EXPECTED["audit_event"]]
    assert [e["offline"] for e in events] == [False] * len(EXPECTED["audit_event"])
    assert upgraded(tables(release)) == EXPECTED


def upgraded(after):
    """`after` less exactly what the later migrations add (fails if they added anything else)."""
    after = dict(after)
    for table, rows in ADDED_TABLES.items():
        assert after.pop(table) == rows
    for table, columns in ADDED_COLUMNS.items():
        rows = [dict(row) for row in after[table]]
        for row in rows:
            assert {column: row.pop(column) for column in columns} == columns, row
        after[table] = rows
    migrations = [row["identifier"] for row in after["grdb_migrations"]]
    assert sorted(migrations, key=lambda m: int(m[1:])) == [
        row["identifier"] for row in EXPECTED["grdb_migrations"]] + MIGRATED_SINCE
    after["grdb_migrations"] = [row for row in after["grdb_migrations"]
                                if row["identifier"] not in MIGRATED_SINCE]
    kinds = [row["name"] for row in after["audit_kind"]]
    assert sorted(set(kinds) - {row["name"] for row in EXPECTED["audit_kind"]}) == ADDED_KINDS
    after["audit_kind"] = [row for row in after["audit_kind"] if row["name"] not in ADDED_KINDS]
    return after


def kept(expected, after):
    """The rows of `expected` missing from `after`, each compared on its own columns only (a
    later migration may add columns and tables)."""
    return {table: missing for table, rows in expected.items()
            if (missing := [row for row in rows
                            if row not in [{c: r.get(c) for c in row} for r in after[table]]])}


def test_a_write_keeps_every_row(release):
    """A group added: every row the release left is still there as it was (migrations
    included), and the group and its event are what is new in their tables."""
    result = release.run("group", "add", "ops")
    assert (result.code, result.stderr) == (0, ""), result
    after = tables(release)
    assert set(EXPECTED) <= set(after)
    changed = {"sqlite_sequence"}  # the log's last id moves on
    assert kept({t: r for t, r in EXPECTED.items() if t not in changed}, after) == {}
    for table, kind in [("account_group", "name"), ("audit_event", "kind")]:
        added = [row[kind] for row in after[table][len(EXPECTED[table]):]]
        assert added == {"account_group": ["ops"], "audit_event": ["group_added"]}[table]


def test_second_factor_and_recovery_codes_still_work(release):
    """The sealed secret and the recovery codes' hashes the release stored log Alice in."""
    result = release.run("login", input=f"alice\n{PASSWORD}\n{UNUSED_CODES[0]}\n")
    assert result.code == 0, result
    assert result.out_lines[0] == "Welcome back Alice Liddell!", result
    used = release.query("SELECT count(*) FROM recovery_code WHERE used_at IS NOT NULL")
    assert used == [(2,)]


def test_migrations_stay_recorded_in_the_same_table(release):
    assert release.run("unlock", "mallory").code == 0
    recorded = {row["identifier"] for row in tables(release)["grdb_migrations"]}
    assert recorded == {row["identifier"] for row in EXPECTED["grdb_migrations"]} | set(
        MIGRATED_SINCE)
