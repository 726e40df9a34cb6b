"""What the user-record tests share (test_userdb_*.py, test_ssh_keys.py): running `userdb`,
enabling it in a folder with a uid range, adding an account, a folder's snapshot, every record
checked field by field against systemd's user and group record specification (types, required
fields, no secret, mode 0644, owner root, each UID.user / GID.group link naming its record), and
NSS read back (`getent`, `id`).

Each test gives its own `--uids` range, so that parallel tests never hand out the same number
(and a number NSS already knows is skipped anyway)."""

from __future__ import annotations

import json
import os
import pathlib
import stat
import subprocess
import tempfile
import uuid

from conftest import BIN, PASSWORD, Device, Result, with_program_role

RUN_USERDB = pathlib.Path("/run/userdb")
PBKDF2 = "pbkdf2_sha256$1000$UnicodeSaltXyz9876543$g4MD6bb2teH3Xo/srajDalClWyx/3E2EdVR8qdZ64U0="
USER_FIELDS = {"userName": str, "realName": str, "uid": int, "gid": int, "memberOf": list,
               "homeDirectory": str, "shell": str, "disposition": str, "locked": bool,
               "notAfterUSec": int, "sshAuthorizedKeys": list}
GROUP_FIELDS = {"groupName": str, "gid": int, "members": list, "disposition": str}
SECRET_WORDS = ("password", "hash", "pbkdf2", "secret", "hashedPassword", "privileged")


def unique(prefix: str = "u") -> str:
    return prefix + uuid.uuid4().hex[:8]


def userdb(device, *args, env=None):
    return device.run("userdb", *args, env=env)


def enable(device, folder, uids, stderr=""):
    result = userdb(device, "enable", "--folder", str(folder), "--uids", uids)
    assert (result.code, result.stderr) == (0, stderr), result
    assert result.stdout.startswith(f"User records in {folder} (uids {uids}): "), result
    return result


def add(device, name, *flags, full_name="Some One", stderr=""):
    result = device.run("user", "add", "--username", name, "--full-name", full_name, "--email",
                        f"{name}@example.org", "--password-stdin", *flags, input=PASSWORD + "\n")
    assert (result.code, result.stdout, result.stderr) == (
        0, f"Account added: {name}.\n", stderr), result


def ok(result):
    assert (result.code, result.stderr) == (0, ""), result
    return result


def snapshot(folder: pathlib.Path) -> dict:
    """Every entry of `folder`: kind, mode, owner, and content or link target."""
    entries = {}
    for entry in sorted(folder.iterdir()):
        info = entry.lstat()
        if stat.S_ISLNK(info.st_mode):
            what = "-> " + os.readlink(entry)
        elif stat.S_ISDIR(info.st_mode):
            what = snapshot(entry)
        else:
            what = entry.read_bytes()
        entries[entry.name] = (stat.S_IFMT(info.st_mode), stat.S_IMODE(info.st_mode),
                               info.st_uid, info.st_gid, what)
    return entries


def sshd_refusal(program) -> str | None:
    """Why sshd would refuse `program` as its AuthorizedKeysCommand, in sshd's words (OpenSSH's
    `safe_path`, misc.c, with uid 0: the resolved file and every folder above it root's, not
    writable by group or others); None when it would run it."""
    path = os.path.realpath(program)
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        return f"{path} is not a regular file"
    if info.st_uid != 0 or info.st_mode & 0o022:
        return f"bad ownership or modes for file {path}"
    while path != "/":
        path = os.path.dirname(path)
        info = os.stat(path)
        if info.st_uid != 0 or info.st_mode & 0o022:
            return f"bad ownership or modes for directory {path}"
    return None


def sshd_line(program) -> str:
    """`userdb status`'s line on whether sshd would run `program`."""
    reason = sshd_refusal(program)
    if reason is None:
        return "SSH keys command: ok"
    return (f'SSH keys command: sshd would refuse it (Unsafe AuthorizedKeysCommand '
            f'"{os.path.realpath(program)}": {reason}); install the program where root owns '
            "every folder above it and nobody else may write them (Scripts/install --prefix "
            "/usr/local)")


