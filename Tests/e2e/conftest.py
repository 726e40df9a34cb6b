"""Shared fixtures for the end-to-end tests of the `accounts` binary.

Every test gets its own `Device`: a temporary HOME, XDG_DATA_HOME and database, TZ=UTC and (unless
a test asks for the real count) ACCOUNTS_PBKDF2_ITERATIONS=1000 so new hashes are cheap.
"""

from __future__ import annotations

import io
import json
import os
import pathlib
import shutil
import sqlite3
import subprocess
import tempfile
import termios
from dataclasses import dataclass

import pexpect
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("ACCOUNTS_BIN") or str(REPO / ".build" / "debug" / "accounts")

FAST_ITERATIONS = "1000"
DEFAULT_ITERATIONS = 1_200_000

USERNAME = "alice"
FULL_NAME = "Alice Liddell"
EMAIL = "alice@example.org"
PASSWORD = "correct horse battery staple"
WRONG_PASSWORD = "incorrect donkey battery staple"

INVALID = "Invalid user name or password!"
TOO_MANY = "Too many failed attempts"
NOT_ACTIVATED = "This device is not activated yet. Run `accounts activate` to activate it."
INPUT_ENDED = "Input ended before all fields were given; nothing was stored."

# A second account (issue 10), and the sentences of the form every account command shares.
BOB = "bob"
BOB_FULL_NAME = "Bob Builder"
BOB_EMAIL = "bob@example.org"
BOB_PASSWORD = "can we fix it yes we can"
NEW_PASSWORD = "tangerine submarine orchestra 93"
FILL = "Please fill all fields!"
MATCH = "Passwords must match!"
SHORT = "Password must be at least 15 characters!"
PERSONAL = "Password must not be your user name, full name or e-mail address!"
USERNAME_RULE = "User name must be 1 to 64 letters, digits, '.', '_' or '-'!"
EMAIL_RULE = "E-mail address must look like name@example.org, with no spaces!"


AS_ROOT = os.geteuid() == 0
# A second OS user: as root, permissions do not stop root, so such cases run as `nobody`.
NOBODY_UID = 65534
NOBODY = ["setpriv", f"--reuid={NOBODY_UID}", f"--regid={NOBODY_UID}", "--clear-groups"] \
    if AS_ROOT else []
_NOBODY_BIN = []


def nobody_binary():
    """A copy of the binary that `nobody` can run, whatever the checkout's permissions."""
    if not _NOBODY_BIN:
        folder = tempfile.mkdtemp(prefix="accounts-bin-", dir="/tmp")
        os.chmod(folder, 0o755)
        copy = os.path.join(folder, "accounts")
        shutil.copy2(BIN, copy)
        os.chmod(copy, 0o755)
        _NOBODY_BIN.append(copy)
    return _NOBODY_BIN[0]


# Runs a command, then writes its exit code, CPU seconds and peak RSS (KiB) as JSON to a file.
# It is a small process of its own because on Linux a child's peak RSS starts at its parent's
# high-water mark when it execs, and pytest's can exceed what `accounts` itself uses.
REAPER = r"""
import json, os, subprocess, sys, threading
timeout, report, *command = sys.argv[1:]
proc = subprocess.Popen(command)
watchdog = threading.Timer(float(timeout), proc.kill)
watchdog.start()
_, status, usage = os.wait4(proc.pid, 0)
watchdog.cancel()
proc.returncode = os.waitstatus_to_exitcode(status)
with open(report, "w") as f:
    json.dump({"code": proc.returncode, "cpu": usage.ru_utime + usage.ru_stime,
               "rss_kib": usage.ru_maxrss}, f)
"""


def form(username=USERNAME, full_name=FULL_NAME, email=EMAIL, password=PASSWORD, again=None):
    """Five lines of standard input for `accounts activate`."""
    again = password if again is None else again
    return f"{username}\n{full_name}\n{email}\n{password}\n{again}\n"


def screen(child) -> str:
    """Everything the pty showed so far, with \\r\\n turned into \\n."""
    return child.logfile_read.getvalue().replace("\r\n", "\n")


