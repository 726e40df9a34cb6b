"""The events of logins the login cache answered while the server was away reach the server's
audit log once it is back: by the next command that reaches it or by `userdb sync`, each with its
own time, this host and the offline mark (`log`: `offline`; `--json`: "offline": true), exactly
once even when the program is killed (SIGKILL) after the server wrote an event and before the
cache forgot it. The server's step takes only the kinds an offline login writes.

Oracles: `log` and `log --json` (the administrator's view), the server's rows read by the test,
sqlite3 reading the cache's queue."""

import json
import os
import signal
import subprocess

import pytest

from cachehelp import CacheHost
from conftest import BIN, PASSWORD, USERNAME, WRONG_PASSWORD, store_query

pytestmark = pytest.mark.postgresql_only


@pytest.fixture
def host(activated):
    host = CacheHost(activated)
    host.enable()
    assert host.login().code == 0
    return host


def offline_events(host) -> list:
    result = host.device.run("log", "--json")
    assert result.code == 0, result
    return [event for event in map(json.loads, result.out_lines) if event["offline"]]


def test_the_next_login_delivers_the_offline_events_marked(host):
    assert host.offline_login(password=WRONG_PASSWORD).code == 1
    assert host.offline_login().code == 0
    queued = host.queued()
    assert [kind for kind, _, _ in queued] == ["login_failure", "login_success"], queued
    host.thirty_seconds_later()
    assert host.login().code == 0
    assert host.queued() == []
    events = offline_events(host)
    assert [(e["event"], e["user"], e["detail"]) for e in events] == [
        ("login_failure", USERNAME, "invalid user name or password"),
        ("login_success", USERNAME, "password")], events
    hosts = {e["host"] for e in events}
    assert len(hosts) == 1 and None not in hosts, hosts
    lines = [line for line in host.device.run("log").out_lines if line.endswith("  offline")]
    assert len(lines) == 2 and " on " in lines[0], lines
    online = [e for e in map(json.loads, host.device.run("log", "--json").out_lines)
              if not e["offline"] and e["event"] == "login_success"]
    assert len(online) == 2


def test_userdb_sync_delivers_them_too(host, tmp_path):
    assert host.offline_login().code == 0
    host.thirty_seconds_later()
    folder = tmp_path / "records"
    enabled = host.run("userdb", "enable", "--folder", str(folder))
    assert enabled.code == 0, enabled
    # enable reaches the server without delivering; sync delivers.
    assert len(host.queued()) == 1
    assert host.run("userdb", "sync").code == 0
    assert host.queued() == []
    assert [e["event"] for e in offline_events(host)] == ["login_success"]


def test_a_kill_between_the_servers_write_and_the_caches_leaves_one_event(host):
    assert host.offline_login().code == 0
    host.thirty_seconds_later()
    env = host.env(ACCOUNTS_TEST_STOP_AFTER_OFFLINE_DELIVERY="1")
    proc = subprocess.Popen([BIN, "login"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    proc.stdin.write(f"{USERNAME}\n{PASSWORD}\n".encode())
    proc.stdin.close()
    _, status = os.waitpid(proc.pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status) and os.WSTOPSIG(status) == signal.SIGSTOP
    proc.kill()
    proc.wait()
    # The server has it, the cache still queues it: the next command delivers it again.
    assert len(offline_events(host)) == 1 and len(host.queued()) == 1
    assert host.login().code == 0
    assert host.queued() == []
    assert len(offline_events(host)) == 1


def test_the_servers_step_takes_no_other_kind(host):
    rows = store_query(host.device.db, "SELECT count(*) FROM audit_event")
    with pytest.raises(Exception, match="writes no event of kind"):
        store_query(host.device.db,
                    "SELECT accounts.audit_offline_event(?, now(), 'account_removed', NULL, "
                    "NULL, NULL, 'h', 100)", "0" * 32)
    assert store_query(host.device.db, "SELECT count(*) FROM audit_event") == rows