def check_records(folder: pathlib.Path) -> dict:
    """Checks every record accounts wrote in `folder` against the specification and returns
    them by name: types of the known fields, required fields, no secret, mode 0644, owner
    root, and each UID.user / GID.group link naming its record. A shared folder (/run/userdb)
    holds other tests' stores too: a file one of them is writing (`.accounts-ID.tmp`, renamed
    into place) or removing meanwhile is not looked at."""
    records = {}
    for entry in folder.iterdir():
        try:
            checked = _check_entry(folder, entry)
        except FileNotFoundError:
            continue  # removed by another store's command while this one looked
        if checked is not None:
            records[entry.name] = checked
    return records


def _check_entry(folder: pathlib.Path, entry: pathlib.Path):
    """`check_records` for one entry: its record, or None for a manifest, a link or another
    store's file being written."""
    if entry.name.startswith(".accounts-"):
        if entry.name.endswith(".tmp"):
            return None
        # One lstat: an entry another store's command removes meanwhile raises FileNotFoundError
        # (skipped by the caller) rather than looking like a file of the wrong kind.
        info = entry.lstat()
        # An earlier release's manifest (another store's, in a shared folder): one file.
        if entry.name.endswith(".manifest") and stat.S_ISREG(info.st_mode):
            assert stat.S_IMODE(info.st_mode) == 0o644, entry
            return None
        # The manifest: a folder of root's (mode 0755) of files mode 0644 (its head, its shards).
        # A `tmp.N` in it is a file or link another store's command is writing (renamed into
        # place when whole); a command's own are gone when it ends (test_userdb_manifest).
        assert entry.name.endswith(".manifest.d") and stat.S_ISDIR(info.st_mode), entry
        assert stat.S_IMODE(info.st_mode) == 0o755 and info.st_uid == 0, entry
        for part in entry.iterdir():
            if not part.name.startswith("tmp."):
                assert stat.S_IMODE(part.lstat().st_mode) == 0o644, part
        return None
    info = entry.lstat()
    if stat.S_ISLNK(info.st_mode):
        number, kind = entry.name.split(".")
        assert number.isdigit() and kind in ("user", "group"), entry
        target = json.loads((folder / os.readlink(entry)).read_text())
        assert target["uid" if kind == "user" else "gid"] == int(number), entry
        return None
    assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o644, entry
    assert (info.st_uid, info.st_gid) == (0, 0), entry
    text = entry.read_text()
    assert not any(word in text for word in SECRET_WORDS), text
    record = json.loads(text)
    if entry.name.endswith(".user"):
        fields = USER_FIELDS
        assert entry.name == record["userName"] + ".user"
        assert {"userName", "uid", "gid", "homeDirectory", "shell", "disposition",
                "locked"} <= record.keys(), record
        assert record["uid"] == record["gid"] and record["disposition"] == "regular"
    elif entry.name.endswith(".group"):
        fields = GROUP_FIELDS
        assert entry.name == record["groupName"] + ".group"
    else:
        assert entry.name.endswith(".membership"), entry
        assert entry.name == f"{record['userName']}:{record['groupName']}.membership"
        return record
    for key, value in record.items():
        assert key in fields and isinstance(value, fields[key]), (key, value)
        assert not isinstance(value, bool) or fields[key] is bool, (key, value)
    return record


def getent(database, key):
    proc = subprocess.run(["getent", database, key], capture_output=True, text=True)
    return proc.returncode, proc.stdout


def groups_of(name):
    proc = subprocess.run(["id", "-Gn", name], capture_output=True, text=True)
    assert proc.returncode == 0, proc
    return set(proc.stdout.split())


def public_folder():
    """A private folder `nobody` can traverse (the test's own tmp_path cannot be)."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="userdb-", dir="/tmp"))
    folder.chmod(0o755)
    return folder


def on_host(client, host: str, *args, input=None, env=None) -> Result:
    """`args` run by `client` (a Device or a pgcluster Client) as if on the host `host`: in a
    UTS namespace of its own (`unshare --uts`) whose host name is `host`, so that several hosts
    keeping records of one store share this machine; everything else is the client's (a
    Device's role for the command included)."""
    if env is None:
        env = client.env()
    if isinstance(client, Device):
        env = with_program_role(args, env)
    proc = subprocess.run(
        ["unshare", "--uts", "--", "/bin/sh", "-c", 'hostname "$1" && shift && exec "$@"', "sh",
         host, BIN, *args], input=input, stdin=subprocess.DEVNULL if input is None else None,
        capture_output=True, text=True, env=env, cwd=str(client.root), timeout=60)
    return Result(proc.returncode, proc.stdout, proc.stderr)
