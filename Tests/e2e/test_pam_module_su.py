"""A real program through pam_accounts.so: `su - NAME` typed at a pseudo-terminal by an
unprivileged user (nobody), its PAM service `su-l` replaced by docs/pam.md's (pam_rootok, then the
shared stack: pam_unix first for the system's own users, then the module with use_first_pass).
An account of the device is a Linux user through its user record in /run/userdb (no useradd):
the password, then the code, then a shell as NAME. A user of /etc/passwd keeps logging in with
its own password through pam_unix, and the module never sees it."""

import pexpect
import pyotp
import pytest

from conftest import BOB_PASSWORD, PASSWORD, WRONG_PASSWORD
from hostusers import local_user, unique_name, user_records
from pamstack import CODE_PROMPT, PASSWORD_PROMPT, events, su, su_stack
from secondfactor import enabled

pytestmark = pytest.mark.front_end


def refused(name, password):
    child = su(name)
    child.expect_exact(PASSWORD_PROMPT)
    child.sendline(password)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus != 0
    assert "su: Authentication failure" in child.before, child.before


def test_su_from_an_unprivileged_terminal_asks_the_password_then_the_code(device):
    name = unique_name("su")
    device.activate(username=name)
    enrollment = enabled(device, username=name)
    with user_records(device), su_stack(device):
        child = su(name)
        child.expect_exact(PASSWORD_PROMPT)
        child.sendline(PASSWORD)
        child.expect_exact(CODE_PROMPT)
        child.sendline(pyotp.TOTP(enrollment.key).now())
        child.expect_exact(f"I am {name}")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0, child.before
        refused(name, WRONG_PASSWORD)
    logged = [e for e in events(device) if not e[0].startswith("userdb_")]
    kinds = [(kind, detail.split(" tty=")[0]) for kind, _, detail in logged[-4:]]
    assert kinds == [("login_success", "password and TOTP code; pam service=su-l"),
                     ("pam_session_opened", "pam service=su-l"),
                     ("pam_session_closed", "pam service=su-l"),
                     ("login_failure", "invalid user name or password; pam service=su-l")]


def test_a_user_of_etc_passwd_keeps_logging_in_through_pam_unix(activated):
    """A useradd-made user with its password in /etc/shadow: pam_unix, stacked first, lets it in
    with no code asked, and the store records nothing of it; a wrong password is refused."""
    name = unique_name("local")
    with local_user(name, BOB_PASSWORD), su_stack(activated):
        child = su(name)
        child.expect_exact(PASSWORD_PROMPT)
        child.sendline(BOB_PASSWORD)
        child.expect_exact(f"I am {name}")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0, child.before
        assert CODE_PROMPT not in child.logfile_read.getvalue()
        assert [event for event in events(activated) if event[1] == name] == []
        refused(name, WRONG_PASSWORD)
