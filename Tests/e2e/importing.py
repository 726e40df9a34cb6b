"""What the `accounts user import` and `user export` tests (test_import_*.py, test_export.py)
share: the people they import, the real tools that make their files (htpasswd, mkpasswd), the
commands and the checks on what import prints, a second device, and a scratch Django project whose
fixtures (`django_template`, `django_project`) a test module takes with
`pytest_plugins = ["importing"]`."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import INVALID, Device


CAROL = "carol"
CAROL_PASSWORD = "purple elephants dance quietly"
DAVE = "dave"
DAVE_PASSWORD = "seven lanterns over the harbour"
ERIN = "erin"
ERIN_PASSWORD = "marmalade typewriter glacier"
FRANK = "frank"
FRANK_PASSWORD = "velvet thunder across the moor"
DOMAIN = "example.net"


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


def other_device(tmp_path, owner="owen"):
    """A second device, activated by a different owner."""
    root = tmp_path / "other"
    root.mkdir()
    device = Device(root)
    device.activate(owner, "Owen Owner", "owen@example.org", "quartz meadow lantern ninety nine")
    return device
