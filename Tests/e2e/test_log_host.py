"""The host in the audit log and in session list: every event records the host that wrote it
(ACCOUNTS_HOST_NAME, else the node name; pam-auth the node name only), `log` ends its line with
`on <host>`, `log --json` has the key `host`, `log --host NAME` keeps exactly that host's events,
and `session list` shows the host a session was started on."""

import json
import os
import subprocess

import pytest

from conftest import (BIN, INVALID, PASSWORD, USERNAME, WRONG_PASSWORD, Result, form,
                      with_program_role)
from pamhelp import pam_auth, pam_env, silent

NODE = os.uname().nodename
RULE = "a host name of 1 to 253 bytes of UTF-8 without spaces or control characters"
TIMES = ["2026-11-23T10:00:00.000Z", "2026-11-23T10:00:01.000Z", "2026-11-23T10:00:02.000Z"]


def as_host(device, host, *args, input=None):
    """`args` run with ACCOUNTS_HOST_NAME=`host`."""
    return device.run(*args, input=input, env=device.env(ACCOUNTS_HOST_NAME=host))


def three_hosts(device):
    """alice activates on box-1, fails a login on box-2, logs in on box-1 (times fixed)."""
    activated = as_host(device, "box-1", "activate", input=form())
    assert activated.code == 0, activated
    failed = as_host(device, "box-2", "login", input=f"{USERNAME}\n{WRONG_PASSWORD}\n")
    assert (failed.code, failed.stderr) == (1, INVALID + "\n"), failed
    assert as_host(device, "box-1", "login", input=f"{USERNAME}\n{PASSWORD}\n").code == 0
    for number, when in enumerate(TIMES, start=1):
        device.execute("UPDATE audit_event SET occurred_at = ? WHERE id = ?", when, number)


def test_log_shows_the_host(device):
    """`log` ends each line with `on <host>`; `log --json` has `host`, then `offline` (false: these
    logins reached the server)."""
    three_hosts(device)
    result = device.run("log")
    assert (result.code, result.stderr) == (0, ""), result
    assert result.out_lines == [
        f"{TIMES[0]}  activation        {USERNAME}  on box-1",
        f"{TIMES[1]}  login_failure     {USERNAME}  (invalid user name or password)  on box-2",
        f"{TIMES[2]}  login_success     {USERNAME}  (password)  on box-1"]
    result = device.run("log", "--json")
    assert (result.code, result.stderr) == (0, ""), result
    assert result.out_lines == [
        f'{{"time":"{TIMES[0]}","event":"activation","user":"{USERNAME}","detail":null,'
        '"host":"box-1","offline":false}',
        f'{{"time":"{TIMES[1]}","event":"login_failure","user":"{USERNAME}",'
        '"detail":"invalid user name or password","host":"box-2","offline":false}',
        f'{{"time":"{TIMES[2]}","event":"login_success","user":"{USERNAME}",'
        '"detail":"password","host":"box-1","offline":false}']


def test_log_host_filter(device):
    """--host keeps exactly that host's events (no other case, no prefix) and combines with the
    other filters."""
    three_hosts(device)

    def kinds(*args):
        result = device.run("log", "--json", *args)
        assert (result.code, result.stderr) == (0, ""), result
        return [json.loads(line)["event"] for line in result.out_lines]

    assert kinds("--host", "box-1") == ["activation", "login_success"]
    assert kinds("--host", "box-2") == ["login_failure"]
    assert kinds("--host", "BOX-1") == kinds("--host", "box") == []
    assert kinds("--host", "box-1", "--event", "login_success", "--user", "ALICE",
                 "--since", "2026-11-23", "--limit", "5") == ["login_success"]
    assert kinds("--host", "box-2", "--event", "login_success") == []
    assert kinds("--host", "box-1", "--limit", "1") == ["login_success"]
    text = device.run("log", "--host", "box-2")
    assert (text.code, text.stdout, text.stderr) == (
        0, f"{TIMES[1]}  login_failure     {USERNAME}  (invalid user name or password)  on box-2\n",
        "")


@pytest.mark.empty_database
def test_log_host_empty_is_a_usage_error(device):
    """`log --host ""`: exit 2, the reason on stderr, nothing on stdout."""
    result = device.run("log", "--host", "")
    assert (result.code, result.stdout) == (2, ""), result
    assert result.stderr.startswith("Error: --host must not be empty.\n"), result


def test_node_name_without_the_setting(device):
    """Without ACCOUNTS_HOST_NAME (or with it empty) the events carry this machine's node name."""
    device.activate()
    assert as_host(device, "", "login", input=f"{USERNAME}\n{PASSWORD}\n").code == 0
    assert [(e["event"], e["host"]) for e in device.events()] == [
        ("activation", NODE), ("login_success", NODE)]


def run_with_host_bytes(device, value: bytes, *args, input=None) -> Result:
    """`args` with ACCOUNTS_HOST_NAME set to raw bytes (not necessarily UTF-8)."""
    env = {k.encode(): v.encode() for k, v in with_program_role(args, device.env()).items()}
    env[b"ACCOUNTS_HOST_NAME"] = value
    proc = subprocess.run([BIN, *args], input=input, capture_output=True, text=True, env=env,
                          cwd=str(device.root), timeout=60)
    return Result(proc.returncode, proc.stdout, proc.stderr)


def test_unusable_host_name_refused(device):
    """An ACCOUNTS_HOST_NAME with a space, a control character or an invisible one, over 253
    bytes, or not UTF-8: exit 2 with the rule, before anything is written."""
    device.activate()
    events = device.events()
    long = "h" * 254
    for value, shown in ((b"box 1", "box 1"), (b"box\t1", "box\\u{9}1"),
                         ("box\u202e1".encode(), "box\\u{202e}1"), (long.encode(), long),
                         (b"box\xff1", "box\\xff1")):
        result = run_with_host_bytes(device, value, "login", input=f"{USERNAME}\n{PASSWORD}\n")
        assert (result.code, result.stdout, result.stderr) == (
            2, "", f'ACCOUNTS_HOST_NAME must be {RULE}, not "{shown}".\n'), (value, result)
    assert device.events() == events
    longest = as_host(device, "h" * 253, "login", input=f"{USERNAME}\n{PASSWORD}\n")
    assert longest.code == 0, longest
    assert device.events()[-1]["host"] == "h" * 253


def test_pam_auth_ignores_the_setting(activated):
    """pam-auth takes the host from the system: its event has the node name, whatever
    ACCOUNTS_HOST_NAME says (even an unusable one)."""
    for value in ("fake-host", "not usable"):
        assert silent(pam_auth(activated, env=pam_env(ACCOUNTS_HOST_NAME=value))) == 0
        assert activated.events()[-1]["host"] == NODE


def test_session_list_shows_the_host(device):
    """`session list` shows the host each session was started on (HOST, last), `--json` too."""
    device.activate()
    assert as_host(device, "box-7", "login", input=f"{USERNAME}\n{PASSWORD}\n").code == 0
    result = device.run("session", "list")
    assert (result.code, result.stderr) == (0, ""), result
    assert result.out_lines[0].endswith("  2FA  HOST"), result.out_lines
    assert result.out_lines[1].endswith("  no   box-7"), result.out_lines
    result = device.run("session", "list", "--json")
    assert json.loads(result.stdout)["host"] == "box-7"
