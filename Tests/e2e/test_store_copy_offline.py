"""`accounts store copy` keeps which events a host's login cache delivered: a PostgreSQL store
holding a login the cache answered while the server was away is copied to an SQLite file and that
file to a new PostgreSQL database; on each copy `log` ends that event's line with `  offline` and
`log --json` says "offline": true, the event keeps its offline id, and the server's step that
writes a delivered event adds nothing for the same id (a host whose dequeue failed delivers it
again).

Oracles: `log` and `log --json` on the source and on each copy, the offline id read by sqlite3
and by the server's client, the server's row count around the step."""

import json

import pytest

from cachehelp import CacheHost
from conftest import USERNAME, new_store, store_query

pytestmark = pytest.mark.postgresql_only

OFFLINE_ID = "SELECT offline_id FROM audit_event WHERE offline_id IS NOT NULL"


@pytest.fixture
def delivered(activated):
    """A store whose log holds one login the login cache answered, delivered by the next
    online login."""
    host = CacheHost(activated)
    host.enable()
    assert host.login().code == 0
    assert host.offline_login().code == 0
    host.thirty_seconds_later()
    assert host.login().code == 0
    assert host.queued() == []
    return activated


def logs(device, store) -> tuple[list, list]:
    """`log` and `log --json` (each line parsed) of the store at `store`."""
    env = device.env()
    env["ACCOUNTS_DATABASE"] = str(store)
    text = device.run("log", env=env)
    assert (text.code, text.stderr) == (0, ""), text
    shown = device.run("log", "--json", env=env)
    assert (shown.code, shown.stderr) == (0, ""), shown
    return text.out_lines, [json.loads(line) for line in shown.out_lines]


def copy(device, source, target):
    result = device.run("store", "copy", "--from", str(source), "--to", str(target))
    assert (result.code, result.stderr) == (0, ""), result


def test_copy_to_sqlite_and_back_keeps_the_offline_event(delivered, tmp_path):
    lines, events = logs(delivered, delivered.db)
    [offline_line] = [line for line in lines if line.endswith("  offline")]
    assert [(e["event"], e["user"], e["offline"]) for e in events if e["offline"]] == [
        ("login_success", USERNAME, True)], events
    [(offline_id,)] = store_query(delivered.db, OFFLINE_ID)

    # To an SQLite file: the same log, the same id.
    file = tmp_path / "copy" / "accounts.sqlite3"
    copy(delivered, delivered.db, file)
    assert logs(delivered, file) == (lines, events)
    assert offline_line in logs(delivered, file)[0]
    assert store_query(file, OFFLINE_ID) == [(offline_id,)]

    # Back to a new PostgreSQL database: the same again, and the event delivered again is not
    # written twice.
    back = new_store(tmp_path / "back")
    copy(delivered, file, back)
    assert logs(delivered, back) == (lines, events)
    assert store_query(back, OFFLINE_ID) == [(offline_id,)]
    [(count,)] = store_query(back, "SELECT count(*) FROM audit_event")
    again = store_query(
        back, "SELECT accounts.audit_offline_event(?, now(), 'login_success', ?, ?, 'password', "
        "'web-2', 100)", offline_id, USERNAME, USERNAME.lower())
    assert again == [(False,)]
    assert store_query(back, "SELECT count(*) FROM audit_event") == [(count,)]
