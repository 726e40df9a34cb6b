"""The host's users as programs see them through NSS: a device's accounts served as systemd user
records from /run/userdb (libnss-systemd reads it, systemd running or not), each device with a
block of uids of its own, read back with getent and id; and users of /etc/passwd made with
useradd, for the promise that they keep working beside `accounts`.

- `USERDB`: /run/userdb, the records' folder.
- `user_records(device) -> context manager yielding range`: `accounts userdb enable --folder
  USERDB --uids FIRST-LAST` with a block of uids no other device of this run holds (the block
  range is yielded), `accounts userdb disable` afterwards.
- `unique_name(prefix) -> str`: a user or group name no other test uses.
- `account_with_home(device, name, *args) -> context manager`: `user add` of NAME (password
  BOB_PASSWORD, `args` added), its home folder /home/NAME removed afterwards whoever made it.
- `getent(database, key) -> Result` and `id_of(name) -> Result`: as the host answers.
- `passwd_entry(name) -> list[str]`: the seven fields of `getent passwd NAME` (asserted found).
- `local_user(name, password) -> context manager`: `useradd` of a user of /etc/passwd with that
  password in /etc/shadow, home /home/NAME not made; `userdel --remove` afterwards.
"""

from __future__ import annotations

import contextlib
import fcntl
import pwd
import secrets
import shutil
import subprocess

from constants import BOB_EMAIL, BOB_FULL_NAME, BOB_PASSWORD
from device import Result

USERDB = "/run/userdb"
# Blocks of uids for the tests' devices, handed out in turn (the next one kept in a counter file
# shared by the pytest-xdist workers); a block NSS already knows a uid of is passed over.
FIRST_TEST_UID = 50_000
BLOCK = 100
BLOCKS = 100
_COUNTER = "/run/lock/accounts-test-uid-block"


def _free(first: int) -> bool:
    for uid in range(first, first + BLOCK):
        try:
            pwd.getpwuid(uid)
        except KeyError:
            continue
        return False
    return True


def uid_block() -> range:
    with open(_COUNTER, "a+") as counter:
        fcntl.flock(counter, fcntl.LOCK_EX)
        counter.seek(0)
        text = counter.read().strip()
        block = int(text) if text else 0
        for _ in range(BLOCKS):
            first = FIRST_TEST_UID + (block % BLOCKS) * BLOCK
            block += 1
            if _free(first):
                counter.seek(0)
                counter.truncate()
                counter.write(f"{block % BLOCKS}\n")
                return range(first, first + BLOCK)
    raise AssertionError(f"every block of test uids from {FIRST_TEST_UID} is in use")


@contextlib.contextmanager
def user_records(device):
    uids = uid_block()
    enabled = device.run("userdb", "enable", "--folder", USERDB, "--uids",
                         f"{uids[0]}-{uids[-1]}")
    assert enabled.code == 0, enabled
    try:
        yield uids
    finally:
        disabled = device.run("userdb", "disable")
        assert disabled.code == 0, disabled


def unique_name(prefix: str) -> str:
    return f"{prefix}{secrets.token_hex(4)}"


@contextlib.contextmanager
def account_with_home(device, name: str, *args: str):
    added = device.run("user", "add", "--username", name, "--full-name", BOB_FULL_NAME,
                       "--email", BOB_EMAIL, "--password-stdin", *args,
                       input=BOB_PASSWORD + "\n")
    assert (added.code, added.stdout) == (0, f"Account added: {name}.\n"), added
    try:
        yield
    finally:
        shutil.rmtree(f"/home/{name}", ignore_errors=True)


def _run(*command: str) -> Result:
    done = subprocess.run(command, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    return Result(done.returncode, done.stdout, done.stderr)


def getent(database: str, key: str) -> Result:
    return _run("getent", database, key)


def id_of(name: str) -> Result:
    return _run("id", name)


def passwd_entry(name: str) -> list:
    found = getent("passwd", name)
    assert found.code == 0, f"NSS does not know {name}: {found}"
    return found.stdout.rstrip("\n").split(":")


@contextlib.contextmanager
def local_user(name: str, password: str):
    subprocess.run(["useradd", "--no-create-home", "--home-dir", f"/home/{name}", "--shell",
                    "/bin/bash", name], check=True)
    try:
        subprocess.run(["chpasswd"], input=f"{name}:{password}\n", text=True, check=True)
        yield
    finally:
        subprocess.run(["userdel", "--remove", name], capture_output=True)
        shutil.rmtree(f"/home/{name}", ignore_errors=True)
