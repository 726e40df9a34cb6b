"""User records read back through NSS after every changing command (`getent passwd`, `getent
group`, `id`), in /run/userdb (which libnss-systemd reads) with names and uid ranges of each
test's own, the tests running in parallel; the numbers: a number NSS knows skipped, none given
twice, a used-up range."""

from __future__ import annotations

import json
import subprocess

from conftest import PASSWORD, ROLES
from userdbhelp import RUN_USERDB, PBKDF2, unique, userdb, enable, add, ok, check_records, getent, groups_of


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
        # The members are in the membership files alone, which getent and id read.
        assert "members" not in records[f"{crew}.group"]
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
    owner gets the third; a removed account's uid is never given again, nor its home, nor its
    name's; neither name can be an account's, added or renamed."""
    local = unique("l")
    subprocess.run(["useradd", "-M", "-N", "-u", "24200", "-g", "nogroup", local], check=True)
    subprocess.run(["groupadd", "-g", "24201", local + "g"], check=True)
    try:
        enable(activated, tmp_path / "rec", "24200-24209")
        assert activated.account("alice")["uid"] == 24202
        add(activated, "bob")
        assert activated.account("bob")["uid"] == 24203
        ok(activated.run("user", "remove", "bob", "--yes"))
        add(activated, "bob", stderr="bob gets the home folder /home/bob-24204: /home/bob was "
            "given to another account before.\n")
        add(activated, "carol")
        assert [activated.account(n)["uid"] for n in ("bob", "carol")] == [24204, 24205]
        result = activated.run("user", "add", "--username", local, "--full-name", "L",
                               "--email", "l@example.org", "--password-stdin",
                               input=PASSWORD + "\n")
        assert (result.code, result.stdout, result.stderr) == (
            1, "", f"{local} is already a user or group of this system (getent passwd "
            f"{local}); choose another user name!\n")
        for name in (local, local + "g"):
            result = activated.run("user", "edit", "carol", "--username", name)
            assert (result.code, result.stdout, result.stderr) == (
                1, "", f"{name} is already a user or group of this system (getent passwd "
                f"{name}); choose another user name!\n")
        assert activated.account("carol")["uid"] == 24205
    finally:
        subprocess.run(["userdel", local], check=True)
        subprocess.run(["groupdel", local + "g"], check=True)


def test_range_used_up(activated, tmp_path):
    """Numbers run out: the account without one gets no record; the command that made it says
    so, and so does sync (exit 0), or, as a fleet host's role, that the administrator's sync
    numbers it."""
    used_up = ("The uid range 24300-24300 is used up: 1 account or group has no number and no "
               "record; widen it with accounts userdb enable --uids FIRST-LAST.")
    enable(activated, tmp_path / "rec", "24300-24300")
    add(activated, "bob", stderr=used_up + "\n")
    result = userdb(activated, "sync")
    assert result.code == 0, result
    assert (used_up if not ROLES else "this host's role may not give one") in result.stderr
    assert not (tmp_path / "rec" / "bob.user").exists()
    enable(activated, tmp_path / "rec", "24300-24301")
    assert json.loads((tmp_path / "rec" / "bob.user").read_text())["uid"] == 24301
