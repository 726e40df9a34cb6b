"""Logging in to the device over SSH as an `accounts` user, end to end: Debian's sshd (one per
module, on 127.0.0.1 at a high port, a config and host key of its own) with docs/pam.md's sshd PAM
service (pam_mkhomedir, then the shared stack: pam_unix first, then pam_accounts.so), the
device's accounts served to NSS as user records in /run/userdb (no useradd), keys found through
`accounts userdb ssh-authorized-keys`, and Debian's ssh client typing as a person does."""

import datetime
import os
import stat
from dataclasses import dataclass

import pytest

from conftest import BOB_FULL_NAME, BOB_PASSWORD, WRONG_PASSWORD, Device, Result, stamp_text
from hostusers import (
    USERDB, account_with_home, getent, id_of, local_user, passwd_entry, unique_name, user_records)
from pamstack import events, sshd_service
from secondfactor import enabled, oath, wrong_code
from sshd import (
    REFUSED, REFUSED_CODE, Sshd, authorized_key, prompt, refused_transcript, running_sshd,
    ssh_with_key, typed_in)

# One device and one sshd for the module: it outlives a test, so it runs on the SQLite store only
# (a PostgreSQL run drops each test's databases after it); the module's store code is the same.
# On one worker under Scripts/test's `--dist loadgroup`:
# the sshd host the module's tests log into is set up once, not once in each worker.
pytestmark = [pytest.mark.front_end, pytest.mark.xdist_group("sshd_login")]

PAST = "2020-01-01"


@dataclass
class Host:
    device: Device
    sshd: Sshd
    uids: range


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    device = Device(tmp_path_factory.mktemp("sshd-device"))
    device.activate(username=unique_name("owner"))
    with user_records(device) as uids, sshd_service(device) as service, \
            running_sshd(service, userdb=USERDB) as server:
        yield Host(device, server, uids)


def where(host) -> str:
    return f"pam service={host.sshd.service} rhost=127.0.0.1 tty=ssh"


def group_with_gid(device) -> tuple:
    group = unique_name("team")
    added = device.run("group", "add", group)
    assert added.code == 0, added
    found = getent("group", group)
    assert found.code == 0, f"NSS does not know the group {group}: {found}"
    return group, int(found.stdout.split(":")[2])


def test_a_key_login_runs_as_the_account_with_its_groups(host, tmp_path):
    """The key `user ssh-key add` gave is accepted; the session runs as the account's uid, its
    own group and its `accounts group`, as `id NAME` on the host says too; PAM's session stage
    logs the login (`ssh-key`) with where it came from."""
    group, gid = group_with_gid(host.device)
    name = unique_name("key")
    with account_with_home(host.device, name, "--group", group):
        key = authorized_key(host.device, name, tmp_path)
        ran = ssh_with_key(host.sshd, name, key, "id")
        uid = int(passwd_entry(name)[2])
        expected = f"uid={uid}({name}) gid={uid}({name}) groups={uid}({name}),{gid}({group})\n"
        assert ran == Result(0, expected, "")
        assert id_of(name) == Result(0, expected, "")
        assert uid in host.uids
        assert ("pam_session_opened", name, where(host)) in events(host.device)
        # sshd ran no auth: the session is the login, said to be a key's.
        assert ("login_success", name, f"ssh-key; {where(host)}") in events(host.device)


def test_the_host_lists_the_account_and_its_groups(host):
    """`getent passwd NAME` gives the account's uid, its own group, full name, home and shell;
    `getent group` lists it as a member of its group, and no longer once it left."""
    group, gid = group_with_gid(host.device)
    name = unique_name("nss")
    with account_with_home(host.device, name, "--group", group):
        uid = passwd_entry(name)[2]
        assert passwd_entry(name) == [name, "x", uid, uid, BOB_FULL_NAME, f"/home/{name}",
                                      "/bin/bash"]
        assert getent("group", group) == Result(0, f"{group}:x:{gid}:{name}\n", "")
        left = host.device.run("user", "edit", name, "--remove-group", group)
        assert left.code == 0, left
        assert getent("group", group) == Result(0, f"{group}:x:{gid}:\n", "")
        assert id_of(name) == Result(0, f"uid={uid}({name}) gid={uid}({name}) "
                                        f"groups={uid}({name})\n", "")


def test_the_first_login_makes_a_home_folder_only_the_account_can_enter(host, tmp_path):
    """No home before the first login; pam_mkhomedir makes it there from /etc/skel, owned by the
    account, mode 0700 (umask=0077), and the session starts in it."""
    name = unique_name("home")
    home = f"/home/{name}"
    with account_with_home(host.device, name):
        key = authorized_key(host.device, name, tmp_path)
        assert not os.path.lexists(home)
        ran = ssh_with_key(host.sshd, name, key, "pwd; ls -A")
        skeleton = "".join(entry + "\n" for entry in sorted(os.listdir("/etc/skel")))
        assert ran == Result(0, f"{home}\n{skeleton}", "")
        made = os.lstat(home)
        uid = int(passwd_entry(name)[2])
        assert (stat.S_ISDIR(made.st_mode), made.st_uid, made.st_gid,
                stat.S_IMODE(made.st_mode)) == (True, uid, uid, 0o700)


