"""The records folder's manifest (`.accounts-STOREID.manifest.d`: a head and shards): a folder
written by an earlier release (one manifest file) still works and is converted at the next
write; a damaged head or shard is refused by a change and made again by sync; a change reads
only what changed (a record edited in place is found by `sync --full` alone); a write killed
between two batches of files leaves each file whole, and the next sync finishes it."""

from __future__ import annotations

import hashlib
import pty
import json
import os
import signal
import subprocess

from conftest import BIN, with_program_role
from userdbhelp import PBKDF2, unique, userdb, enable, add, ok, snapshot, check_records


def manifest_folder(folder):
    (found,) = folder.glob(".accounts-*.manifest.d")
    return found


def digest_on_disk(path):
    if path.is_symlink():
        return hashlib.sha256(("->" + os.readlink(path)).encode()).hexdigest()
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_folder_of_an_earlier_release_is_converted(activated, tmp_path):
    """An earlier release's folder: one manifest file, group records with their members. A
    change lists it again in shards (the group's record rewritten without members), the old
    file goes, and disable leaves the folder as before enable."""
    folder = tmp_path / "rec"
    folder.mkdir(mode=0o755)
    before = snapshot(folder)
    enable(activated, folder, "24500-24509")
    add(activated, "bob")
    ok(activated.run("group", "add", "crew"))
    ok(activated.run("user", "edit", "bob", "--add-group", "crew"))
    store_id = manifest_folder(folder).name.split("-")[1].split(".")[0]
    # What the earlier release wrote: the group's record with its members, one manifest file.
    crew = json.loads((folder / "crew.group").read_text())
    (folder / "crew.group").write_text(json.dumps(
        {"groupName": "crew", "gid": crew["gid"], "members": ["bob"],
         "disposition": "regular"}, separators=(",", ":")) + "\n")
    files = {p.name: [digest_on_disk(p)] for p in folder.iterdir()
             if not p.name.startswith(".")}
    subprocess.run(["rm", "-r", str(manifest_folder(folder))], check=True)
    legacy = folder / f".accounts-{store_id}.manifest"
    legacy.write_text(json.dumps({"createdFolder": False, "files": files}) + "\n")
    legacy.chmod(0o644)

    status = json.loads(ok(userdb(activated, "status", "--json")).stdout)
    assert (status["behind"], status["foreign"]) == (1, []), status
    add(activated, "carol")
    assert not legacy.exists() and manifest_folder(folder).is_dir()
    assert "members" not in json.loads((folder / "crew.group").read_text())
    records = check_records(folder)
    assert {"bob.user", "carol.user", "crew.group", "bob:crew.membership"} <= set(records)
    assert json.loads(ok(userdb(activated, "status", "--json")).stdout)["behind"] == 0
    ok(userdb(activated, "disable"))
    assert snapshot(folder) == before


def test_a_damaged_manifest_is_refused_and_sync_makes_it_again(activated, tmp_path):
    """A shard changed by hand, a head that is not JSON, a shard removed: status refuses (a
    change too, when it reads the damaged part: the head always); sync --full as root (plain
    sync too, when it reads the damaged part) makes the manifest again, and then it all
    works."""
    folder = tmp_path / "rec"
    enable(activated, folder, "24510-24519")
    add(activated, "bob")
    manifest = manifest_folder(folder)
    sentence = (f"The user records folder {manifest} cannot be used: its manifest is damaged "
                "(accounts userdb sync --full makes it again).")

    def shards():
        return sorted(p for p in manifest.iterdir() if p.name != "head")

    for damage, head in ((lambda: shards()[0].write_text("x\tbob.user\t00\n"), False),
                         (lambda: (manifest / "head").write_text("{not json\n"), True),
                         (lambda: shards()[-1].unlink(), False)):
        damage()
        status = userdb(activated, "status")
        assert (status.code, status.stdout, status.stderr) == (3, "", sentence + "\n"), status
        name = unique("d")
        result = activated.run("user", "add", "--username", name, "--full-name", "D",
                               "--email", "d@example.org", "--password-stdin",
                               input="correct horse battery staple\n")
        if head:
            assert result.code == 3 and sentence in result.stderr, result
        else:
            assert result.code == 0, result
        result = ok(userdb(activated, "sync", *([] if head else ["--full"])))
        assert result.stderr == "", result
        check_records(folder)
        assert json.loads((folder / f"{name}.user").read_text())["userName"] == name
        assert json.loads(ok(userdb(activated, "status", "--json")).stdout)["behind"] == 0
    # Every file went; the folder stays: the damaged head no longer said enable made it.
    ok(userdb(activated, "disable"))
    assert list(folder.iterdir()) == []


