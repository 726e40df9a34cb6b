"""The records' folder: `userdb disable` leaves it as it was, and changes nothing where the store
refuses the change; files someone else changed are left alone, an unsafe folder refused, a kill
between the store's commit and the files repaired by the next command, two hosts keeping folders
of their own on one store."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess

from conftest import BIN, PASSWORD, with_program_role
from constants import POSTGRESQL
from userdbhelp import unique, userdb, enable, add, ok, snapshot, check_records


def test_disable_leaves_the_folder_as_it_was(activated, tmp_path):
    """A folder with others' files, one of them holding a name accounts wants: enable reports
    it and leaves it, disable removes exactly what accounts wrote (byte for byte as before); a
    folder enable made is removed again."""
    folder = tmp_path / "rec"
    folder.mkdir(mode=0o755)
    (folder / "other.user").write_text('{"userName":"other","uid":4242}\n')
    (folder / "alice.user").write_text("not ours\n")
    (folder / "notes.txt").write_text("keep\n")
    os.symlink("other.user", folder / "4242.user")
    before = snapshot(folder)
    enable(activated, folder, "24400-24409",
           stderr=f"Left alone: {folder}/alice.user was not written by accounts (no record of "
           "that name was written).\n")
    add(activated, "bob")
    assert (folder / "bob.user").exists() and (folder / "alice.user").read_text() == "not ours\n"
    status = json.loads(ok(userdb(activated, "status", "--json")).stdout)
    assert (status["enabled"], status["behind"], status["foreign"]) == (True, 0, ["alice.user"])
    result = ok(userdb(activated, "disable"))
    # alice.group, bob.user, bob.group and their uids' two links each: what enable and add
    # wrote.
    assert result.stdout == (
        f"User records turned off: 7 files and the manifest removed from {folder}.\n")
    assert snapshot(folder) == before

    fresh = tmp_path / "fresh"
    # The same count of the same records when they are written and when they are removed.
    assert enable(activated, fresh, "24400-24409").stdout.endswith("; 8 files written, 0 removed.\n")
    assert {p.name for p in fresh.iterdir() if not p.name.startswith(".")} == {
        "alice.user", "alice.group", "24400.user", "24400.group", "bob.user", "bob.group",
        "24401.user", "24401.group"}
    result = ok(userdb(activated, "disable"))
    assert result.stdout == (
        f"User records turned off: 8 files, the manifest and the folder {fresh} removed.\n")
    assert not fresh.exists()


def test_disable_after_reset_counts_what_it_removes(activated, tmp_path):
    """After reset only the manifest is left in the folder enable made: disable says it removed
    no record, the manifest and the folder."""
    folder = tmp_path / "rec"
    enable(activated, folder, "24970-24979")
    ok(activated.run("reset", "--yes"))
    assert [p.name for p in folder.iterdir()] == [
        p.name for p in folder.glob(".accounts-*.manifest.d")]
    result = ok(userdb(activated, "disable"))
    assert result.stdout == (
        f"User records turned off: 0 files, the manifest and the folder {folder} removed.\n")
    assert not folder.exists()


@contextlib.contextmanager
def store_refusing_changes(device):
    """The environment of a command run against `device`'s store while that store refuses every
    change but reads as before, and the sentence the refusal is: on PostgreSQL a trigger
    refusing the host entry's delete as the server refuses a role without the right (a fleet
    host's role may delete its own entry, through its step), on SQLite the file made immutable
    (chattr +i: root may not write it either)."""
    denied = "the role has no permission (permission denied for table"
    if POSTGRESQL:
        device.db.execute(
            "CREATE FUNCTION accounts.refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "RAISE insufficient_privilege USING MESSAGE = 'permission denied for table "
            "userdb_host'; END $$")
        device.db.execute("CREATE TRIGGER refuse BEFORE DELETE ON accounts.userdb_host "
                          "FOR EACH ROW EXECUTE FUNCTION accounts.refuse()")
        try:
            yield device.env(), f"Cannot write the database {device.db}: {denied} userdb_host)."
        finally:
            device.db.execute("DROP TRIGGER refuse ON accounts.userdb_host")
            device.db.execute("DROP FUNCTION accounts.refuse()")
    else:
        subprocess.run(["chattr", "+i", str(device.db)], check=True)
        try:
            yield (device.env(),
                   f"Cannot write the database {device.db}: the file or its folder is read-only.")
        finally:
            subprocess.run(["chattr", "-i", str(device.db)], check=True)


def test_disable_refused_by_the_store_changes_nothing(activated, tmp_path):
    """`userdb disable` where the store refuses the change (a host role, a read-only file):
    exit 3 and one sentence, every record and the manifest still there as they were, the store
    still keeping records; disabling where it may then removes them all."""
    folder = tmp_path / "rec"
    enable(activated, folder, "24950-24959")
    add(activated, "bob")
    before = snapshot(folder)
    with store_refusing_changes(activated) as (env, refusal):
        result = userdb(activated, "disable", env=env)
    assert (result.code, result.stdout, result.stderr) == (3, "", refusal + "\n"), result
    assert snapshot(folder) == before
    status = json.loads(ok(userdb(activated, "status", "--json")).stdout)
    assert (status["enabled"], status["folder"], status["behind"]) == (True, str(folder), 0)
    ok(userdb(activated, "disable"))
    assert not folder.exists()


# A full disk under the records folder: a 64 KiB tmpfs mounted in a private mount namespace
# (`unshare -m`), filled, so that enable makes the folder but cannot write in it; then room again.
FULL_DISK = r"""
set -u
A=$1; D=$2; NAME=$3
mount -t tmpfs -o size=64k tmpfs "$D" || exit 90
dd if=/dev/zero of="$D/filler" bs=1k 2>/dev/null
run() { name=$1; shift; "$A" "$@" >"$D.$name.out" 2>"$D.$name.err"; echo "$name=$?" >>"$D.codes"; }
run enable userdb enable --folder "$D/rec" --uids 24960-24969
ls -A "$D" >"$D.full"
rm -f "$D/filler"
run sync userdb sync
run edit user edit alice --username "$NAME"
run sync2 userdb sync
run sync3 userdb sync
run disable userdb disable
ls -A "$D" >"$D.after"
"""


def test_disable_removes_the_folder_accounts_made(activated, tmp_path):
    """A folder enable made is removed by disable, after a rename and two syncs, even when
    enable could not write its first file in it (a full disk: the folder is removed again at
    once), and the sync that then makes it writes the records."""
    disk = tmp_path / "disk"
    disk.mkdir()
    name = unique("r")
    proc = subprocess.run(
        ["unshare", "-m", "sh", "-c", FULL_DISK, "sh", BIN, str(disk), name],
        capture_output=True, text=True, timeout=120,
        # The administrator's role: the script renames an account too.
        env=with_program_role(["user", "edit"], activated.env()))
    assert proc.returncode == 0, proc
    output = {step: ((tmp_path / f"disk.{step}.out").read_text(),
                     (tmp_path / f"disk.{step}.err").read_text())
              for step in ("enable", "sync", "edit", "sync2", "sync3", "disable")}
    codes = dict(line.split("=") for line in (tmp_path / "disk.codes").read_text().split())
    assert codes == {"enable": "3", "sync": "0", "edit": "0", "sync2": "0", "sync3": "0",
                     "disable": "0"}, output
    assert output["enable"][1].startswith(f"The user records folder {disk}/rec/.accounts-"), output
    assert output["enable"][1].endswith(".manifest.d/head cannot be used: No space left on "
                                        "device.\n"), output
    assert (tmp_path / "disk.full").read_text() == "filler\n"
    assert output["edit"] == (f"Account edited: {name}.\n", "")
    assert (tmp_path / "disk.after").read_text() == "", output


def test_records_changed_by_someone_else_are_left(activated, tmp_path):
    """A record of accounts' that someone edited is not removed by disable."""
    folder = tmp_path / "rec"
    enable(activated, folder, "24500-24509")
    (folder / "alice.user").write_text("edited\n")
    ok(userdb(activated, "disable"))
    assert (folder / "alice.user").read_text() == "edited\n"


