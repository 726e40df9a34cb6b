"""`accounts group add|list|show|remove` and memberships through `user add --group` and
`user edit --add-group/--remove-group`: the exact sentences, exit codes, the log, and what
removing a group, an account or the whole device does to them."""

import json

import pytest

from conftest import BOB, BOB_EMAIL, BOB_FULL_NAME, BOB_PASSWORD, NOT_ACTIVATED, USERNAME
from userhelp import NO_SUCH, kinds, public_again

GROUP_RULE = ("Group name {} is not valid: use 1 to 32 of a-z, 0-9, _ and -, starting with a "
              "letter or _!\n")
STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"


def group(device, *args):
    return device.run("group", *args)


def add_groups(device, *names):
    for name in names:
        result = group(device, "add", name)
        assert (result.code, result.stdout, result.stderr) == (
            0, f"Group added: {name}.\n", ""), result


def add_bob(device, *groups):
    """`user add` of bob, with `--group` for each of `groups`."""
    flags = [arg for name in groups for arg in ("--group", name)]
    return device.run("user", "add", "--username", BOB, "--full-name", BOB_FULL_NAME,
                      "--email", BOB_EMAIL, "--password-stdin", *flags,
                      input=BOB_PASSWORD + "\n")


def group_events(device):
    return [(e["event"], e["user"], e["detail"]) for e in device.events()
            if e["event"].startswith("group_")]


def members(device, name):
    result = group(device, "show", name, "--json")
    assert (result.code, result.stderr) == (0, ""), result
    return json.loads(result.stdout)["members"]


# group add

def test_add_says_so_and_logs_it(activated):
    """group add: `Group added: staff.`, exit 0, one group_added event naming the group."""
    add_groups(activated, "staff")
    assert group_events(activated) == [("group_added", None, "group staff")]


def test_add_a_taken_name(activated):
    """A name a group already has: one sentence, exit 1, nothing logged."""
    add_groups(activated, "staff")
    result = group(activated, "add", "staff")
    assert (result.code, result.stdout, result.stderr) == (
        1, "", "Group name staff is already taken!\n")
    assert kinds(activated).count("group_added") == 1


@pytest.mark.parametrize("name", ["Staff", "1staff", "-staff", "st aff", "stäff", "st.aff",
                                  "a" * 33])
def test_add_a_name_breaking_linux_rules(activated, name):
    """Linux's rules (^[a-z_][a-z0-9_-]*$, 1 to 32): anything else is refused, exit 1."""
    result = group(activated, "add", "--", name)
    assert (result.code, result.stdout, result.stderr) == (1, "", GROUP_RULE.format(name))
    assert group(activated, "list").stdout == ""


@pytest.mark.parametrize("name", ["_", "a", "web-admins_2", "z" * 32])
def test_add_names_within_the_rules(activated, name):
    add_groups(activated, name)


@pytest.mark.empty_database
def test_add_on_public_device_and_without_database(device):
    """On a Public device: activate first (exit 1); where no database exists: exit 1, nothing
    made."""
    result = group(device, "add", "staff")
    assert result.code == 1 and device.nothing_created(), result
    public_again(device)
    result = group(device, "add", "staff")
    assert (result.code, result.stdout, result.stderr) == (1, "", NOT_ACTIVATED + "\n")


# group list / show

def test_list_text_and_json(activated):
    """list: a header then one line per group in name order with its member count; --json one
    object per line (name, memberCount, createdAt)."""
    add_groups(activated, "wheel", "_ops", "staff")
    assert add_bob(activated, "wheel").code == 0
    assert activated.run("user", "edit", USERNAME, "--add-group", "wheel").code == 0
    result = group(activated, "list")
    assert (result.code, result.stderr) == (0, "")
    assert [line.split()[:2] for line in result.out_lines] == [
        ["GROUP", "MEMBERS"], ["_ops", "0"], ["staff", "0"], ["wheel", "2"]]
    result = group(activated, "list", "--json")
    objects = [json.loads(line) for line in result.out_lines]
    assert [list(o) for o in objects] == [["name", "memberCount", "createdAt"]] * 3
    assert [(o["name"], o["memberCount"]) for o in objects] == [
        ("_ops", 0), ("staff", 0), ("wheel", 2)]


@pytest.mark.empty_database
def test_list_with_no_group_or_no_database(device):
    """Nothing printed, exit 0, where there is no group or no database."""
    result = group(device, "list")
    assert (result.code, result.stdout, result.stderr) == (0, "", "")
    assert device.nothing_created()


def test_show_text_and_json(activated):
    """show: the name, when it was added, its members by user name; --json one object."""
    add_groups(activated, "staff")
    result = group(activated, "show", "staff")
    assert result.code == 0 and result.out_lines[0] == "Group: staff", result
    assert result.out_lines[2] == "Members: -"
    assert add_bob(activated, "staff").code == 0
    assert activated.run("user", "edit", USERNAME, "--add-group", "staff").code == 0
    assert group(activated, "show", "staff").out_lines[2] == f"Members: {USERNAME}, {BOB}"
    shown = json.loads(group(activated, "show", "staff", "--json").stdout)
    assert list(shown) == ["name", "createdAt", "members"]
    assert (shown["name"], shown["members"]) == ("staff", [USERNAME, BOB])


@pytest.mark.parametrize("args", [["show", "nope"], ["remove", "nope"], ["show", "Not-Valid"]])
def test_unknown_group_exit_5(activated, args):
    result = group(activated, *args)
    assert (result.code, result.stdout, result.stderr) == (
        NO_SUCH, "", f"No group named {args[1]}.\n")


