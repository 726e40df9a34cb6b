"""`accounts user import` of Django's `dumpdata auth.user` files, made by Django's own
`create_user` and `dumpdata` in a scratch project."""

import json
import re

import pytest

from conftest import (BOB, BOB_EMAIL, BOB_FULL_NAME, BOB_PASSWORD, PASSWORD, USERNAME,
                      USERNAME_RULE)

# The helpers' asserts report their values as the tests' own do.
pytest.register_assert_rewrite("importing")
from importing import (CAROL, CAROL_PASSWORD, DAVE, DAVE_PASSWORD, import_,  # noqa: E402
                       logs_in, names, nothing_imported, pbkdf2, refused_login, starts,
                       unchanged, write)

pytest_plugins = ["importing"]


def bob_and_carol(django_project, device, **carol_extra):
    """Django users bob (named Bob Builder) and carol (no names), dumped into users.json."""
    users = [[BOB, BOB_EMAIL, BOB_PASSWORD, {"first_name": "Bob", "last_name": "Builder"}],
             [CAROL, "carol@example.org", CAROL_PASSWORD, carol_extra]]
    return django_project.dump_users(users, device.root / "users.json")


def test_django_dumpdata_imports_and_logs_in(activated, django_project):
    """A `dumpdata auth.user` file is guessed as django and imported: names joined into the full
    name (the user name when both are empty), the e-mail and Django's hash kept; each user logs in
    with its Django password."""
    dump = bob_and_carol(django_project, activated)
    result = import_(activated, "users.json")
    assert (result.code, result.stdout, result.stderr) == (
        0, "Imported 2 accounts from users.json.\n", ""), result
    accounts = {a["username"]: a for a in activated.accounts()}
    assert sorted(accounts) == [USERNAME, BOB, CAROL]
    assert (accounts[BOB]["fullName"], accounts[BOB]["email"]) == (BOB_FULL_NAME, BOB_EMAIL)
    assert (accounts[CAROL]["fullName"], accounts[CAROL]["email"]) == (CAROL, "carol@example.org")
    assert [accounts[n]["owner"] or accounts[n]["disabled"] for n in (BOB, CAROL)] == [False] * 2
    assert activated.stored_hash(BOB) == dump[0]["fields"]["password"]
    logs_in(activated, BOB, BOB_PASSWORD, BOB_FULL_NAME)
    logs_in(activated, CAROL, CAROL_PASSWORD)
    refused_login(activated, BOB, CAROL_PASSWORD)


def test_django_inactive_user_is_imported_disabled(activated, django_project):
    """`is_active: false` imports the account disabled: its right password is refused like a
    wrong one until `user enable`."""
    bob_and_carol(django_project, activated, is_active=False)
    assert import_(activated, "users.json").code == 0
    assert [(a["username"], a["disabled"]) for a in activated.accounts()] == [
        (USERNAME, False), (BOB, False), (CAROL, True)]
    refused_login(activated, CAROL, CAROL_PASSWORD)
    assert activated.run("user", "enable", CAROL).code == 0
    logs_in(activated, CAROL, CAROL_PASSWORD)


@pytest.mark.parametrize("value, shown", [
    ("false", '"false"'), ("true", '"true"'), ("0", '"0"'), (None, "null"), (2, "2"),
    ([], "[]"),
])
def test_django_is_active_must_be_a_boolean(activated, django_project, value, shown):
    """`is_active` that is not a JSON boolean nor the number 1 or 0 (a string such as "false",
    null, 2, a list) is a problem on its entry, never an enabled account: nothing imported."""
    dump = bob_and_carol(django_project, activated)
    dump[1]["fields"]["is_active"] = value
    write(activated, "users.json", json.dumps(dump, indent=2))
    before, events = activated.accounts(), activated.events()
    nothing_imported(import_(activated, "users.json"),
                     f"entry 2 (carol): is_active must be true or false (or 1 or 0), "
                     f"not {shown}.")
    unchanged(activated, before, events)


def test_django_is_active_as_a_number(activated, django_project):
    """`is_active` of 0 or 1 (Django's own BooleanField reads these as false and true) imports
    the account disabled or enabled."""
    dump = bob_and_carol(django_project, activated)
    dump[0]["fields"]["is_active"] = 1
    dump[1]["fields"]["is_active"] = 0
    write(activated, "users.json", json.dumps(dump))
    assert import_(activated, "users.json").code == 0
    assert [(a["username"], a["disabled"]) for a in activated.accounts()] == [
        (USERNAME, False), (BOB, False), (CAROL, True)]


def test_django_dump_on_one_line_is_read_in_pieces(activated, django_hashers):
    """`dumpdata` without --indent writes the whole list on one line: 3,000 users (about 700
    KB, read a block at a time, entries across the blocks' edges; quotes, brackets and braces
    inside strings) import, and one logs in."""
    hash_ = pbkdf2(django_hashers, BOB_PASSWORD)
    users = [{"model": "auth.user", "pk": n + 1,
              "fields": {"username": f"user{n}", "first_name": 'Say "[x]" {y}',
                         "last_name": "\\]}", "email": f"user{n}@example.org",
                         "password": hash_, "is_active": True, "groups": [],
                         "user_permissions": [], "date_joined": "2024-01-01T00:00:00Z",
                         "last_login": None}} for n in range(3000)]
    text = json.dumps(users, separators=(",", ":"))
    assert "\n" not in text and len(text) > 600_000
    write(activated, "users.json", text)
    result = import_(activated, "users.json")
    assert (result.code, result.stdout, result.stderr) == (
        0, "Imported 3000 accounts from users.json.\n", ""), result
    assert activated.account("user2999")["fullName"] == 'Say "[x]" {y} \\]}'
    logs_in(activated, "user1500", BOB_PASSWORD, 'Say "[x]" {y} \\]}')


