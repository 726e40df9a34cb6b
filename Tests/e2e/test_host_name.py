"""One name for a host: the audit, the sessions, the host's user records' entry and `userdb
status` take ACCOUNTS_HOST_NAME, else the node name; the PAM paths, whose environment holds no
setting, the node name. So on a host that sets nothing, all of them agree.

The host is this machine under another node name (`unshare --uts`). Oracles: the store's rows."""

from conftest import PASSWORD, USERNAME
from pamhelp import pam_env
from userdbhelp import ok, on_host

UIDS = "23810-23819"


def hosts_of(device, kind) -> list:
    return [e["host"] for e in device.events() if e["event"] == kind]


def test_user_records_take_the_writing_hosts_name(activated, tmp_path):
    """With ACCOUNTS_HOST_NAME=box-9, `userdb enable` keeps its entry as box-9 (not the node
    name), its event and `userdb status` say box-9, and `userdb disable` finds it there."""
    env = activated.env(ACCOUNTS_HOST_NAME="box-9")
    folder = tmp_path / "rec"
    ok(on_host(activated, "node-a", "userdb", "enable", "--folder", str(folder), "--uids", UIDS,
               env=env))
    assert [row[0] for row in activated.query("SELECT host FROM userdb_host")] == ["box-9"]
    assert hosts_of(activated, "userdb_enabled") == ["box-9"]
    status = ok(on_host(activated, "node-a", "userdb", "status", env=env))
    assert status.out_lines[0] == "Host: box-9", status
    ok(on_host(activated, "node-a", "userdb", "disable", env=env))
    assert activated.query("SELECT host FROM userdb_host") == []


def test_user_records_audit_and_pam_agree_on_the_node_name(activated, tmp_path):
    """Without the setting, the user records' entry, a login's event and session, and
    pam-auth's event all name the node name."""
    env = activated.env(ACCOUNTS_HOST_NAME=None)
    ok(on_host(activated, "node-b", "userdb", "enable", "--folder", str(tmp_path / "rec"),
               "--uids", UIDS, env=env))
    ok(on_host(activated, "node-b", "login", input=f"{USERNAME}\n{PASSWORD}\n",
               env=env))
    result = on_host(activated, "node-b", "pam-auth", *activated.pam_args(),
                     input=PASSWORD, env=pam_env())
    assert (result.code, result.stdout, result.stderr) == (0, "", ""), result
    assert [row[0] for row in activated.query("SELECT host FROM userdb_host")] == ["node-b"]
    assert hosts_of(activated, "userdb_enabled") == ["node-b"]
    assert hosts_of(activated, "login_success") == ["node-b", "node-b"]
    assert [row[0] for row in activated.query("SELECT host FROM session")] == ["node-b"]