# Memberships

def test_user_add_with_groups(activated):
    """user add --group (repeatable) joins each; user show and list --json name them sorted;
    one group_member_added per group."""
    add_groups(activated, "staff", "wheel")
    result = add_bob(activated, "wheel", "staff")
    assert (result.code, result.stdout, result.stderr) == (0, f"Account added: {BOB}.\n", "")
    assert "Groups: staff, wheel" in activated.run("user", "show", BOB).out_lines
    assert activated.account(BOB)["groups"] == ["staff", "wheel"]
    assert [a["groups"] for a in activated.accounts()] == [[], ["staff", "wheel"]]
    assert group_events(activated)[2:] == [
        ("group_member_added", BOB, "group wheel"), ("group_member_added", BOB, "group staff")]


def test_user_add_with_an_unknown_group(activated):
    """An unknown group: one sentence, exit 5, no account added, nothing logged."""
    add_groups(activated, "staff")
    before = activated.events()
    result = add_bob(activated, "staff", "nope")
    assert (result.code, result.stdout, result.stderr) == (NO_SUCH, "", "No group named nope.\n")
    assert [a["username"] for a in activated.accounts()] == [USERNAME]
    assert activated.events() == before


def test_user_edit_joins_and_leaves(activated):
    """--add-group and --remove-group repeat and combine with the other options: one
    transaction, a sentence per change, an event per membership."""
    add_groups(activated, "staff", "wheel", "ops")
    assert add_bob(activated, "staff").code == 0
    result = activated.run("user", "edit", BOB, "--full-name", "Robert", "--remove-group",
                           "staff", "--add-group", "wheel", "--add-group", "ops")
    assert (result.code, result.stderr) == (0, ""), result
    assert result.out_lines == [
        f"Account edited: {BOB}.", f"{BOB} removed from group staff.",
        f"{BOB} added to group wheel.", f"{BOB} added to group ops."]
    assert activated.account(BOB)["groups"] == ["ops", "wheel"]
    assert group_events(activated)[-3:] == [
        ("group_member_removed", BOB, "group staff"), ("group_member_added", BOB, "group wheel"),
        ("group_member_added", BOB, "group ops")]
    result = activated.run("user", "edit", BOB, "--add-group", "ops")
    assert (result.code, result.stdout) == (0, f"{BOB} is already in group ops; nothing changed.\n")


def test_user_edit_refusals_change_nothing(activated):
    """Leaving a group the account is not in: exit 1; an unknown group: exit 5; either way the
    other changes of the same command are not made."""
    add_groups(activated, "staff", "wheel")
    assert add_bob(activated).code == 0
    before = activated.events()
    result = activated.run("user", "edit", BOB, "--full-name", "Robert", "--add-group", "staff",
                           "--remove-group", "wheel")
    assert (result.code, result.stdout, result.stderr) == (
        1, "", f"{BOB} is not in group wheel.\n")
    result = activated.run("user", "edit", BOB, "--full-name", "Robert", "--add-group", "nope")
    assert (result.code, result.stdout, result.stderr) == (NO_SUCH, "", "No group named nope.\n")
    assert activated.account(BOB)["fullName"] == BOB_FULL_NAME
    assert activated.account(BOB)["groups"] == []
    assert activated.events() == before


# Removals

def test_group_remove_keeps_its_accounts(activated):
    """group remove: its memberships end, every account stays; logged group_removed."""
    add_groups(activated, "staff", "wheel")
    assert add_bob(activated, "staff", "wheel").code == 0
    result = group(activated, "remove", "staff")
    assert (result.code, result.stdout, result.stderr) == (
        0, "Group removed: staff (1 membership ended).\n", "")
    assert [a["username"] for a in activated.accounts()] == [USERNAME, BOB]
    assert activated.account(BOB)["groups"] == ["wheel"]
    assert group_events(activated)[-1] == ("group_removed", None, "group staff")
    assert activated.query("SELECT count(*) FROM group_member")[0][0] == 1


def test_user_remove_ends_its_memberships(activated):
    add_groups(activated, "staff")
    assert add_bob(activated, "staff").code == 0
    assert activated.run("user", "remove", BOB, "--yes").code == 0
    assert members(activated, "staff") == []


def test_reset_removes_every_group(activated):
    """reset makes the device Public: no account, no group, no membership is left."""
    add_groups(activated, "staff")
    assert add_bob(activated, "staff").code == 0
    assert activated.run("reset", "--yes").code == 0
    assert group(activated, "list").stdout == ""
    assert activated.query("SELECT count(*) FROM account_group")[0][0] == 0


# The log

@pytest.mark.parametrize("kind", ["group_added", "group_removed", "group_member_added",
                                  "group_member_removed", "pam_session_opened",
                                  "pam_session_closed"])
def test_log_event_knows_the_new_kinds(activated, kind):
    """log --event takes every new kind (the PAM session ones included)."""
    add_groups(activated, "staff", "wheel")
    assert add_bob(activated, "staff").code == 0
    assert activated.run("user", "edit", BOB, "--remove-group", "staff").code == 0
    assert group(activated, "remove", "wheel").code == 0
    result = activated.run("log", "--event", kind, "--json")
    assert (result.code, result.stderr) == (0, "")
    assert {json.loads(line)["event"] for line in result.out_lines} <= {kind}
    if not kind.startswith("pam_"):
        assert len(result.out_lines) >= 1
