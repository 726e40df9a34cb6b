"""`accounts pam-auth` through the real PAM stack: Debian's `pamtester` and a scratch service
file in /etc/pam.d whose auth runs pam-auth through pam_exec (right and wrong passwords, an
unknown name, a lock, TOTP, a disabled account, and an unknown name no cheaper than a wrong
password).

pamtester reads the password with libpam_misc's misc_conv: at a pipe it prints `Password: ` on
stderr and reads one line from standard input with read(2), dropping the newline; no terminal is
needed. pam_exec of Linux-PAM 1.5 then writes the password to the program with no newline and no
NUL. Its success line is `pamtester: successfully authenticated` on stdout; when the program exits
non-zero, pam_exec returns PAM_SYSTEM_ERR and pamtester exits 1."""

import os
import statistics
import subprocess

import pytest

from conftest import BIN, BOB, BOB_PASSWORD, PASSWORD, USERNAME, WRONG_PASSWORD, Result
from pamhelp import GUESS, INVALID_DETAIL, events, totp
from pammodule import scratch_service
from secondfactor import enabled

# The front end PAM reaches: pam_exec's environment, input, time limit and items, and what
# pam-auth answers. The store behind it is asked what login asks (the same repository calls,
# run on both stores by test_login.py and the test_session_*.py files), so these run once,
# in the sqlite run.
pytestmark = pytest.mark.front_end

# Timings use the release build when there is one, as test_timing.py does.


# Through the real PAM stack: pamtester, pam_exec and a scratch service file.

PAM_ITEMS = {"rhost": "198.51.100.7", "tty": "pts/3"}


def pam_service(device):
    """A scratch PAM service in /etc/pam.d whose auth runs pam-auth on the device's store
    through pam_exec; removed afterwards (pammodule.scratch_service)."""
    return scratch_service([
        f"auth required pam_exec.so expose_authtok quiet {os.path.abspath(BIN)} "
        f"pam-auth {' '.join(device.pam_args())}",
        "account required pam_permit.so"])


@pytest.fixture
def service(activated):
    """The scratch PAM service on the activated device's database."""
    with pam_service(activated) as name:
        yield name


def where(service_name):
    return f"pam service={service_name} rhost={PAM_ITEMS['rhost']} tty={PAM_ITEMS['tty']}"


def pamtester(service_name, password, user=USERNAME) -> Result:
    """`pamtester -I rhost=… -I tty=… SERVICE USER authenticate`, the password as one line on a
    pipe (misc_conv reads it without a terminal)."""
    items = [arg for key, value in PAM_ITEMS.items() for arg in ("-I", f"{key}={value}")]
    proc = subprocess.run(["pamtester", *items, service_name, user, "authenticate"],
                          input=(password + "\n").encode(), capture_output=True, timeout=60)
    return Result(proc.returncode, proc.stdout.decode("utf-8", "replace"),
                  proc.stderr.decode("utf-8", "replace"))


def authenticated(result) -> bool:
    """pamtester's verdict, after checking the prompt was read from the pipe."""
    assert result.stderr.startswith("Password: "), result
    if result.code == 0:
        assert result.stdout == "pamtester: successfully authenticated\n", result
        return True
    assert result.stdout == "", result
    return False


def test_pamtester_right_password(activated, service):
    """Through PAM the right password authenticates (pamtester exit 0); the log names the
    service, rhost and tty pamtester set."""
    result = pamtester(service, PASSWORD)
    assert result.code == 0 and authenticated(result)
    assert events(activated)[-1] == ("login_success", USERNAME, f"password; {where(service)}")


def test_pamtester_wrong_password(activated, service):
    """Through PAM a wrong password is refused (pamtester exit 1), logged with the pam detail."""
    result = pamtester(service, WRONG_PASSWORD)
    assert result.code == 1 and not authenticated(result)
    assert events(activated)[-1] == (
        "login_failure", USERNAME, f"{INVALID_DETAIL}; {where(service)}")


def test_pamtester_unknown_name(activated, service):
    """Through PAM an unknown user is refused (pamtester exit 1), logged under that name."""
    result = pamtester(service, PASSWORD, user="mallory")
    assert result.code == 1 and not authenticated(result)
    assert events(activated)[-1] == (
        "login_failure", "mallory", f"{INVALID_DETAIL}; {where(service)}")


def test_pamtester_locked(activated, service):
    """Through PAM, five wrong passwords lock alice: the right one is then refused (exit 1)
    and logged `locked; pam ...`."""
    for _ in range(5):
        assert not authenticated(pamtester(service, WRONG_PASSWORD))
    assert activated.account(USERNAME)["locked"] is True
    result = pamtester(service, PASSWORD)
    assert result.code == 1 and not authenticated(result)
    assert events(activated)[-1] == ("login_failure", USERNAME, f"locked; {where(service)}")


def test_pamtester_totp(activated, service):
    """Through PAM a TOTP account passes with password+code in one answer (exit 0); the
    password alone is refused (exit 1, `no verification code; pam ...`)."""
    enrollment = enabled(activated)
    refused = pamtester(service, PASSWORD)
    assert refused.code == 1 and not authenticated(refused)
    assert events(activated)[-1] == (
        "login_failure", USERNAME, f"no verification code; {where(service)}")
    result = pamtester(service, PASSWORD + totp(enrollment))
    assert result.code == 0 and authenticated(result)
    assert events(activated)[-1] == (
        "login_success", USERNAME, f"password and TOTP code; {where(service)}")


def test_pamtester_disabled(activated, service):
    """Through PAM a disabled account's right password is refused (exit 1)."""
    activated.add_user()
    assert activated.run("user", "disable", BOB).code == 0
    result = pamtester(service, BOB_PASSWORD, user=BOB)
    assert result.code == 1 and not authenticated(result)
    assert events(activated)[-1] == ("login_failure", BOB, f"account disabled; {where(service)}")


def pamtester_cpu(service_name, user, password) -> float:
    """CPU seconds of one whole pamtester run, pam_exec's child (reaped by it) included."""
    proc = subprocess.Popen(["pamtester", service_name, user, "authenticate"],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    proc.stdin.write((password + "\n").encode())
    proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 1, (user, password)
    return usage.ru_utime + usage.ru_stime


def test_pamtester_unknown_name_not_cheaper(device):
    """Through PAM at 1,200,000 iterations an unknown name costs no less than half of what a
    wrong password costs (CPU of the whole pamtester run, 3 alternated runs each; the direct
    runs above hold the 2x bound); all six attempts reached pam-auth (logged with the service)."""
    device.activate(fast=False)
    with pam_service(device) as name:
        wrong, unknown = [], []
        for turn in range(3):
            wrong.append(pamtester_cpu(name, USERNAME, GUESS))
            unknown.append(pamtester_cpu(name, f"nobody{turn}", GUESS))
    logged = [e for e in events(device)
              if e[0] == "login_failure" and e[2] == f"{INVALID_DETAIL}; pam service={name}"]
    assert len(logged) == 6, events(device)
    assert statistics.median(wrong) > 0.02, wrong
    assert statistics.median(unknown) > 0.5 * statistics.median(wrong), (wrong, unknown)
