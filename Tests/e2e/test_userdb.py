"""`accounts userdb enable|disable|sync|status|ssh-authorized-keys` and the user records every
changing command writes: each record checked field by field against systemd's user and group
record specification, read back through NSS (`getent passwd`, `getent group`, `id`) where the
folder is one libnss-systemd reads (/run/userdb, with names and uid ranges of each test's own:
the tests run in parallel), and a private folder everywhere else.

Each test gives its own `--uids` range, so that parallel tests never hand out the same number
(and a number NSS already knows is skipped anyway)."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import signal
import stat
import subprocess
import tempfile
import uuid

import pytest

from conftest import BIN, NOBODY, PASSWORD, nobody_binary

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


def add(device, name, *flags, full_name="Some One"):
    result = device.run("user", "add", "--username", name, "--full-name", full_name, "--email",
                        f"{name}@example.org", "--password-stdin", *flags, input=PASSWORD + "\n")
    assert (result.code, result.stdout, result.stderr) == (
        0, f"Account added: {name}.\n", ""), result


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
        else:
            what = entry.read_bytes()
        entries[entry.name] = (stat.S_IFMT(info.st_mode), stat.S_IMODE(info.st_mode),
                               info.st_uid, info.st_gid, what)
    return entries


def check_records(folder: pathlib.Path) -> dict:
    """Checks every record accounts wrote in `folder` against the specification and returns
    them by name: types of the known fields, required fields, no secret, mode 0644, owner
    root, and each UID.user / GID.group link naming its record."""
    records = {}
    for entry in folder.iterdir():
        if entry.name.startswith(".accounts-"):
            assert entry.name.endswith(".manifest") and stat.S_IMODE(entry.lstat().st_mode) == 0o644
            continue
        info = entry.lstat()
        if stat.S_ISLNK(info.st_mode):
            number, kind = entry.name.split(".")
            assert number.isdigit() and kind in ("user", "group"), entry
            target = json.loads((folder / os.readlink(entry)).read_text())
            assert target["uid" if kind == "user" else "gid"] == int(number), entry
            continue
        assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o644, entry
        assert (info.st_uid, info.st_gid) == (0, 0), entry
        text = entry.read_text()
        assert not any(word in text for word in SECRET_WORDS), text
        record = json.loads(text)
        records[entry.name] = record
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
            continue
        for key, value in record.items():
            assert key in fields and isinstance(value, fields[key]), (key, value)
            assert not isinstance(value, bool) or fields[key] is bool, (key, value)
    return records


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


# Settings and refusals

def test_status_when_off(activated):
    """status --json with every key present; text says off; disable and sync refuse (exit 1)."""
    status = json.loads(ok(userdb(activated, "status", "--json")).stdout)
    assert status == {"host": os.uname().nodename, "enabled": False, "folder": None,
                      "uids": "20000-29999", "users": 0, "groups": 0, "behind": 0,
                      "foreign": [], "skipped": []}
    host = os.uname().nodename
    for command in ("disable", "sync"):
        result = userdb(activated, command)
        assert (result.code, result.stdout, result.stderr) == (
            1, "", f"This host ({host}) keeps no user records of this store; run accounts "
            "userdb enable first.\n")


@pytest.mark.parametrize("uids", ["1-2", "20000", "30000-20000", "999-2000", "1000-60000",
                                  "a-b", "20000-29999-1", "+2000-3000"])
def test_enable_refuses_a_range(activated, uids):
    result = userdb(activated, "enable", "--uids", uids)
    assert result.code == 2, result
    assert f"--uids {uids} is not valid: give FIRST-LAST, two numbers from 1000 to 59999, " \
        "FIRST not above LAST." in result.stderr


@pytest.mark.parametrize("option,path", [("--shell", "bin/sh"), ("--home", "/home/a:b"),
                                         ("--home", "/home/a/"), ("--shell", "/bin/../sh"),
                                         ("--home", "/home/a\tb")])
def test_home_and_shell_refused(activated, option, path):
    """A relative path, ':', a trailing /, .. or a control character: one sentence, exit 2, for
    add and edit, nothing stored."""
    for args in (["user", "add", "--username", "zed", "--full-name", "Z", "--email",
                  "z@example.org", "--password-stdin"], ["user", "edit", "alice"]):
        result = activated.run(*args, option, path, input=PASSWORD + "\n")
        assert result.code == 2, result
        assert f"{option} " in result.stderr and "is not valid: give an absolute path without " \
            "':', control characters, empty, . or .. parts, or a trailing /." in result.stderr
    assert [a["username"] for a in activated.accounts()] == ["alice"]


def test_show_and_list_tell_uid_home_shell(activated, tmp_path):
    add(activated, "bob", "--shell", "/bin/sh", "--home", "/srv/bob")
    bob = activated.account("bob")
    assert (bob["uid"], bob["home"], bob["shell"]) == (None, "/srv/bob", "/bin/sh")
    assert activated.account("alice")["home"] == "/home/alice"
    enable(activated, tmp_path / "rec", "23900-23909")
    listed = {a["username"]: (a["uid"], a["home"], a["shell"]) for a in activated.accounts()}
    assert listed == {"alice": (23900, "/home/alice", "/bin/bash"),
                      "bob": (23901, "/srv/bob", "/bin/sh")}
    shown = ok(activated.run("user", "show", "bob")).out_lines
    assert ["UID: 23901", "Home: /srv/bob", "Shell: /bin/sh"] == shown[12:15]
    ok(activated.run("user", "edit", "bob", "--shell", "/bin/dash"))
    assert json.loads((tmp_path / "rec" / "bob.user").read_text())["shell"] == "/bin/dash"
    assert activated.events()[-1]["detail"] == "shell /bin/dash"


# Through NSS

def test_every_change_is_seen_by_nss(device):
    """In /run/userdb: add, edit of shell, home and full name, disable (locked), expiry, a group
    and its membership (id), SSH keys, remove of the group and the account; each record checked
    against the specification after each command, and getent/id agree."""
    owner, user, crew = unique("o"), unique("u"), unique("g")
    device.activate(username=owner)
    try:
        enable(device, RUN_USERDB, "24000-24019")
        owner_uid = device.account(owner)["uid"]
        assert 24000 <= owner_uid <= 24019
        assert getent("passwd", owner) == (
            0, f"{owner}:x:{owner_uid}:{owner_uid}:Alice Liddell:/home/{owner}:/bin/bash\n")

        add(device, user, "--shell", "/bin/sh", "--home", f"/srv/{user}", full_name="Ann Bee")
        uid = device.account(user)["uid"]
        assert uid > owner_uid
        records = check_records(RUN_USERDB)
        assert records[f"{user}.user"] == {
            "userName": user, "realName": "Ann Bee", "uid": uid, "gid": uid,
            "homeDirectory": f"/srv/{user}", "shell": "/bin/sh", "disposition": "regular",
            "locked": False}
        assert getent("passwd", user) == (0, f"{user}:x:{uid}:{uid}:Ann Bee:/srv/{user}:/bin/sh\n")
        assert getent("passwd", str(uid))[1] == getent("passwd", user)[1]
        assert getent("group", user) == (0, f"{user}:x:{uid}:\n")

        ok(device.run("user", "edit", user, "--shell", "/bin/bash", "--home", f"/home/{user}",
                      "--full-name", "Ann Cee"))
        check_records(RUN_USERDB)
        assert getent("passwd", user) == (
            0, f"{user}:x:{uid}:{uid}:Ann Cee:/home/{user}:/bin/bash\n")

        ok(device.run("user", "disable", user))
        assert check_records(RUN_USERDB)[f"{user}.user"]["locked"] is True
        ok(device.run("user", "enable", user))
        assert check_records(RUN_USERDB)[f"{user}.user"]["locked"] is False

        ok(device.run("user", "edit", user, "--expires", "2031-01-01"))
        assert check_records(RUN_USERDB)[f"{user}.user"]["notAfterUSec"] == 1924992000000000
        assert getent("shadow", user)[1].split(":")[7] == str(1924992000 // 86400)

        ok(device.run("group", "add", crew))
        ok(device.run("user", "edit", user, "--add-group", crew))
        records = check_records(RUN_USERDB)
        gid = records[f"{crew}.group"]["gid"]
        assert records[f"{crew}.group"]["members"] == [user]
        assert records[f"{user}.user"]["memberOf"] == [crew]
        assert getent("group", crew) == (0, f"{crew}:x:{gid}:{user}\n")
        assert groups_of(user) == {user, crew}

        key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOFZkC33EfqKewwOisSItt2FJo/PInlAGgMR0vFXd8aG k"
        ok(device.run("user", "ssh-key", "add", user, "-", input=key + "\n"))
        assert check_records(RUN_USERDB)[f"{user}.user"]["sshAuthorizedKeys"] == [key]
        ok(device.run("user", "ssh-key", "remove", user,
                      "SHA256:oJ5Ml5JTa0iXcArq79CChS/mAg0y2TbJuPFnFjzKH7Y"))
        assert "sshAuthorizedKeys" not in check_records(RUN_USERDB)[f"{user}.user"]

        ok(device.run("user", "edit", user, "--remove-group", crew))
        assert groups_of(user) == {user}
        ok(device.run("group", "remove", crew))
        check_records(RUN_USERDB)
        assert getent("group", crew)[0] == 2 and getent("group", str(gid))[0] == 2

        ok(device.run("user", "remove", user, "--yes"))
        check_records(RUN_USERDB)
        assert getent("passwd", user)[0] == 2 and getent("passwd", str(uid))[0] == 2
        assert not (RUN_USERDB / f"{user}.user").exists()
    finally:
        userdb(device, "disable")
    assert getent("passwd", owner)[0] == 2


def test_reset_import_and_store_copy_write_records(device, tmp_path):
    """reset removes every account's records; import adds them; store copy into a store this
    host keeps records of writes them."""
    owner = unique("o")
    device.activate(username=owner)
    try:
        enable(device, RUN_USERDB, "24100-24119")
        imported = [unique("i"), unique("i")]
        csv = tmp_path / "users.csv"
        csv.write_text("username,full_name,email,password_hash\n" + "".join(
            f"{name},Imp Orted,{name}@example.org,{PBKDF2}\n" for name in imported))
        result = device.run("user", "import", str(csv), "--format", "csv")
        assert result.code == 0, result
        for name in imported:
            assert getent("passwd", name)[0] == 0
        check_records(RUN_USERDB)
        result = device.run("reset", "--yes")
        assert result.code == 0, result
        for name in [owner, *imported]:
            assert getent("passwd", name)[0] == 2
        assert not [p for p in RUN_USERDB.iterdir()
                    if p.name.split(".")[0] in (owner, *imported)]
    finally:
        userdb(device, "disable")

    (tmp_path / "s").mkdir()
    (tmp_path / "t").mkdir()
    source, target = device.__class__(tmp_path / "s"), device.__class__(tmp_path / "t")
    name = unique("c")
    source.activate(username=name)
    folder = tmp_path / "target-records"
    enable(target, folder, "24120-24129")
    assert sorted(p.name for p in folder.iterdir() if not p.name.startswith(".")) == []
    result = source.run("store", "copy", "--from", str(source.db), "--to", str(target.db))
    assert result.code == 0, result
    # The copy brought the source's range (20000-29999) and its account, numbered here.
    records = check_records(folder)
    assert 20000 <= records[f"{name}.user"]["uid"] <= 29999
    assert json.loads(ok(userdb(target, "status", "--json")).stdout)["behind"] == 0


def test_a_number_nss_knows_is_skipped_and_none_is_reused(activated, tmp_path):
    """A local user (useradd) holding the range's first uid and a local group its second: the
    owner gets the third; a removed account's uid is never given again, nor its name's."""
    local = unique("l")
    subprocess.run(["useradd", "-M", "-N", "-u", "24200", "-g", "nogroup", local], check=True)
    subprocess.run(["groupadd", "-g", "24201", local + "g"], check=True)
    try:
        enable(activated, tmp_path / "rec", "24200-24209")
        assert activated.account("alice")["uid"] == 24202
        add(activated, "bob")
        assert activated.account("bob")["uid"] == 24203
        ok(activated.run("user", "remove", "bob", "--yes"))
        add(activated, "bob")
        add(activated, "carol")
        assert [activated.account(n)["uid"] for n in ("bob", "carol")] == [24204, 24205]
        result = activated.run("user", "add", "--username", local, "--full-name", "L",
                               "--email", "l@example.org", "--password-stdin",
                               input=PASSWORD + "\n")
        assert (result.code, result.stdout, result.stderr) == (
            1, "", f"{local} is already a user or group of this system (getent passwd "
            f"{local}); choose another user name!\n")
    finally:
        subprocess.run(["userdel", local], check=True)
        subprocess.run(["groupdel", local + "g"], check=True)


def test_range_used_up(activated, tmp_path):
    """Numbers run out: the account without one gets no record, and sync says so (exit 0)."""
    enable(activated, tmp_path / "rec", "24300-24300")
    add(activated, "bob")
    result = userdb(activated, "sync")
    assert result.code == 0, result
    assert ("The uid range 24300-24300 is used up: 1 account or group has no number and no "
            "record; widen it with accounts userdb enable --uids FIRST-LAST.") in result.stderr
    assert not (tmp_path / "rec" / "bob.user").exists()
    enable(activated, tmp_path / "rec", "24300-24301")
    assert json.loads((tmp_path / "rec" / "bob.user").read_text())["uid"] == 24301


# The folder

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
    assert result.stdout == f"User records turned off: 1 file removed from {folder}.\n"
    assert snapshot(folder) == before

    fresh = tmp_path / "fresh"
    enable(activated, fresh, "24400-24409")
    assert {p.name for p in fresh.iterdir() if not p.name.startswith(".")} == {
        "alice.user", "alice.group", "24400.user", "24400.group", "bob.user", "bob.group",
        "24401.user", "24401.group"}
    ok(userdb(activated, "disable"))
    assert not fresh.exists()


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
    itself there): the account is stored, its record missing, status tells; the next changing
    command writes it. The same for sync."""
    folder = tmp_path / "rec"
    enable(activated, folder, "24700-24709")
    for repair in (["group", "add", "crew"], ["userdb", "sync"]):
        name = unique("k")
        env = activated.env(ACCOUNTS_TEST_STOP_BEFORE_USER_RECORDS="1")
        proc = subprocess.Popen(
            [BIN, "user", "add", "--username", name, "--full-name", "K", "--email",
             "k@example.org", "--password-stdin"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        proc.stdin.write(f"{PASSWORD}\n".encode())
        proc.stdin.close()
        _, status = os.waitpid(proc.pid, os.WUNTRACED)
        assert os.WIFSTOPPED(status) and os.WSTOPSIG(status) == signal.SIGSTOP
        proc.kill()
        proc.wait()
        assert activated.account(name)["username"] == name
        assert not (folder / f"{name}.user").exists()
        status = json.loads(ok(userdb(activated, "status", "--json")).stdout)
        assert (status["behind"], status["skipped"]) == (
            1, [f"No user record for {name}: it has no uid yet."]), status
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
            input=input, capture_output=True, text=True, env=activated.env())

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


# SSH keys

def keygen(folder: pathlib.Path, kind: str, bits: str | None, name: str) -> tuple[str, str]:
    """A key made by ssh-keygen: its public line and what `ssh-keygen -l -E sha256` says."""
    path = folder / name
    subprocess.run(["ssh-keygen", "-q", "-t", kind, *(["-b", bits] if bits else []), "-N", "",
                    "-C", name, "-f", str(path)], check=True)
    listed = subprocess.run(["ssh-keygen", "-l", "-E", "sha256", "-f", f"{path}.pub"],
                            capture_output=True, text=True, check=True).stdout
    return pathlib.Path(f"{path}.pub").read_text().strip(), listed


def test_ssh_keys_as_ssh_keygen_sees_them(activated, tmp_path):
    """Keys of every accepted type made by ssh-keygen: list gives its fingerprints, sizes and
    comments; audit events; remove by fingerprint; an unknown one exits 5."""
    made = [keygen(tmp_path, "ed25519", None, "k-ed"), keygen(tmp_path, "ecdsa", "256", "k-e256"),
            keygen(tmp_path, "ecdsa", "384", "k-e384"), keygen(tmp_path, "ecdsa", "521", "k-e521"),
            keygen(tmp_path, "rsa", "2048", "k-rsa")]
    text = "# keys\n\n" + "\n".join(line for line, _ in made) + "\n"
    result = ok(activated.run("user", "ssh-key", "add", "alice", "-", input=text))
    expected = [listed.split() for _, listed in made]
    assert result.out_lines == [f"SSH key added to alice: {e[1]}." for e in expected]
    listed = [json.loads(line) for line in
              ok(activated.run("user", "ssh-key", "list", "alice", "--json")).out_lines]
    assert [(k["bits"], k["fingerprint"], k["comment"]) for k in listed] == [
        (int(e[0]), e[1], e[2]) for e in expected]
    assert [k["type"] for k in listed] == [line.split()[0] for line, _ in made]
    again = ok(activated.run("user", "ssh-key", "add", "alice", str(tmp_path / "k-ed.pub")))
    assert again.stdout == f"alice already has SSH key {expected[0][1]}; nothing changed.\n"
    text_list = ok(activated.run("user", "ssh-key", "list", "alice")).out_lines
    assert text_list[0].startswith("TYPE") and expected[4][1] in text_list[5]
    ok(activated.run("user", "ssh-key", "remove", "alice", expected[0][1]))
    events = [(e["event"], e["detail"]) for e in activated.events() if "ssh_key" in e["event"]]
    assert events == [("ssh_key_added", f"{line.split()[0]} {e[1]}")
                      for (line, _), e in zip(made, expected)] + [
        ("ssh_key_removed", expected[0][1])]
    result = activated.run("user", "ssh-key", "remove", "alice", expected[0][1])
    assert (result.code, result.stderr) == (
        5, f"alice has no SSH key {expected[0][1]} (see accounts user ssh-key list alice).\n")
    result = activated.run("user", "ssh-key", "list", "nobody-here")
    assert result.code == 5


@pytest.mark.parametrize("kind,bits,why", [
    ("rsa", "1024", "its RSA key has 1024 bits, fewer than 2048"),
    ("dsa", None, "keys of type ssh-dss are not accepted (use ssh-ed25519, "
     "ecdsa-sha2-nistp256/384/521, their sk- forms, or ssh-rsa of at least 2048 bits)"),
])
def test_ssh_keys_refused_types(activated, tmp_path, kind, bits, why):
    good, _ = keygen(tmp_path, "ed25519", None, "good")
    bad, _ = keygen(tmp_path, kind, bits, "bad")
    result = activated.run("user", "ssh-key", "add", "alice", "-", input=f"{good}\n{bad}\n")
    assert (result.code, result.stdout, result.stderr) == (
        1, "", f"Key on line 2 refused: {why}; no key was added.\n")
    assert ok(activated.run("user", "ssh-key", "list", "alice", "--json")).stdout == ""


@pytest.mark.parametrize("prefix", ['command="/bin/sh" ', 'from="10.0.0.1" ', "no-pty ",
                                    "restrict,pty "])
def test_ssh_keys_with_options_refused(activated, tmp_path, prefix):
    good, _ = keygen(tmp_path, "ed25519", None, "good")
    result = activated.run("user", "ssh-key", "add", "alice", "-", input=prefix + good + "\n")
    assert (result.code, result.stderr) == (
        1, "Key on line 1 refused: it starts with options (command=, from=, …), which accounts "
        "never stores; no key was added.\n")


@pytest.mark.parametrize("text,code,message", [
    ("", 1, "No SSH key found in the input; no key was added.\n"),
    ("ssh-ed25519 AAAA\n", 1,
     "Key on line 1 refused: it is not an SSH public key (TYPE BASE64 [COMMENT], as ssh-keygen "
     "writes it); no key was added.\n"),
])
def test_ssh_keys_malformed(activated, text, code, message):
    result = activated.run("user", "ssh-key", "add", "alice", "-", input=text)
    assert (result.code, result.stderr) == (code, message)


def test_authorized_keys_as_nobody(activated):
    """As nobody (sshd's AuthorizedKeysCommandUser), from the record alone: the keys of an
    account, nothing (exit 0) for an unknown name, a disabled or an expired account, or a name
    with a /; a record or folder group-writable, or not root's, is refused (exit 3)."""
    folder = public_folder() / "rec"
    try:
        enable(activated, folder, "24900-24909")
        add(activated, "bob")
        key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOFZkC33EfqKewwOisSItt2FJo/PInlAGgMR0vFXd8aG b"
        ok(activated.run("user", "ssh-key", "add", "bob", "-", input=key + "\n"))

        def keys(name):
            proc = subprocess.run(
                [*NOBODY, nobody_binary(), "userdb", "ssh-authorized-keys", "--folder",
                 str(folder), name], capture_output=True, text=True, env={"PATH": "/usr/bin"},
                cwd="/")
            return proc.returncode, proc.stdout, proc.stderr

        assert keys("bob") == (0, key + "\n", "")
        for name in ("nobody-known", "../bob", "alice"):
            assert keys(name) == (0, "", "")
        ok(activated.run("user", "disable", "bob"))
        assert keys("bob") == (0, "", "")
        ok(activated.run("user", "enable", "bob"))
        ok(activated.run("user", "edit", "bob", "--expires", "2020-01-01"))
        assert keys("bob") == (0, "", "")
        ok(activated.run("user", "edit", "bob", "--expires", "never"))
        assert keys("bob") == (0, key + "\n", "")
        (folder / "bob.user").chmod(0o664)
        assert keys("bob") == (3, "", f"The user records folder {folder}/bob.user cannot be used: "
                               "group or others may write the record (mode 664).\n")
        (folder / "bob.user").chmod(0o644)
        os.chown(folder, 65534, 65534)
        assert keys("bob") == (3, "", f"The user records folder {folder} cannot be used: the "
                               "folder is owned by uid 65534, not root.\n")
        os.chown(folder, 0, 0)
    finally:
        userdb(activated, "disable")
        shutil.rmtree(folder.parent, ignore_errors=True)
