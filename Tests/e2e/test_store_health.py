"""`accounts store health`: a PostgreSQL store's health for a person and a monitoring check.
Each `userdb sync` reports its host's contact and sync (migration v19); `store health` judges
them with the schema, the roles and the failed logins of the last hour: exit 0 healthy, 1
degraded (a host behind, a host whose syncs fail, too many failed logins), 3 unreachable (one
sentence, within the connect timeout); the host role is refused in the house's one sentence.

The hosts are this machine under other host names (ACCOUNTS_HOST_NAME), each with its own
records folder. Oracles: the store's rows (host_report, fleet_role, audit_event), read apart from
the program, and the exact lines and keys it prints."""

import json
import time

import pytest

from conftest import USERNAME, WRONG_PASSWORD
from pgcluster import (as_role, assert_one_sentence, at_tcp, cannot_connect,
                       cannot_connect_prefix, permission_prefix, silent_listener)
from pgcluster import client, pg, pgdb, roles  # noqa: F401
from stores import POSTGRES_MIGRATIONS
from upgradehelp import RELEASE
from userdbhelp import unique

HOST = "web-1"
SCHEMA = max(int(v[1:]) for v in POSTGRES_MIGRATIONS)


def on(device, host, *args, input=None):
    """`args` run on the host named `host`."""
    return device.run(*args, input=input, env=device.env(ACCOUNTS_HOST_NAME=host))


def with_records(device, tmp_path, host=HOST):
    """`host` keeps records (enabled, a first range of its own) and has synced once."""
    folder = tmp_path / f"{host}-userdb"
    base = unique_base()
    uids = f"{base}-{base + 99}"
    enabled = device.run("userdb", "enable", "--folder", str(folder), "--uids", uids,
                         env=device.env(ACCOUNTS_HOST_NAME=host))
    assert (enabled.code, enabled.stderr) == (0, ""), enabled
    synced = on(device, host, "userdb", "sync")
    assert (synced.code, synced.stderr) == (0, ""), synced
    return folder


def unique_base() -> int:
    # A range of each test's own, so that parallel tests never give the same number.
    return 100000 + (int(unique("")[:6], 16) % 4000) * 100


def report(device, host=HOST) -> dict:
    rows = device.query_dicts("SELECT * FROM accounts.host_report WHERE host = ?", host)
    assert len(rows) == 1, rows
    return rows[0]


def generation(device) -> int:
    return device.query("SELECT generation FROM accounts.userdb_generation")[0][0]


def roles_line(device) -> str:
    applied = device.query("SELECT applied_at FROM accounts.fleet_role")
    if not applied:
        return "Roles: never applied (one role owns the store)"
    return f"Roles: applied at {applied[0][0]}"


def row(*columns) -> str:
    widths = (20, 7, 24, 24, 8, 6)
    return "  ".join(c.ljust(w) for c, w in zip(columns, widths)) + "  " + columns[-1]


def facts(device, failed_logins=0) -> list:
    """The store's lines after the verdict and the problems."""
    return [f"Store: {device.db}", f"Schema: v{SCHEMA} (this program's: v{SCHEMA})",
            roles_line(device), f"Change counter: {generation(device)}",
            f"Failed logins in the last hour: {failed_logins}",
            row("HOST", "RECORDS", "LAST CONTACT", "LAST SYNC", "APPLIED", "FAILED", "RELEASE")]


def host_row(device, host=HOST) -> str:
    r = report(device, host)
    return row(host, "yes", r["contact_at"], r["synced_at"] or "never",
               str(r["applied_generation"]), str(r["failures"]), r["release"])


@pytest.mark.every_postgresql_run
def test_healthy_in_text_and_json(activated, tmp_path):
    """A host that synced: exit 0, the exact lines; --json with every key, the host's report
    as the store holds it."""
    with_records(activated, tmp_path)
    seen = report(activated)
    assert (seen["applied_generation"], seen["release"], seen["failures"]) == (
        generation(activated), RELEASE, 0), seen
    assert seen["synced_at"] == seen["contact_at"], seen

    result = activated.run("store", "health")
    assert (result.code, result.stderr) == (0, ""), result
    assert result.out_lines == ["Store health: healthy."] + facts(activated) + [
        host_row(activated)], result

    result = activated.run("store", "health", "--json")
    assert (result.code, result.stderr) == (0, ""), result
    body = json.loads(result.stdout)
    assert body == {
        "healthy": True, "problems": [], "location": str(activated.db),
        "schema": {"store": SCHEMA, "program": SCHEMA, "state": "current"},
        "rolesAppliedAt": (activated.query("SELECT applied_at FROM accounts.fleet_role")
                           or [[None]])[0][0],
        "generation": generation(activated), "failedLoginsLastHour": 0,
        "hosts": [{"name": HOST, "keepsRecords": True, "lastContact": seen["contact_at"],
                   "lastSync": seen["synced_at"], "applied": generation(activated),
                   "release": RELEASE, "failures": 0, "lastFailure": None, "unreached": 0,
                   "unreachedFirst": None, "unreachedLast": None, "unreachedReason": None,
                   "unreachedReportedAt": None, "problems": []}]}


