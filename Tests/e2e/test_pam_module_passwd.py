"""A person changes their own password the way docs/pam.md says people on a host do: the
system's `passwd` (setuid root) run as themselves at a pseudo-terminal, its PAM service `passwd`
replaced by the shared stack, whose password group is the module's. The account is a Linux user
through its user record in /run/userdb. The person never runs `accounts` and never holds the
store's credentials: on the fleet's run the module reaches the store as the host's role, with
the host's credentials, which only root reads."""

import io
import os

import pexpect
import pytest

from conftest import NEW_PASSWORD, PASSWORD, WRONG_PASSWORD
from hostusers import passwd_entry, unique_name, user_records
from pammodule import replaced_service
from pamstack import events, shared_stack

CURRENT = "Current password: "
NEW = "New password: "
AGAIN = "New password again: "


def passwd_as(name) -> pexpect.spawn:
    """`passwd` run by the Linux user `name` (its uid and gid, no other group)."""
    uid, gid = passwd_entry(name)[2:4]
    command = ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "passwd"]
    child = pexpect.spawn(command[0], command[1:], encoding="utf-8", timeout=60,
                          env={"PATH": os.environ["PATH"], "TERM": "dumb"}, cwd="/")
    child.logfile_read = io.StringIO()
    return child


def finished(child) -> int:
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def test_a_person_changes_their_password_with_passwd(device):
    name = unique_name("pw")
    device.activate(username=name)
    with user_records(device), replaced_service("passwd", shared_stack(device)):
        child = passwd_as(name)
        child.expect_exact(CURRENT)
        child.sendline(PASSWORD)
        child.expect_exact(NEW)
        child.sendline(NEW_PASSWORD)
        child.expect_exact(AGAIN)
        child.sendline(NEW_PASSWORD)
        child.expect_exact("passwd: password updated successfully")
        assert finished(child) == 0, child.logfile_read.getvalue()
    assert device.login(name, NEW_PASSWORD).code == 0
    assert device.login(name, PASSWORD).code == 1
    # Logged with where it came from, as a login through the module is: `passwd` names its
    # service and sets neither PAM_RHOST nor PAM_TTY.
    assert [e for e in events(device) if e[0] == "password_changed"] == [
        ("password_changed", name, "pam service=passwd")]


@pytest.mark.front_end
def test_passwd_with_a_wrong_current_password_changes_nothing(device):
    name = unique_name("pw")
    device.activate(username=name)
    stored = device.stored_hash(name)
    with user_records(device), replaced_service("passwd", shared_stack(device)):
        child = passwd_as(name)
        child.expect_exact(CURRENT)
        child.sendline(WRONG_PASSWORD)
        # PAM_AUTHTOK_RECOVERY_ERR, in passwd's words.
        child.expect_exact("passwd: Authentication information cannot be recovered")
        child.expect_exact("passwd: password unchanged")
        assert finished(child) != 0, child.logfile_read.getvalue()
    assert device.stored_hash(name) == stored
    assert device.login(name, PASSWORD).code == 0
