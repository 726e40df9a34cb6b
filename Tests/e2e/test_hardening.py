"""A crash cannot put a typed password on disk or in another process's hands: the program has
no core file size and is not dumpable from the start."""

import os
import pathlib
import shutil
import subprocess
import tempfile

import pexpect
import pytest
from conftest import AS_ROOT, BIN, EMAIL, FULL_NAME, NOBODY, USERNAME, nobody_binary

# The front end: the same code on either store, so these run once, in the sqlite run.
pytestmark = pytest.mark.front_end


@pytest.fixture(scope="module")
def binary():
    """The binary, copied where `nobody` can run it when the tests run as root."""
    return nobody_binary() if AS_ROOT else BIN


@pytest.fixture
def typing_password(binary, device):
    """`accounts activate` on a terminal, waiting at the password prompt with echo off."""
    folder = tempfile.mkdtemp(prefix="accounts-hardening-", dir="/tmp")
    os.chmod(folder, 0o777)
    database = str(device.db) if device.postgresql else os.path.join(folder, "db.sqlite3")
    env = device.env(ACCOUNTS_DATABASE=database)
    command = [*NOBODY, binary, "activate"]
    child = pexpect.spawn(command[0], command[1:], env=env, cwd=folder, encoding="utf-8",
                          timeout=10)
    for prompt, answer in [("User name: ", USERNAME), ("Full name: ", FULL_NAME),
                           ("E-mail address: ", EMAIL)]:
        child.expect_exact(prompt)
        child.sendline(answer)
    child.expect_exact("Password: ")
    assert child.waitnoecho(timeout=5)
    yield child
    child.close(force=True)
    shutil.rmtree(folder)


def test_core_file_size_is_zero(typing_password):
    """The core file size limit is 0, soft and hard, while a password is typed."""
    limits = pathlib.Path(f"/proc/{typing_password.pid}/limits").read_text().splitlines()
    (core,) = [line for line in limits if line.startswith("Max core file size")]
    assert core.split()[4:6] == ["0", "0"], core


def test_not_dumpable(typing_password):
    """A process of the same user cannot read the program's environment from /proc, as it
    could a dumpable process's; what /proc shows everyone is still there."""
    proc = f"/proc/{typing_password.pid}"
    shown = subprocess.run([*NOBODY, "cat", f"{proc}/cmdline"], capture_output=True)
    assert (shown.returncode, shown.stdout.split(b"\0")[-2]) == (0, b"activate")
    closed = subprocess.run([*NOBODY, "cat", f"{proc}/environ"], capture_output=True)
    assert closed.returncode != 0 and b"Permission denied" in closed.stderr, closed