def test_a_change_reads_only_what_changed(activated, tmp_path):
    """A record edited in place (the folder's entries unchanged) is not what a change or a
    plain sync reads: sync --full finds it (and writes it again), and the record removed by
    hand is written again by the next sync (the folder changed: a whole comparison)."""
    folder = tmp_path / "rec"
    enable(activated, folder, "24520-24529")
    add(activated, "bob")
    with open(folder / "bob.user", "r+") as record:
        text = record.read()
        record.seek(0)
        record.write(text.replace('"locked":false', '"locked":true '))
    result = ok(userdb(activated, "sync"))
    assert "0 files written, 0 removed." in result.stdout and result.stderr == "", result
    add(activated, "carol")
    assert '"locked":true' in (folder / "bob.user").read_text()
    result = ok(userdb(activated, "sync", "--full"))
    assert "1 file written, 0 removed." in result.stdout, result
    assert '"locked":false' in (folder / "bob.user").read_text()
    (folder / "carol.user").unlink()
    result = ok(userdb(activated, "sync"))
    assert "1 file written, 0 removed." in result.stdout, result
    check_records(folder)


def test_a_write_killed_between_batches_leaves_whole_files(activated, tmp_path):
    """enable of 2,500 accounts (10,000 files, three batches) stopped after its first batch and
    killed: every file there is whole (a record that parses, a link to one), no temporary file
    is left as a record; the next sync writes the rest and status finds nothing behind."""
    csv = tmp_path / "users.csv"
    csv.write_text("username,full_name,email,password_hash\n" + "".join(
        f"b{i:05d},Bulk {i},b{i}@example.org,{PBKDF2}\n" for i in range(2499)))
    ok(activated.run("user", "import", str(csv), "--format", "csv"))
    folder = tmp_path / "rec"
    env = activated.env(ACCOUNTS_TEST_STOP_AFTER_RECORD_BATCH="1")
    args = ["userdb", "enable", "--folder", str(folder), "--uids", "200000-202999"]
    proc = subprocess.Popen([BIN, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=with_program_role(args, env))
    _, status = os.waitpid(proc.pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status) and os.WSTOPSIG(status) == signal.SIGSTOP
    proc.kill()
    proc.wait()
    written = [p for p in folder.iterdir() if not p.name.startswith(".")]
    assert len(written) == 4096, len(written)
    check_records(folder)
    result = ok(userdb(activated, "sync"))
    assert "2500 users, 2500 groups; 5904 files written, 0 removed." in result.stdout, result
    assert len([p for p in folder.iterdir() if not p.name.startswith(".")]) == 10000
    assert [p.name for p in manifest_folder(folder).iterdir() if p.name.startswith("tmp.")] == []
    assert json.loads(ok(userdb(activated, "status", "--json")).stdout)["behind"] == 0
    ok(userdb(activated, "disable"))
    assert not folder.exists()


def test_a_large_write_shows_its_progress_on_a_terminal(activated, tmp_path):
    """enable of 1,100 accounts (4,400 files: two batches) with standard error a terminal: a
    progress line after each batch, replaced in place and cleared at the end; with
    standard error a pipe, none."""
    csv = tmp_path / "users.csv"
    csv.write_text("username,full_name,email,password_hash\n" + "".join(
        f"p{i:05d},Bulk {i},p{i}@example.org,{PBKDF2}\n" for i in range(1099)))
    ok(activated.run("user", "import", str(csv), "--format", "csv"))
    args = ["userdb", "enable", "--folder", str(tmp_path / "rec"), "--uids", "203000-204999"]
    leader, follower = pty.openpty()
    proc = subprocess.Popen([BIN, *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=follower, env=with_program_role(args, activated.env()))
    os.close(follower)
    said = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # EIO: the program closed the terminal's last end
            break
        if not chunk:
            break
        said += chunk
    os.close(leader)
    out = proc.stdout.read().decode()
    assert proc.wait() == 0, said
    assert "1100 users, 1100 groups; 4400 files written, 0 removed." in out, out
    assert said.decode() == "".join(
        f"\r\x1b[KWriting user records: {done} of 4,400 files…" for done in ("4,096", "4,400")
    ) + "\r\x1b[K", said
    ok(userdb(activated, "disable"))
    piped = ok(userdb(activated, "enable", "--folder", str(tmp_path / "rec"), "--uids",
                      "203000-204999"))
    assert piped.stderr == "", piped
