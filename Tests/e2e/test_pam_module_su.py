"""A real program through pam_accounts.so: `su - NAME` typed at a pseudo-terminal by an
unprivileged user (nobody), its PAM service `su-l` stacked as README shows (pam_unix first for
the system's own users, then the module with use_first_pass), for an account with a second
factor: the password, then the code, then a shell as NAME. NSS does not know `accounts` users
yet, so the test makes a matching system user with useradd (no password) and removes it."""

import contextlib
import os
import secrets
import shutil
import subprocess

import pexpect
import pyotp
import pytest

from conftest import NOBODY_UID, PASSWORD, WRONG_PASSWORD
from pamstack import CODE_PROMPT, PASSWORD_PROMPT, events, module, options
from secondfactor import enabled

pytestmark = pytest.mark.front_end

SU_SERVICE = "/etc/pam.d/su-l"


@contextlib.contextmanager
def system_user(name):
    subprocess.run(["useradd", "--no-create-home", "--home-dir", "/", "--shell", "/bin/sh",
                    name], check=True)
    try:
        yield
    finally:
        subprocess.run(["userdel", name], check=True)


@contextlib.contextmanager
def su_stack(device):
    """/etc/pam.d/su-l replaced by README's stack for the device's store, put back after."""
    module_options = " ".join([str(module()), *options(device)])
    stack = [
        "auth sufficient pam_rootok.so",
        "auth [success=done default=ignore] pam_unix.so",
        f"auth required {module_options} use_first_pass",
        f"account [success=ok user_unknown=ignore default=bad] {module_options}",
        "account required pam_unix.so",
        "session required pam_unix.so",
        f"session optional {module_options}",
    ]
    saved = SU_SERVICE + ".accounts-test"
    shutil.copy2(SU_SERVICE, saved)
    try:
        with open(SU_SERVICE, "w") as f:
            f.write("".join(line + "\n" for line in stack))
        yield
    finally:
        os.replace(saved, SU_SERVICE)


def su(name) -> pexpect.spawn:
    command = ["setpriv", f"--reuid={NOBODY_UID}", f"--regid={NOBODY_UID}", "--clear-groups",
               "su", "-", name, "-c", "id -un"]
    return pexpect.spawn(command[0], command[1:], encoding="utf-8", timeout=60,
                         env={"PATH": os.environ["PATH"], "TERM": "dumb"}, cwd="/")


def test_su_from_an_unprivileged_terminal_asks_the_password_then_the_code(device):
    name = f"su{secrets.token_hex(3)}"
    device.activate(username=name)
    enrollment = enabled(device, username=name)
    with system_user(name), su_stack(device):
        child = su(name)
        child.expect_exact(PASSWORD_PROMPT)
        child.sendline(PASSWORD)
        child.expect_exact(CODE_PROMPT)
        child.sendline(pyotp.TOTP(enrollment.key).now())
        child.expect_exact(name)
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0, child.before
        refused = su(name)
        refused.expect_exact(PASSWORD_PROMPT)
        refused.sendline(WRONG_PASSWORD)
        refused.expect(pexpect.EOF)
        refused.close()
        assert refused.exitstatus != 0
        assert "Authentication failure" in refused.before, refused.before
    kinds = [(kind, detail.split(" tty=")[0]) for kind, _, detail in events(device)[-4:]]
    assert kinds == [("login_success", "pam service=su-l"),
                     ("pam_session_opened", "pam service=su-l"),
                     ("pam_session_closed", "pam service=su-l"),
                     ("login_failure", "invalid user name or password; pam service=su-l")]
