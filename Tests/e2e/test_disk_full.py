"""A full disk gets one clear sentence and the storage exit code; nothing is
changed, reading still works, and once there is room again everything works.

The disk is a 400 KiB tmpfs mounted in a private mount namespace (`unshare -m`; as a non-root
user, `unshare -rm`), so nothing outside the test sees it."""

import os
import pathlib
import subprocess

import pytest

from conftest import BIN

# SQLite-only: the subject is the database file on a full file system (a PostgreSQL store's
# disk is the server's).
pytestmark = pytest.mark.sqlite_only

SCRIPT = r'''
set -u
A=$1; D=$2
mount -t tmpfs -o size=400k tmpfs "$D" || exit 90
export ACCOUNTS_PBKDF2_ITERATIONS=1000 TZ=UTC
run() { name=$1; shift; "$@" >"$D.$name.out" 2>"$D.$name.err"; echo "$name=$?" >>"$D.codes"; }
printf 'correct horse battery staple\n' > "$D.pw"
run activate "$A" activate --database "$D/db.sqlite3" --username alice --full-name Alice \
  --email alice@example.org --password-stdin < "$D.pw"
before=$(sha256sum "$D/db.sqlite3" | cut -d' ' -f1)
dd if=/dev/zero of="$D/filler" bs=1k 2>/dev/null
run login "$A" login --database "$D/db.sqlite3" --username alice --password-stdin < "$D.pw"
run reset "$A" reset --yes --database "$D/db.sqlite3"
run unlock "$A" unlock alice --database "$D/db.sqlite3"
run status "$A" status --database "$D/db.sqlite3"
after=$(sha256sum "$D/db.sqlite3" | cut -d' ' -f1)
[ "$before" = "$after" ] && echo "unchanged=0" >>"$D.codes" || echo "unchanged=1" >>"$D.codes"
rm -f "$D/filler"
run login_after "$A" login --database "$D/db.sqlite3" --username alice --password-stdin < "$D.pw"
'''


def test_disk_full(tmp_path):
    """Full disk: writes exit 3 with the disk-full sentence, the file is unchanged, status
    still answers, and after space is freed login works."""
    mountpoint = tmp_path / "disk"
    mountpoint.mkdir()
    unshare = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-rm"]
    proc = subprocess.run([*unshare, "sh", "-c", SCRIPT, "sh", BIN, str(mountpoint)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    codes = dict(line.split("=") for line in (tmp_path / "disk.codes").read_text().split())
    assert codes == {"activate": "0", "login": "3", "reset": "3", "unlock": "3", "status": "0",
                     "unchanged": "0", "login_after": "0"}
    full = f"Cannot write the database {mountpoint}/db.sqlite3: the disk is full. Nothing was changed."
    for name in ("login", "reset", "unlock"):
        assert (tmp_path / f"disk.{name}.err").read_text() == full + "\n"
    assert (tmp_path / "disk.status.out").read_text().splitlines()[0] == "State: Activated"
    assert (tmp_path / "disk.login_after.out").read_text().startswith("Welcome back Alice!")