def test_enable_refuses_an_unsafe_folder(activated, tmp_path):
    folder = tmp_path / "rec"
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)
    result = userdb(activated, "enable", "--folder", str(folder), "--uids", "24600-24609")
    assert result.code == 3, result
    assert f"The user records folder {folder} cannot be used: group or others may write the " \
        "folder (mode 777)." in result.stderr


def test_killed_between_commit_and_records_is_repaired(activated, tmp_path):
    """SIGKILL at the point after the store's commit and before the files (the program stops
    itself there): the account is stored with its uid, its record's 4 files missing, status
    tells; the next changing command writes them. The same for sync."""
    folder = tmp_path / "rec"
    enable(activated, folder, "24700-24709")
    for repair in (["group", "add", "crew"], ["userdb", "sync"]):
        name = unique("k")
        env = activated.env(ACCOUNTS_TEST_STOP_BEFORE_USER_RECORDS="1")
        proc = subprocess.Popen(
            [BIN, "user", "add", "--username", name, "--full-name", "K", "--email",
             "k@example.org", "--password-stdin"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=with_program_role(["user", "add"], env))
        proc.stdin.write(f"{PASSWORD}\n".encode())
        proc.stdin.close()
        _, status = os.waitpid(proc.pid, os.WUNTRACED)
        assert os.WIFSTOPPED(status) and os.WSTOPSIG(status) == signal.SIGSTOP
        proc.kill()
        proc.wait()
        assert activated.account(name)["username"] == name
        assert not (folder / f"{name}.user").exists()
        status = json.loads(ok(userdb(activated, "status", "--json")).stdout)
        assert (status["behind"], status["skipped"]) == (4, []), status
        ok(activated.run(*repair))
        check_records(folder)
        assert json.loads((folder / f"{name}.user").read_text())["userName"] == name
        assert json.loads(ok(userdb(activated, "status", "--json")).stdout)["behind"] == 0


def test_two_hosts_share_a_store(activated, tmp_path):
    """Two host names (UTS namespaces) on one store, each with its own folder: a user added on
    either is in both folders after sync, with the same uid; disabling one host leaves the
    other."""
    def on(host, *args, input=None):
        return subprocess.run(
            ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', host, BIN, *args],
            input=input, capture_output=True, text=True,
            env=with_program_role(args, activated.env()))

    for host, folder in (("host-a", "a"), ("host-b", "b")):
        proc = on(host, "userdb", "enable", "--folder", str(tmp_path / folder), "--uids",
                  "24800-24809")
        assert proc.returncode == 0, proc
    proc = on("host-a", "user", "add", "--username", "bob", "--full-name", "B", "--email",
              "b@example.org", "--password-stdin", input=PASSWORD + "\n")
    assert proc.returncode == 0, proc
    assert (tmp_path / "a" / "bob.user").exists() and not (tmp_path / "b" / "bob.user").exists()
    assert on("host-b", "userdb", "sync").returncode == 0
    a = check_records(tmp_path / "a")
    assert a == check_records(tmp_path / "b")
    assert a["bob.user"]["uid"] == 24801
    assert on("host-a", "userdb", "disable").returncode == 0
    assert not (tmp_path / "a").exists() and (tmp_path / "b" / "bob.user").exists()
    status = json.loads(on("host-b", "userdb", "status", "--json").stdout)
    assert (status["host"], status["enabled"], status["users"]) == ("host-b", True, 2)


def test_status_counts_files_behind(activated, tmp_path):
    """A record removed by hand is one file behind (said in the singular), two are two; `sync`
    writes them again."""
    folder = tmp_path / "rec"
    enable(activated, folder, "24980-24989")
    os.unlink(folder / "alice.user")
    behind = "Behind: 1 file to write or remove (run accounts userdb sync)"
    assert behind in ok(userdb(activated, "status")).stdout.splitlines()
    os.unlink(folder / "alice.group")
    behind = "Behind: 2 files to write or remove (run accounts userdb sync)"
    assert behind in ok(userdb(activated, "status")).stdout.splitlines()
    ok(userdb(activated, "sync"))
    assert "Behind: no" in ok(userdb(activated, "status")).stdout.splitlines()
