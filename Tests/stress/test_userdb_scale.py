"""A store of 100,000 accounts (STRESS_USERDB_ACCOUNTS) keeping user records, with uids
200000-399999: enable writes a record for every account, the last account's record has the
last number given; a change writes only its files (and the folder's counter moves); a kill
between a change's commit and its files is repaired by the next sync; status finds nothing
behind; a removal takes its files; disable leaves the folder byte for byte as before.

The store is made as the bench makes its big stores (Tests/bench/million.py: the real
`activate` and one `user add`, the rest inserted with Python's sqlite3, hashes at 1,000
PBKDF2 iterations), once per run of this module. The folder is where NSS does not look (the
records are read as files): in memory (/dev/shm) where that is a tmpfs, as Scripts/test keeps
the PostgreSQL cluster, since on a disk most of the test's time is the kernel's finding inodes
for 400,000 new files (Tests/bench/test_userdb_scale.py measures `enable` on the disk).
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile

import pytest

import runner
from conftest import REPO, knob
from runner import PASSWORD, run

sys.path.insert(0, str(REPO / "Tests" / "bench"))
import million  # noqa: E402

ACCOUNTS = knob("STRESS_USERDB_ACCOUNTS", 100_000)
ITERATIONS = 1000
SLOW = 1800  # seconds any one command may take at this size on a loaded machine


def snapshot(folder):
    """Every entry of `folder`: its mode, owner and content (or link target)."""
    entries = {}
    for entry in sorted(folder.iterdir()):
        info = entry.lstat()
        what = os.readlink(entry) if entry.is_symlink() else (
            snapshot(entry) if entry.is_dir() else entry.read_bytes())
        entries[entry.name] = (info.st_mode, info.st_uid, what)
    return entries


def record(folder, name):
    return json.loads((folder / name).read_text())


def counter(folder):
    (manifest,) = folder.glob(".accounts-*.manifest.d")
    return json.loads((manifest / "head").read_text())["generation"]


@pytest.fixture
def folder_parent(box):
    """Where the records folder goes: a fresh folder in /dev/shm when that is a tmpfs (removed
    after), else the sandbox."""
    if subprocess.run(["stat", "-f", "-c", "%T", "/dev/shm"], capture_output=True,
                      text=True).stdout.strip() != "tmpfs":
        yield box.root
        return
    parent = tempfile.mkdtemp(prefix="accounts-userdb-scale-", dir="/dev/shm")
    os.chmod(parent, 0o755)
    yield pathlib.Path(parent)
    shutil.rmtree(parent, ignore_errors=True)


@pytest.mark.xdist_group("userdb_scale")
def test_records_of_a_hundred_thousand_accounts(box, folder_parent):
    db = box.db("big")
    env = box.env(ITERATIONS)
    million.make_store(runner.BIN, db, env, ACCOUNTS, PASSWORD)
    folder = folder_parent / "userdb"
    folder.mkdir(mode=0o755)
    shown = "<tmp>/userdb" if folder_parent == box.root else str(folder)
    (folder / "notes.txt").write_text("not accounts'\n")
    before = snapshot(folder)

    enabled = run(box, ["userdb", "enable", "--folder", str(folder), "--uids", "200000-399999"],
                  db, iterations=ITERATIONS, timeout=SLOW)
    assert enabled.code == 0, enabled.brief()
    assert enabled.stdout == (
        f"User records in {shown} (uids 200000-399999): {ACCOUNTS} users, {ACCOUNTS} "
        f"groups; {4 * ACCOUNTS} files written, 0 removed.\n"), enabled.brief()
    last = million.name_of(ACCOUNTS - 1)
    assert record(folder, f"{last}.user")["uid"] == 200000 + ACCOUNTS - 1
    assert os.readlink(folder / f"{200000 + ACCOUNTS - 1}.user") == f"{last}.user"
    applied = counter(folder)

    # A change: its four files, and the folder's counter moves; the others stay.
    untouched = (folder / f"{last}.user").stat().st_mtime_ns
    added = run(box, runner.user_add_args("newcomer"), db, stdin=PASSWORD + "\n",
                iterations=ITERATIONS)
    assert added.code == 0, added.brief()
    assert record(folder, "newcomer.user")["uid"] == 200000 + ACCOUNTS
    assert counter(folder) > applied
    assert (folder / f"{last}.user").stat().st_mtime_ns == untouched
    idle = run(box, ["userdb", "sync"], db, iterations=ITERATIONS)
    assert idle.stdout.endswith("; 0 files written, 0 removed.\n"), idle.brief()

    # Killed between the commit and the files: the next sync writes exactly those.
    env = dict(box.env(ITERATIONS), ACCOUNTS_TEST_STOP_BEFORE_USER_RECORDS="1")
    proc = subprocess.Popen([runner.BIN, *runner.user_add_args("killed"), "--database", db],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env)
    proc.stdin.write(f"{PASSWORD}\n".encode())
    proc.stdin.close()
    _, status = os.waitpid(proc.pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status), status
    proc.kill()
    proc.wait()
    assert not (folder / "killed.user").exists()
    repaired = run(box, ["userdb", "sync"], db, iterations=ITERATIONS)
    assert repaired.stdout == (
        f"User records in {shown} (uids 200000-399999): {ACCOUNTS + 2} users, "
        f"{ACCOUNTS + 2} groups; 4 files written, 0 removed.\n"), repaired.brief()
    assert record(folder, "killed.user")["uid"] == 200000 + ACCOUNTS + 1

    # A removal takes its files.
    removed = run(box, ["user", "remove", last, "--yes"], db, iterations=ITERATIONS)
    assert removed.code == 0, removed.brief()
    assert not (folder / f"{last}.user").exists()
    assert not (folder / f"{200000 + ACCOUNTS - 1}.user").is_symlink()

    # The whole comparison finds nothing behind.
    status = run(box, ["userdb", "status", "--json"], db, iterations=ITERATIONS, timeout=SLOW)
    assert status.code == 0, status.brief()
    found = json.loads(status.stdout)
    assert (found["users"], found["behind"], found["foreign"]) == (ACCOUNTS + 1, 0, []), found

    disabled = run(box, ["userdb", "disable"], db, iterations=ITERATIONS, timeout=SLOW)
    assert disabled.code == 0, disabled.brief()
    assert snapshot(folder) == before
