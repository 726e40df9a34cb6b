"""`accounts userdb status|enable|disable|sync` as they refuse or report, and `--home`/`--shell`
with what `user show` and `user list --json` tell: the settings of user records (the records
themselves: test_userdb_nss.py, test_userdb_folder.py)."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest

from conftest import BIN, PASSWORD, Device, store_query
from device import with_program_role
from userdbhelp import add, enable, ok, sshd_line, userdb


def test_status_when_off(activated):
    """status --json with every key present; text says off; disable and sync refuse (exit 1)."""
    status = json.loads(ok(userdb(activated, "status", "--json")).stdout)
    assert status == {"host": os.uname().nodename, "enabled": False, "folder": None,
                      "uids": "20000-29999", "users": 0, "groups": 0, "behind": 0,
                      "foreign": [], "skipped": [], "sshdRefusal": None}
    host = os.uname().nodename
    for command in ("disable", "sync"):
        result = userdb(activated, command)
        assert (result.code, result.stdout, result.stderr) == (
            1, "", f"This host ({host}) keeps no user records of this store; run accounts "
            "userdb enable first.\n")


@pytest.mark.parametrize("uids", ["20000", "30000-20000", "a-b", "20000-29999-1", "+2000-3000",
                                  "1000-4294967296", "99999999999-99999999999"])
def test_enable_refuses_a_range(activated, uids):
    result = userdb(activated, "enable", "--uids", uids)
    assert result.code == 2, result
    assert f"--uids {uids} is not valid: give FIRST-LAST, two numbers from 1000 to 2147483647, " \
        "FIRST not above LAST." in result.stderr


@pytest.mark.parametrize("uids,reserved,whose", [
    ("1-2", "0-999", "the system's own users and groups"),
    ("999-2000", "0-999", "the system's own users and groups"),
    ("1000-60000", "60000-65535", "the numbers Debian allocates itself or reserves"),
    ("50000-60001", "60001-60513", "systemd-homed's users"),
    ("60514-60514", "60514-60577", "the host users systemd-nspawn maps into containers"),
    ("61184-61184", "61184-65519", "systemd's dynamic users (DynamicUser=)"),
    ("65534-65534", "65534-65534", "nobody"),
    ("65535-65535", "65535-65535", "the 16-bit -1, which some programs take for no user"),
    ("65520-65533", "60000-65535", "the numbers Debian allocates itself or reserves"),
    ("200000-600000", "524288-1879048191", "systemd's container ranges"),
    ("2147352576-2147352576", "2147352576-2147418111",
     "systemd's foreign ranges (mapped users of other systems)"),
    ("2147483000-2147483648", "2147483648-4294967294",
     "the numbers many tools read as negative (signed 32-bit)"),
    ("4294967295-4294967295", "4294967295-4294967295", "-1, which means no user to the kernel"),
])
def test_enable_refuses_a_reserved_range(activated, uids, reserved, whose):
    """Each range systemd or Debian reserves is refused, naming the first one it overlaps."""
    result = userdb(activated, "enable", "--uids", uids)
    assert (result.code, result.stdout) == (2, ""), result
    assert f"--uids {uids} overlaps {reserved}, {whose}: choose a range outside it (such as " \
        "200000-399999)." in result.stderr


@pytest.mark.parametrize("option,path", [("--shell", "bin/sh"), ("--home", "/home/a:b"),
                                         ("--home", "/home/a/"), ("--shell", "/bin/../sh"),
                                         ("--home", "/home/a\tb")])
def test_home_and_shell_refused(activated, option, path):
    """A relative path, ':', a trailing /, .. or a control character: one sentence, exit 2, for
    add and edit, nothing stored."""
    for args in (["user", "add", "--username", "zed", "--full-name", "Z", "--email",
                  "z@example.org", "--password-stdin"], ["user", "edit", "alice"]):
        result = activated.run(*args, option, path, input=PASSWORD + "\n")
        assert result.code == 2, result
        assert f"{option} " in result.stderr and "is not valid: give an absolute path without " \
            "':', control characters, empty, . or .. parts, or a trailing /." in result.stderr
    assert [a["username"] for a in activated.accounts()] == ["alice"]


def test_show_and_list_tell_uid_home_shell(activated, tmp_path):
    add(activated, "bob", "--shell", "/bin/sh", "--home", "/srv/bob")
    bob = activated.account("bob")
    assert (bob["uid"], bob["home"], bob["shell"]) == (None, "/srv/bob", "/bin/sh")
    assert activated.account("alice")["home"] == "/home/alice"
    enable(activated, tmp_path / "rec", "23900-23909")
    listed = {a["username"]: (a["uid"], a["home"], a["shell"]) for a in activated.accounts()}
    assert listed == {"alice": (23900, "/home/alice", "/bin/bash"),
                      "bob": (23901, "/srv/bob", "/bin/sh")}
    shown = ok(activated.run("user", "show", "bob")).out_lines
    assert ["UID: 23901", "Home: /srv/bob", "Shell: /bin/sh"] == shown[12:15]
    ok(activated.run("user", "edit", "bob", "--shell", "/bin/dash"))
    assert json.loads((tmp_path / "rec" / "bob.user").read_text())["shell"] == "/bin/dash"
    assert activated.events()[-1]["detail"] == "shell /bin/dash"


def test_status_tells_each_account_without_a_record_once(activated, tmp_path):
    """An account named as a user of this system (Debian's `daemon`) has no record: status
    says why once, after the fields, and enable once on standard error."""
    folder = tmp_path / "rec"
    add(activated, "daemon")
    why = "No user record for daemon: this system already has a user or group of that name.\n"
    enable(activated, folder, "24980-24989", stderr=why)
    result = ok(userdb(activated, "status"))
    assert result.stdout == (
        f"Host: {os.uname().nodename}\nUser records: on\nFolder: {folder}\nUIDs: 24980-24989\n"
        f"Users: 1\nGroups: 1\nBehind: no\nForeign files: -\n{sshd_line(BIN)}\n{why}")
    ok(userdb(activated, "disable"))


def test_status_says_whether_sshd_would_run_the_program(activated, tmp_path):
    """The same program copied where sshd runs an AuthorizedKeysCommand (every folder root's,
    closed to others) and where it refuses one (a folder others may write, as /tmp): status
    says so, in sshd's words, as text and in --json."""
    enable(activated, tmp_path / "rec", "24990-24999")
    safe = pathlib.Path(tempfile.mkdtemp(prefix="accounts-test-", dir="/opt"))
    unsafe = tmp_path / "open"
    try:
        safe.chmod(0o755)
        unsafe.mkdir()
        unsafe.chmod(0o777)
        for folder in (safe, unsafe):
            shutil.copy2(BIN, folder / "accounts")
            (folder / "accounts").chmod(0o755)
        env = with_program_role(["userdb", "status"], activated.env())
        answers = {}
        for folder in (safe, unsafe):
            program = str(folder / "accounts")
            text = subprocess.run([program, "userdb", "status"], env=env, capture_output=True,
                                  text=True, cwd=str(activated.root))
            assert text.returncode == 0, text
            line = [l for l in text.stdout.splitlines() if l.startswith("SSH keys command: ")]
            assert line == [sshd_line(program)], text.stdout
            shown = subprocess.run([program, "userdb", "status", "--json"], env=env,
                                   capture_output=True, text=True, cwd=str(activated.root))
            answers[folder] = json.loads(shown.stdout)["sshdRefusal"]
        assert sshd_line(str(safe / "accounts")) == "SSH keys command: ok"
        assert answers[safe] is None
        assert f'"{unsafe}/accounts": bad ownership or modes for directory {unsafe})' in \
            answers[unsafe], answers
    finally:
        shutil.rmtree(safe, ignore_errors=True)
    ok(userdb(activated, "disable"))


def test_each_store_draws_an_identity_of_its_own(tmp_path):
    """Two stores draw two identities (what names their records' manifest in a host's folder),
    whatever the store: on PostgreSQL every test's database is a copy of one template, each
    copy given an identity of its own (stores.py)."""
    identities = set()
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        device = Device(tmp_path / name)
        device.activate()
        identities.add(store_query(device.db, "SELECT store_id FROM userdb_setting")[0][0])
    assert len(identities) == 2, identities