@pytest.mark.every_postgresql_run
def test_a_sync_with_nothing_behind_writes_no_report(activated, tmp_path):
    """A second sync within the minute leaves the report as it was (the row's version
    unchanged): only a change, or a contact a minute old, is written."""
    with_records(activated, tmp_path)
    before = activated.query("SELECT xmin::text, contact_at FROM accounts.host_report")
    synced = on(activated, HOST, "userdb", "sync")
    assert (synced.code, synced.stderr) == (0, ""), synced
    assert activated.query("SELECT xmin::text, contact_at FROM accounts.host_report") == before
    # A contact a minute old is renewed by the next sync.
    activated.execute("UPDATE accounts.host_report SET contact_at = contact_at - "
                      "interval '61 seconds'")
    synced = on(activated, HOST, "userdb", "sync")
    assert (synced.code, synced.stderr) == (0, ""), synced
    assert activated.query("SELECT contact_at > ? FROM accounts.host_report",
                           before[0][1])[0][0] in (True, 1)


@pytest.mark.every_postgresql_run
def test_a_host_behind_is_degraded(activated, tmp_path):
    """An account added elsewhere after the host's sync: the host is behind (exit 1) once its
    last sync is older than --behind-minutes; within it, the timer has time and all is well."""
    with_records(activated, tmp_path)
    applied = report(activated)["applied_generation"]
    # The office keeps no records: its change reaches web-1 only at web-1's next sync.
    name = unique("b")
    added = on(activated, "office", "user", "add", "--username", name, "--full-name", "B B",
               "--email", f"{name}@example.org", "--password-stdin",
               input="correct horse battery staple\n")
    assert (added.code, added.stderr) == (0, ""), added
    assert generation(activated) > applied

    waiting = activated.run("store", "health")
    assert (waiting.code, waiting.out_lines[0]) == (0, "Store health: healthy."), waiting

    result = activated.run("store", "health", "--behind-minutes", "0")
    seen = report(activated)
    behind = (f"{HOST} is behind: its records hold change {applied} of "
              f"{generation(activated)}, unsynced since {seen['synced_at']}.")
    assert (result.code, result.stderr) == (1, ""), result
    assert result.out_lines == ["Store health: degraded (1 problem).", behind] + facts(
        activated) + [host_row(activated)], result
    body = json.loads(activated.run("store", "health", "--behind-minutes", "0",
                                    "--json").stdout)
    assert (body["healthy"], body["problems"], body["hosts"][0]["problems"]) == (
        False, [behind], [behind]), body

    # Its next sync catches up.
    synced = on(activated, HOST, "userdb", "sync")
    assert synced.code == 0, synced
    result = activated.run("store", "health", "--behind-minutes", "0")
    assert (result.code, result.out_lines[0]) == (0, "Store health: healthy."), result


@pytest.mark.every_postgresql_run
def test_failing_syncs_are_reported_and_cleared(activated, tmp_path):
    """Syncs that fail while the server answers (a folder others may write) are counted in a
    row with the last reason (exit 1); the next sync that works clears the count and keeps the
    reason."""
    folder = with_records(activated, tmp_path)
    folder.chmod(0o777)
    reason = (f"The user records folder {folder} cannot be used: group or others may write the "
              "folder (mode 777)")
    for _ in range(2):
        failed = on(activated, HOST, "userdb", "sync")
        assert (failed.code, failed.stderr) == (3, reason + ".\n"), failed
    seen = report(activated)
    assert (seen["failures"], seen["last_failure"]) == (2, reason + "."), seen

    result = activated.run("store", "health")
    failing = f"{HOST}'s last 2 syncs failed: {reason}."
    assert (result.code, result.stderr) == (1, ""), result
    assert result.out_lines == ["Store health: degraded (1 problem).", failing] + facts(
        activated) + [host_row(activated)], result
    # --failures 3: two in a row are not yet a problem.
    relaxed = activated.run("store", "health", "--failures", "3")
    assert (relaxed.code, relaxed.out_lines[0]) == (0, "Store health: healthy."), relaxed

    folder.chmod(0o755)
    synced = on(activated, HOST, "userdb", "sync")
    assert (synced.code, synced.stderr) == (0, ""), synced
    result = activated.run("store", "health", "--json")
    assert result.code == 0, result
    host = json.loads(result.stdout)["hosts"][0]
    assert (host["failures"], host["lastFailure"], host["problems"]) == (0, reason + ".", [])


