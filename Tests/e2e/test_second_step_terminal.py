"""The second factor at a terminal, the bare `accounts`: the second step after a right password,
its acknowledgment, and the way back to the start (Login) after a wrong or empty code."""

import re
import subprocess
import time

import pyotp
import pytest

from conftest import BIN, PASSWORD, answer, answer_secret, finish

# The front end: the same code on either store, so these run once, in the sqlite run.
pytestmark = pytest.mark.front_end


def enable(device) -> str:
    """Turns alice's second factor on through a pipe; returns the Base32 key."""
    proc = subprocess.Popen(
        [BIN, "2fa", "enable", "--username", "alice", "--qr", "none"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=device.env(), cwd=str(device.root))
    proc.stdin.write(PASSWORD + "\n")
    proc.stdin.flush()
    lines = []
    while not lines or not lines[-1].startswith("Key: "):
        lines.append(proc.stdout.readline())
    key = lines[-1].split()[1]
    out, err = proc.communicate(pyotp.TOTP(key).now() + "\n", timeout=30)
    assert proc.returncode == 0, (out, err)
    return key


def next_step_code(key: str) -> str:
    """The code of the step after the current one: within the window, and never a replay of
    the code enrollment used."""
    return pyotp.TOTP(key).at(int(time.time()) + 30)


def test_wrong_code_goes_back_to_login_then_home(activated):
    """A wrong code says so and goes back to Login; the next attempt with a right code is
    acknowledged, then Home; the session then opens the bare flow on Home."""
    key = enable(activated)
    child = activated.spawn()
    answer(child, "User name: ", "alice")
    answer_secret(child, "Password: ", PASSWORD)
    answer(child, "Verification code: ", "000000")
    child.expect_exact("Invalid verification code!")
    answer(child, "User name: ", "alice")
    answer_secret(child, "Password: ", PASSWORD)
    answer(child, "Verification code: ", next_step_code(key))
    child.expect_exact("You are successfully authorized.")
    child.expect_exact("Welcome back Alice Liddell!")
    assert finish(child) == 0
    again = activated.spawn()
    again.expect_exact("Welcome back Alice Liddell!")
    assert finish(again) == 0
    assert "User name" not in again.logfile_read.getvalue()


def test_empty_code_goes_back_to_the_start(activated):
    """Return alone at the code prompt goes back to Login, counting nothing."""
    enable(activated)
    child = activated.spawn()
    answer(child, "User name: ", "alice")
    answer_secret(child, "Password: ", PASSWORD)
    answer(child, "Verification code: ", "")
    child.expect_exact("Please fill all fields!")
    answer(child, "User name: ", "")
    answer_secret(child, "Password: ", "")
    child.expect_exact("Please fill all fields!")
    assert finish(child) == 1
    failures = activated.query("SELECT count(*) FROM login_throttle")
    assert failures == [(0,)]
    assert not re.search(r"wrong verification code", activated.run("log").stdout)
