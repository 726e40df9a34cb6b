"""An account gets its uid (and its home) and a group its gid in the command that makes them,
whenever the store gives numbers (a host keeps its records), on a machine that keeps no records
too: `user add`, `user import`, `group add`. Another host's `userdb sync` then only writes the
files. The hosts are this machine under other host names (`unshare --uts`), their folders
outside NSS's (the records read as files); the store read as the oracle."""

import json
import subprocess

from conftest import PASSWORD
from userdbhelp import PBKDF2, on_host, unique

RANGE = "24600-24699"


def numbers(device) -> dict:
    """Every number the store gave: {name: (number, kind)}."""
    return {name: (number, kind)
            for number, kind, name in device.query("SELECT number, kind, name FROM posix_id")}


def test_accounts_and_groups_made_where_no_records_are_kept_get_their_numbers_at_once(
        device, tmp_path):
    owner, bob, devs = unique("o"), unique("b"), unique("g")
    imported = [unique("i"), unique("i")]
    device.activate(username=owner)
    folder = tmp_path / "host-1-userdb"
    enabled = on_host(device, "host-1", "userdb", "enable", "--folder", str(folder),
                      "--uids", RANGE)
    assert (enabled.code, enabled.stdout, enabled.stderr) == (
        0, f"User records in {folder} (uids {RANGE}): 1 user, 1 group; 4 files written, 0 "
           "removed.\n", ""), enabled

    # This machine keeps no records: each command numbers what it makes, in its own write.
    added = device.run("user", "add", "--username", bob, "--full-name", "Bob", "--email",
                       "bob@example.org", "--password-stdin", input=PASSWORD + "\n")
    assert (added.code, added.stdout, added.stderr) == (0, f"Account added: {bob}.\n", "")
    grouped = device.run("group", "add", devs)
    assert (grouped.code, grouped.stderr) == (0, ""), grouped
    csv = tmp_path / "users.csv"
    csv.write_text("username,full_name,email,password_hash\n" + "".join(
        f"{name},Imp Orted,{name}@example.org,{PBKDF2}\n" for name in imported))
    result = device.run("user", "import", str(csv), "--format", "csv")
    assert (result.code, result.stderr) == (0, ""), result

    given = numbers(device)
    assert {name: kind for name, (_, kind) in given.items()} == {
        owner: "user", bob: "user", devs: "group", imported[0]: "user", imported[1]: "user"}
    assert all(24600 <= number <= 24699 for number, _ in given.values()), given
    for name in (bob, *imported):
        assert device.query("SELECT uid, home FROM account WHERE username = ?", name) == [
            (given[name][0], f"/home/{name}")], name
    assert device.query("SELECT gid FROM account_group WHERE name = ?", devs) == [
        (given[devs][0],)]

    # The host's sync writes their records with those numbers (it numbers nothing).
    synced = on_host(device, "host-1", "userdb", "sync")
    assert (synced.code, synced.stdout, synced.stderr) == (
        0, f"User records in {folder} (uids {RANGE}): 4 users, 5 groups; 14 files written, 0 "
           "removed.\n", ""), synced
    for name in (bob, *imported):
        record = json.loads((folder / f"{name}.user").read_text())
        assert (record["uid"], record["homeDirectory"]) == (given[name][0], f"/home/{name}")
    assert json.loads((folder / f"{devs}.group").read_text())["gid"] == given[devs][0]
    assert numbers(device) == given
    disabled = on_host(device, "host-1", "userdb", "disable")
    assert disabled.code == 0, disabled


def test_a_store_no_host_keeps_records_of_gives_no_numbers(device):
    """Before any host keeps records (and no number was ever given) nothing is numbered: the
    first host's enable numbers what exists."""
    device.activate()
    device.add_user()
    assert device.query("SELECT count(*) FROM posix_id") == [(0,)]
    assert device.query("SELECT count(*) FROM account WHERE uid IS NOT NULL") == [(0,)]


def test_an_owner_activated_after_a_reset_gets_a_uid_at_once(device, tmp_path):
    """The numbers outlive a reset, so the store still gives them: the new owner activated on a
    machine that keeps no records is numbered by `activate` itself."""
    device.activate(username=unique("o"))
    folder = tmp_path / "host-1-userdb"
    enabled = on_host(device, "host-1", "userdb", "enable", "--folder", str(folder),
                      "--uids", "24610-24619")
    assert enabled.code == 0, enabled
    reset = device.run("reset", "--yes")
    assert reset.code == 0, reset
    owner = unique("o")
    device.activate(username=owner)
    given = numbers(device)
    assert given[owner][1] == "user" and 24610 <= given[owner][0] <= 24619, given
    assert device.query("SELECT uid, home FROM account WHERE username = ?", owner) == [
        (given[owner][0], f"/home/{owner}")]
    assert on_host(device, "host-1", "userdb", "disable").code == 0


def test_numbers_the_machine_making_the_account_knows_are_skipped(device, tmp_path):
    """A local user and a local group of this machine (which keeps no records) holding the next
    two numbers: the account and the group it makes get the two after."""
    local = unique("l")
    device.activate(username=unique("o"))
    folder = tmp_path / "host-1-userdb"
    enabled = on_host(device, "host-1", "userdb", "enable", "--folder", str(folder),
                      "--uids", "24630-24639")
    assert enabled.code == 0, enabled
    subprocess.run(["useradd", "-M", "-N", "-u", "24631", "-g", "nogroup", local], check=True)
    subprocess.run(["groupadd", "-g", "24632", local + "g"], check=True)
    try:
        bob, devs = unique("b"), unique("g")
        device.add_user(username=bob)
        assert device.run("group", "add", devs).code == 0
        assert {name: number for name, (number, _) in numbers(device).items()
                if name in (bob, devs)} == {bob: 24633, devs: 24634}
    finally:
        subprocess.run(["userdel", local], check=True)
        subprocess.run(["groupdel", local + "g"], check=True)
        on_host(device, "host-1", "userdb", "disable")
