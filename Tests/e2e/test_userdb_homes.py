"""No home folder is given to two accounts: a renamed account keeps its home (its files are
there), and an account added later under its old name, or under the name of a removed account,
gets another folder; `--home` naming a folder another account was given is refused. Read back
as the host sees it, through NSS."""

from conftest import BOB_EMAIL, BOB_FULL_NAME, BOB_PASSWORD
from hostusers import passwd_entry, unique_name, user_records

def add(device, name, *args):
    return device.run("user", "add", "--username", name, "--full-name", BOB_FULL_NAME,
                      "--email", BOB_EMAIL, "--password-stdin", *args,
                      input=BOB_PASSWORD + "\n")

def home_of(name) -> tuple:
    entry = passwd_entry(name)
    return int(entry[2]), entry[5]

def test_a_new_account_never_gets_a_renamed_or_removed_accounts_home(device):
    owner, name = unique_name("owner"), unique_name("h")
    device.activate(username=owner)
    with user_records(device):
        assert add(device, name).code == 0
        first_uid, home = home_of(name)
        assert home == f"/home/{name}"
        renamed = device.run("user", "edit", name, "--username", f"{name}-old")
        assert renamed.code == 0, renamed
        assert home_of(f"{name}-old") == (first_uid, f"/home/{name}")
        added = add(device, name)
        assert added.code == 0, added
        second_uid, second_home = home_of(name)
        assert second_uid != first_uid
        assert second_home == f"/home/{name}-{second_uid}"
        assert (f"{name} gets the home folder /home/{name}-{second_uid}: /home/{name} was given "
                "to another account before.") in added.stderr, added
        # After both are removed, the name's folders are still not given again.
        for gone in (name, f"{name}-old"):
            removed = device.run("user", "remove", gone, "--yes")
            assert removed.code == 0, removed
        assert add(device, name).code == 0
        third_uid, third_home = home_of(name)
        assert third_home == f"/home/{name}-{third_uid}"
        refused = add(device, unique_name("h"), "--home", f"/home/{name}")
        assert (refused.code, refused.stdout, refused.stderr) == (
            1, "", f"--home /home/{name} was given to another account, and a home folder is "
                   "never given twice (its files are that account's); choose another!\n")
        edited = device.run("user", "edit", owner, "--home", f"/home/{name}")
        assert (edited.code, edited.stderr) == (
            1, f"--home /home/{name} was given to another account, and a home folder is never "
               "given twice (its files are that account's); choose another!\n")