@pytest.mark.every_postgresql_run
def test_failed_logins_are_counted_and_a_login_is_contact(activated, tmp_path):
    """Two wrong passwords on the host: counted for the last hour, degraded only from
    --failed-logins on; the host's last contact is its newest event when that is later than its
    report."""
    with_records(activated, tmp_path)
    for _ in range(2):
        failed = on(activated, HOST, "login", input=f"{USERNAME}\n{WRONG_PASSWORD}\n")
        assert failed.code == 1, failed
    newest = activated.query(
        "SELECT occurred_at FROM accounts.audit_event WHERE host = ? ORDER BY id DESC LIMIT 1",
        HOST)[0][0]

    result = activated.run("store", "health", "--json")
    assert result.code == 0, result
    body = json.loads(result.stdout)
    assert body["failedLoginsLastHour"] == 2, body
    assert body["hosts"][0]["lastContact"] == max(newest, report(activated)["contact_at"])

    result = activated.run("store", "health", "--failed-logins", "2")
    assert (result.code, result.stderr) == (1, ""), result
    assert result.out_lines[:2] == ["Store health: degraded (1 problem).",
                                    "2 failed logins in the last hour."], result
    assert "Failed logins in the last hour: 2" in result.out_lines
    below = activated.run("store", "health", "--failed-logins", "3")
    assert below.code == 0, below


@pytest.mark.every_postgresql_run
def test_unreachable_is_one_sentence_within_the_connect_timeout(device, tmp_path):
    """A server that never answers: exit 3 and one sentence once the URI's connect_timeout
    has passed; a port where nothing listens: at once."""
    listener = silent_listener()
    port = listener.getsockname()[1]
    try:
        uri = f"postgresql://postgres@127.0.0.1:{port}/accounts?sslmode=disable&connect_timeout=2"
        started = time.monotonic()
        result = device.run("store", "health", "--database", uri, timeout=40)
        elapsed = time.monotonic() - started
        # libpq's own words: the URI's connect_timeout ended it, not a wait of ours.
        assert (result.code, result.stdout, result.stderr) == (3, "", cannot_connect(
            at_tcp(port), uri, "timeout expired") + "\n"), result
        assert elapsed >= 1.5, elapsed
    finally:
        listener.close()
    result = device.run("store", "health", "--json", "--database", uri)
    assert_one_sentence(result, cannot_connect_prefix(at_tcp(port), uri))


@pytest.mark.postgresql_only
def test_the_host_role_is_refused(pg, pgdb, tmp_path, roles):
    """The host role may not read the audit log: one sentence, exit 3, nothing on stdout; its
    own syncs' report is a step it may call."""
    _, host = roles
    fleet = as_role(pg, pgdb, tmp_path, host, "fleet")
    result = fleet.run("store", "health")
    reason = assert_one_sentence(result, permission_prefix(fleet.database, reading=True), ")."
                                 )
    assert reason == "permission denied for table fleet_role", result
    granted = pg.psql("SELECT has_function_privilege("
                      f"'{host}', 'accounts.host_report_sync(text, bigint, text, text)', "
                      "'EXECUTE'), has_function_privilege("
                      f"'{host}', 'accounts.host_report_sync(text, bigint, text, text, integer, "
                      "timestamptz, timestamptz, text)', 'EXECUTE'), has_table_privilege("
                      f"'{host}', 'accounts.host_report', 'SELECT')", pgdb).strip()
    assert granted == "t|t|f", granted


@pytest.mark.sqlite_only
def test_an_sqlite_store_is_refused(activated):
    """An SQLite store has no server or hosts to watch: a usage error (exit 2)."""
    result = activated.run("store", "health")
    assert (result.code, result.stdout) == (2, ""), result
    assert result.err_lines[0] == (
        "Error: store health needs a PostgreSQL store (a postgresql:// URI in --database or "
        "ACCOUNTS_DATABASE): an SQLite store has no server or hosts to watch."), result
