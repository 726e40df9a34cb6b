"""Names no account may take: all digits (programs would read them as uids, as `useradd`
refuses them), and where the store's accounts are Linux users (a host keeps their records, or
the store gives them uids), a name this system already knows, or one that differs from it only in
case, whether it comes by `user add`, `user edit --username` or `user import`: such an account
would never be this system's user, and would use up a uid."""

import pytest

from conftest import BOB_EMAIL, BOB_FULL_NAME, BOB_PASSWORD, USERNAME
from hostusers import unique_name, user_records
from importing import csv_file

ALL_DIGITS = "User name must not be all digits (programs would take it for a uid)!\n"
HASH = "pbkdf2_sha256$1000$c2FsdA$" + "A" * 43 + "="


def add(device, name):
    return device.run("user", "add", "--username", name, "--full-name", BOB_FULL_NAME,
                      "--email", BOB_EMAIL, "--password-stdin", input=BOB_PASSWORD + "\n")


def taken(name, system_name=None) -> str:
    if system_name is None:
        return (f"{name} is already a user or group of this system (getent passwd {name}); "
                "choose another user name!")
    return (f"{name} differs only in case from {system_name}, a user or group of this system "
            f"(getent passwd {system_name}); choose another user name!")


@pytest.mark.parametrize("name", ["0", "1000", "65534"])
def test_all_digit_names_are_refused(activated, name):
    added = add(activated, name)
    assert (added.code, added.stdout, added.stderr) == (1, "", ALL_DIGITS)
    edited = activated.run("user", "edit", USERNAME, "--username", name)
    assert (edited.code, edited.stderr) == (1, ALL_DIGITS)
    assert [a["username"] for a in activated.accounts()] == [USERNAME]


def test_system_names_refused_where_records_are_kept(device):
    # Names of their own: while the records are in /run/userdb, NSS knows them.
    owner, bob = unique_name("owner"), unique_name("bob")
    device.activate(username=owner)
    device.add_user(username=bob)
    activated = device
    with user_records(activated):
        for name, like in (("daemon", None), ("Root", "root"), ("NoBody", "nobody")):
            added = add(activated, name)
            assert (added.code, added.stdout, added.stderr) == (1, "", taken(name, like) + "\n")
        edited = activated.run("user", "edit", bob, "--username", "daemon")
        assert (edited.code, edited.stderr) == (1, taken("daemon") + "\n")
        imported = activated.run("user", "import", "-",
                                 input=csv_file([f"sys,Sys,sys@example.org,{HASH}"]))
        assert imported.code == 1, imported
        assert f"line 2 (sys): {taken('sys')}" in imported.stderr, imported
    assert sorted(a["username"] for a in activated.accounts()) == sorted([owner, bob])


def test_system_names_refused_where_the_store_gives_uids_and_no_record_is_kept_here(device):
    """A fleet's administrator adds accounts on a machine that keeps no records; the store
    gives every account a uid as it is made, so a system name is refused there too (it would
    use up a uid that no host where the name is a system user could serve)."""
    owner, bob = unique_name("owner"), unique_name("bob")
    device.activate(username=owner)
    with user_records(device):
        pass
    assert device.run("userdb", "status").stdout.splitlines()[1] == "User records: off"
    added = add(device, "daemon")
    assert (added.code, added.stdout, added.stderr) == (1, "", taken("daemon") + "\n")
    device.add_user(username=bob)
    edited = device.run("user", "edit", bob, "--username", "Root")
    assert (edited.code, edited.stderr) == (1, taken("Root", "root") + "\n")
    imported = device.run("user", "import", "-",
                          input=csv_file([f"sys,Sys,sys@example.org,{HASH}"]))
    assert imported.code == 1, imported
    assert f"line 2 (sys): {taken('sys')}" in imported.stderr, imported
    listed = {a["username"]: a["uid"] is not None for a in device.accounts()}
    assert listed == {owner: True, bob: True}


def test_a_system_name_is_kept_where_accounts_are_not_linux_users(activated):
    """A store that gives no uids (no host ever kept records) keeps such a name: its accounts
    are not Linux users anywhere."""
    added = add(activated, "daemon")
    assert (added.code, added.stderr) == (0, ""), added