def test_django_list_broken_off_names_its_line(activated, django_project):
    """A dump cut short after its second entry (no closing `]`): the entries before it are
    checked as usual, then the line where the list breaks off is named; nothing imported."""
    bob_and_carol(django_project, activated)
    text = (activated.root / "users.json").read_text().rstrip()
    assert text.endswith("]")
    text = text[:-1].rstrip()
    write(activated, "users.json", text)
    before, events = activated.accounts(), activated.events()
    nothing_imported(import_(activated, "users.json"),
                     f"line {text.count(chr(10)) + 1}: the JSON list breaks off here, after "
                     f"entry 2 (a ',' or ']' is missing, or the file ends early).")
    unchanged(activated, before, events)


def test_django_empty_email_is_a_problem(activated, django_project):
    """A Django user without an e-mail is a problem (`entry 2 (carol): …`): nothing imported."""
    users = [[BOB, BOB_EMAIL, BOB_PASSWORD, {}], [CAROL, "", CAROL_PASSWORD, {}]]
    django_project.dump_users(users, activated.root / "users.json")
    before, events = activated.accounts(), activated.events()
    nothing_imported(import_(activated, "users.json"), starts("entry 2 (carol): "))
    unchanged(activated, before, events)


def test_django_other_hasher_is_refused_by_name(activated, django_project):
    """A Django hash of another hasher (`md5$…`) is refused naming it; nothing imported."""
    users = [[BOB, BOB_EMAIL, BOB_PASSWORD, {}],
             [CAROL, "carol@example.org", CAROL_PASSWORD, {"hasher": "md5"}]]
    dump = django_project.dump_users(users, activated.root / "users.json")
    assert dump[1]["fields"]["password"].startswith("md5$")
    result = import_(activated, "users.json")
    nothing_imported(result, starts("entry 2 (carol): "))
    assert "md5" in result.err_lines[0].lower(), result.stderr
    assert names(activated) == [USERNAME]


def test_django_other_model_is_a_problem(activated, django_project):
    """`dumpdata auth.user auth.group`: the group entry (entry 2, which has no user name) is a
    problem; nothing imported."""
    django_project.dump_users([[BOB, BOB_EMAIL, BOB_PASSWORD, {}]], activated.root / "all.json",
                              models=("auth.user", "auth.group"), groups=("staff",))
    nothing_imported(import_(activated, "all.json"), re.compile(r"entry 2\b.*auth\.group.*"))
    assert names(activated) == [USERNAME]


def test_django_taken_and_bad_names(activated, django_project):
    """Django allows `Alice` (taken here, case-insensitively) and `bob+x` (not a user name here):
    `entry 1 (Alice): user name Alice is already taken.` and the user-name rule for entry 2."""
    users = [["Alice", "a2@example.org", PASSWORD, {}], ["bob+x", BOB_EMAIL, BOB_PASSWORD, {}]]
    django_project.dump_users(users, activated.root / "users.json")
    nothing_imported(import_(activated, "users.json"),
                     "entry 1 (Alice): user name Alice is already taken.",
                     starts("entry 2 (bob+x): ", USERNAME_RULE))
    assert names(activated) == [USERNAME]


def test_django_full_name_rules(activated, django_project):
    """Django's name fields: only a last name gives that name alone (trimmed); a first and last
    name of 150 characters each (Django's limit) make a full name over 256: a problem."""
    users = [[BOB, BOB_EMAIL, BOB_PASSWORD, {"last_name": "Builder"}],
             [DAVE, "dave@example.org", DAVE_PASSWORD,
              {"first_name": "D" * 150, "last_name": "E" * 150}]]
    django_project.dump_users(users, activated.root / "users.json")
    nothing_imported(import_(activated, "users.json"),
                     starts("entry 2 (dave): ", "Full name must be at most 256 characters!"))
    django_project.admin("dumpdata", "auth.user", "--pks", "1", "--output",
                         str(activated.root / "bob.json"))
    assert import_(activated, "bob.json").stdout == "Imported 1 account from bob.json.\n"
    assert activated.account(BOB)["fullName"] == "Builder"


def test_django_case_duplicates_are_a_problem(activated, django_project):
    """Django keeps `bob` and `Bob` apart; here they share a key: entry 2 (Bob) is a duplicate
    of entry 1; nothing imported."""
    users = [[BOB, BOB_EMAIL, BOB_PASSWORD, {}], ["Bob", "bob2@example.org", CAROL_PASSWORD, {}]]
    django_project.dump_users(users, activated.root / "users.json")
    result = import_(activated, "users.json")
    nothing_imported(result, starts("entry 2 (Bob): user name Bob is also "))
    assert "1" in result.err_lines[0].split("is also", 1)[1], result.stderr
    assert names(activated) == [USERNAME]