def pty_echo(child) -> bool:
    """The ECHO flag of the child's terminal, read with termios."""
    return bool(termios.tcgetattr(child.child_fd)[3] & termios.ECHO)


def answer(child, prompt, text):
    """Waits for a visible prompt with echo on, then types a line."""
    child.expect_exact(prompt)
    assert child.getecho() and pty_echo(child), f"echo is off at {prompt!r}"
    child.sendline(text)


def answer_secret(child, prompt, text):
    """Waits for a password prompt, checks echo is off, then types a line."""
    child.expect_exact(prompt)
    assert child.waitnoecho(timeout=5), f"echo still on at {prompt!r}"
    assert not child.getecho()
    assert not pty_echo(child)
    child.sendline(text)


def finish(child, timeout=15) -> int:
    """Waits for the spawned process to end and returns its exit status."""
    child.expect(pexpect.EOF, timeout=timeout)
    child.close()
    assert child.signalstatus is None, f"killed by signal {child.signalstatus}"
    return child.exitstatus


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def out_lines(self):
        return self.stdout.splitlines()

    @property
    def err_lines(self):
        return self.stderr.splitlines()


class Device:
    """One isolated device: its own HOME, XDG_DATA_HOME, XDG_STATE_HOME (the session file) and
    database file."""

    def __init__(self, root: pathlib.Path):
        self.root = root
        self.home = root / "home"
        self.xdg = root / "xdg"
        self.state = root / "state"
        self.home.mkdir()
        self.xdg.mkdir()
        self.state.mkdir(mode=0o700)
        self.db = root / "x" / "accounts.sqlite3"

    @property
    def session_file(self) -> pathlib.Path:
        """Where this device's client keeps its session token."""
        return self.state / "accounts" / "session"

    @property
    def key_file(self) -> pathlib.Path:
        """The key the TOTP secrets are sealed under, beside the database."""
        return self.db.with_name(self.db.name + ".key")

    def env(self, fast=True, database=True, **extra) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ACCOUNTS_")}
        env.update(
            HOME=str(self.home), XDG_DATA_HOME=str(self.xdg), XDG_STATE_HOME=str(self.state),
            TZ="UTC", LC_ALL="C.UTF-8",
            TERM="dumb")
        if database:
            env["ACCOUNTS_DATABASE"] = str(self.db)
        if fast:
            env["ACCOUNTS_PBKDF2_ITERATIONS"] = FAST_ITERATIONS
        for key, value in extra.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        return env

    def run(self, *args, input=None, fast=True, env=None, cwd=None, umask=None,
            timeout=60) -> Result:
        """Runs the binary with `input` on a pipe (no terminal); stdin is /dev/null if None."""
        preexec = (lambda: os.umask(umask)) if umask is not None else None
        proc = subprocess.run(
            [BIN, *args], input=input, stdin=subprocess.DEVNULL if input is None else None,
            capture_output=True, text=True, env=env if env is not None else self.env(fast=fast),
            cwd=cwd or str(self.root), timeout=timeout, preexec_fn=preexec)
        return Result(proc.returncode, proc.stdout, proc.stderr)

    def spawn(self, *args, fast=True, env=None, timeout=10, preexec_fn=None):
        """Runs the binary on a pseudo-terminal; its whole output is kept in logfile_read.
        `preexec_fn` runs in the child before exec (e.g. to set signal dispositions)."""
        child = pexpect.spawn(
            BIN, list(args), env=env if env is not None else self.env(fast=fast),
            cwd=str(self.root), dimensions=(24, 200), encoding="utf-8", codec_errors="replace",
            timeout=timeout, preexec_fn=preexec_fn)
        child.logfile_read = io.StringIO()
        return child

    def shell(self, fast=True):
        """An interactive bash on a pseudo-terminal, prompt `PROMPT$ `."""
        env = self.env(fast=fast, PS1="PROMPT$ ", PROMPT_COMMAND=None)
        child = pexpect.spawn(
            "bash", ["--norc", "--noprofile"], env=env, cwd=str(self.root),
            dimensions=(24, 200), encoding="utf-8", codec_errors="replace", timeout=10)
        child.logfile_read = io.StringIO()
        child.expect_exact("PROMPT$ ")
        return child

    # Shortcuts over `run`.

    def activate(self, username=USERNAME, full_name=FULL_NAME, email=EMAIL, password=PASSWORD,
                 fast=True):
        result = self.run("activate", input=form(username, full_name, email, password),
                          fast=fast)
        assert (result.code, result.stdout, result.stderr) == (
            0, f"Device activated for {username}.\n", ""), result
        return result

    def login(self, username=USERNAME, password=PASSWORD, fast=True, env=None) -> Result:
        return self.run("login", input=f"{username}\n{password}\n", fast=fast, env=env)

    def add_user(self, username=BOB, full_name=BOB_FULL_NAME, email=BOB_EMAIL,
                 password=BOB_PASSWORD):
        """`accounts user add` with every field a flag and the password on stdin."""
        result = self.run("user", "add", "--username", username, "--full-name", full_name,
                          "--email", email, "--password-stdin", input=password + "\n")
        assert (result.code, result.stdout, result.stderr) == (
            0, f"Account added: {username}.\n", ""), result
        return result

    def accounts(self) -> list:
        """`accounts user list --json`, one dict per account."""
        result = self.run("user", "list", "--json")
        assert (result.code, result.stderr) == (0, ""), result
        return [json.loads(line) for line in result.out_lines]

    def account(self, name) -> dict:
        """`accounts user show NAME --json`."""
        result = self.run("user", "show", name, "--json")
        assert (result.code, result.stderr) == (0, ""), result
        return json.loads(result.stdout)

    def status(self) -> dict:
        result = self.run("status", "--json")
        assert result.code == 0, result
        return json.loads(result.stdout)

    def events(self) -> list:
        result = self.run("log", "--json")
        assert result.code == 0, result
        return [json.loads(line) for line in result.out_lines]

    def stored_hash(self, username_key: str = USERNAME) -> str:
        """The password hash stored for the account whose user name key is `username_key`."""
        row = self.query("SELECT password_hash FROM account WHERE username_key = ?", username_key)
        assert len(row) == 1, f"no account with the key {username_key!r}"
        return row[0][0]

    def set_stored_hash(self, value: str, username_key: str = USERNAME):
        """Overwrites the stored hash of one account (a tampered or older database)."""
        self.execute("UPDATE account SET password_hash = ? WHERE username_key = ?", value,
                     username_key)

    def query(self, sql: str, *args) -> list:
        """The rows of a read from the database file, with a connection of its own."""
        db = sqlite3.connect(self.db)
        try:
            return db.execute(sql, args).fetchall()
        finally:
            db.close()  # `with` alone would leave it open, and keep the -wal from checkpointing

    def execute(self, sql: str, *args):
        """One write to the database file, committed."""
        db = sqlite3.connect(self.db)
        try:
            changed = db.execute(sql, args).rowcount
            db.commit()
        finally:
            db.close()
        assert changed >= 1, f"{sql!r} changed no row"

    def assert_nothing_stored(self):
        """The device is still Public and no activation was logged."""
        assert self.status()["state"] == "Public"
        assert "activation" not in [e["event"] for e in self.events()]


@pytest.fixture
def device(tmp_path) -> Device:
    return Device(tmp_path)


@pytest.fixture
def activated(device) -> Device:
    device.activate()
    return device


@pytest.fixture(scope="session")
def django_hashers():
    """Django's password hashers, with a minimal settings module."""
    import django
    from django.conf import settings

    if not settings.configured:
        settings.configure(
            PASSWORD_HASHERS=["django.contrib.auth.hashers.PBKDF2PasswordHasher"],
            INSTALLED_APPS=[], USE_TZ=True)
        django.setup()
    from django.contrib.auth import hashers

    return hashers


@pytest.fixture(scope="session", autouse=True)
def binary_exists():
    assert os.access(BIN, os.X_OK), f"accounts binary not found at {BIN}; set ACCOUNTS_BIN"