def test_a_password_then_a_verification_code(host):
    """keyboard-interactive through pam_accounts.so: `Password: ` and then `Verification code: `,
    each its own question; the right code lets the account in, a wrong one is refused, and the
    audit log names the sshd service, the remote host and `tty=ssh`."""
    name = unique_name("totp")
    with account_with_home(host.device, name):
        key = enabled(host.device, username=name, password=BOB_PASSWORD).key
        ran = typed_in(host.sshd, name, "id -un", ("Password", BOB_PASSWORD),
                            ("Verification code", oath(key)))
        assert ran == Result(0, f"{prompt(name, 'Password')}\r\n"
                                f"{prompt(name, 'Verification code')}\r\n{name}\r\n", "")
        refused = typed_in(host.sshd, name, "id -un", ("Password", BOB_PASSWORD),
                                ("Verification code", wrong_code(key)))
        assert refused == Result(REFUSED_CODE,
                                 refused_transcript(name, "Password", "Verification code"), "")
    logins = [(kind, detail) for kind, user, detail in events(host.device)
              if user == name and kind.startswith("login_")]
    assert logins == [("login_success", f"password and TOTP code; {where(host)}"),
                      ("login_failure", f"wrong verification code; {where(host)}")]


def test_a_wrong_password_is_refused_before_any_code(host):
    """A wrong password is refused at once: no `Verification code: ` is asked."""
    name = unique_name("wrong")
    with account_with_home(host.device, name):
        enabled(host.device, username=name, password=BOB_PASSWORD)
        refused = typed_in(host.sshd, name, "id -un", ("Password", WRONG_PASSWORD))
        assert refused == Result(REFUSED_CODE, refused_transcript(name, "Password"), "")


CHANGES = {
    "disabled": lambda name: ("user", "disable", name),
    "expired": lambda name: ("user", "edit", name, "--expires", PAST),
    "removed": lambda name: ("user", "remove", name, "--yes"),
}


@pytest.mark.parametrize("change", CHANGES)
def test_an_account_that_can_no_longer_log_in_is_refused_both_ways(host, tmp_path, change):
    """The key and the password both let the account in; once it is disabled, expired or
    removed, both are refused."""
    name = unique_name(change[:4])
    with account_with_home(host.device, name):
        key = authorized_key(host.device, name, tmp_path)
        assert ssh_with_key(host.sshd, name, key, "id -un") == Result(0, f"{name}\n", "")
        typed = typed_in(host.sshd, name, "id -un", ("Password", BOB_PASSWORD))
        assert typed == Result(0, f"{prompt(name, 'Password')}\r\n{name}\r\n", "")
        changed = host.device.run(*CHANGES[change](name))
        assert changed.code == 0, changed
        assert ssh_with_key(host.sshd, name, key, "id -un") == Result(
            REFUSED_CODE, "", REFUSED.format(name))
        refused = typed_in(host.sshd, name, "id -un", ("Password", BOB_PASSWORD))
        assert refused == Result(REFUSED_CODE, refused_transcript(name, "Password"), "")


def test_a_key_left_in_a_stale_record_does_not_let_a_disabled_account_in(host, tmp_path):
    """An account disabled in the store whose record still holds its key (as after a crash
    between the store's commit and the files): sshd accepts the key, and PAM's account stage
    (pam_accounts.so) refuses the login, so sshd closes the connection."""
    name = unique_name("stale")
    with account_with_home(host.device, name):
        key = authorized_key(host.device, name, tmp_path)
        assert ssh_with_key(host.sshd, name, key, "id -un") == Result(0, f"{name}\n", "")
        host.device.execute("UPDATE account SET disabled_at = ? WHERE username_key = ?",
                            stamp_text(datetime.datetime.now(datetime.timezone.utc)), name)
        # sshd ends the connection (a disconnect the client reports only at LogLevel INFO).
        assert ssh_with_key(host.sshd, name, key, "id -un") == Result(REFUSED_CODE, "", "")
        host.sshd.wait_for_log(f"Access denied for user {name} by PAM account configuration")


def test_a_user_of_etc_passwd_logs_in_through_pam_unix_first(host):
    """A user of /etc/passwd and /etc/shadow (useradd) logs in with its own password through
    pam_unix, stacked first: no code is asked, and the store records nothing of it; a wrong
    password of its is refused."""
    name = unique_name("local")
    with local_user(name, BOB_PASSWORD):
        ran = typed_in(host.sshd, name, "id -un", ("Password", BOB_PASSWORD))
        assert ran == Result(0, f"{prompt(name, 'Password')}\r\n{name}\r\n", "")
        assert [e for e in events(host.device) if e[1] == name] == []
        refused = typed_in(host.sshd, name, "id -un", ("Password", WRONG_PASSWORD))
        assert refused == Result(REFUSED_CODE, refused_transcript(name, "Password"), "")


def test_an_unknown_name_is_asked_the_password_and_refused(host):
    """A name neither NSS nor the store knows is asked the password like any other, then
    refused: the server does not tell who exists."""
    name = unique_name("nobody")
    refused = typed_in(host.sshd, name, "id -un", ("Password", BOB_PASSWORD))
    assert refused == Result(REFUSED_CODE, refused_transcript(name, "Password"), "")
    assert getent("passwd", name).code == 2
