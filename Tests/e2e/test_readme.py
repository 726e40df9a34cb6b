"""README.md and docs/ as a reader meets them: every relative link leads to a file and a heading
that exist, and the `sh` blocks of README's "Log people in to this device" run as written, typed
into a root shell at a pseudo-terminal one command at a time, up to an SSH login with a password
and an authenticator code.

The blocks name a trial's places, which the test makes its own so that it disturbs nothing else
running: the prefix and PAM service `accounts-try` become `accounts-try-<random>` (the prefix in
/opt, a fresh folder root owns all the way up, as sshd requires of an AuthorizedKeysCommand),
port 2222 a free port, and `bob` a name no other test uses. Root's store, which the README's
commands use and its PAM lines name (/var/lib/accounts/accounts.sqlite3), is a file in that
prefix instead: ACCOUNTS_DATABASE points the shell's commands at it, and the PAM lines name it.
The user records go to /etc/userdb as the README says (no other test writes there). Everything
made is removed on every exit: the sshd, the records (`userdb disable`), the PAM service, the
prefix with the store in it, and the home folder the login made."""

import contextlib
import os
import pathlib
import re
import secrets
import shlex
import shutil
import sqlite3
import subprocess

import pexpect
import pytest
from totp import code_now

from constants import BOB_PASSWORD, FULL_NAME, PASSWORD
from docblocks import commands, fenced
from secondfactor import wrong_code
from sshd import PRIVSEP_FOLDER, REFUSED, REFUSED_CODE, Sshd, finish, free_port, spawn_ssh

# README and docs are the same whichever store the suite names: checked once, in the sqlite run.
pytestmark = pytest.mark.front_end

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SECTION = "## Log people in to this device"
BACKGROUND = "<!-- A second terminal"
LINK = re.compile(r"\[(?:[^\]`]|`[^`]*`)*\]\(([^)\s]+)\)")
PROMPT = re.compile(r"__rc=(\d+)__# ")
KEY = re.compile(r"Key: ([A-Z2-7]{32})")


# Links.

def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: its text without markup, lower case, every character but
    letters, digits, spaces, `-` and `_` dropped, spaces made `-`."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"[^\w\- ]", "", text.replace("`", "").strip().lower())
    return text.replace(" ", "-")


def outside_fences(path: pathlib.Path) -> list:
    lines, fenced = [], False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def anchors(path: pathlib.Path) -> set:
    """A file's heading anchors, a repeated one numbered as GitHub numbers it (`-1`, `-2`)."""
    found = set()
    for line in outside_fences(path):
        match = re.match(r"#{1,6} (.*)", line)
        if match:
            name = base = anchor(match.group(1))
            number = 0
            while name in found:
                number += 1
                name = f"{base}-{number}"
            found.add(name)
    return found


def test_every_relative_link_leads_to_a_file_and_a_heading():
    """Each relative link of README.md and docs/*.md names a file that exists and, after `#`,
    a heading of that file; every page of docs/ is linked from README."""
    broken, linked = [], set()
    for document in DOCUMENTS:
        for line in outside_fences(document):
            for target in LINK.findall(line):
                if re.match(r"[a-z]+:", target):
                    continue
                path, _, fragment = target.partition("#")
                file = (document.parent / path).resolve() if path else document
                if document.name == "README.md":
                    linked.add(file)
                if not file.exists():
                    broken.append(f"{document.name}: {target}: no file {file}")
                elif fragment and fragment not in anchors(file):
                    broken.append(f"{document.name}: {target}: no heading #{fragment}")
    assert broken == []
    assert [d.name for d in DOCUMENTS[1:] if d not in linked] == []


def test_anchor_follows_github():
    """The anchor rule the link test uses, on headings of these documents."""
    assert anchor("PAM through `pam_exec`: `accounts pam-auth`") == \
        "pam-through-pam_exec-accounts-pam-auth"
    assert anchor("Log people in to this device") == "log-people-in-to-this-device"
    assert anchor("Linux users: user records for NSS (`accounts userdb`)") == \
        "linux-users-user-records-for-nss-accounts-userdb"


# The blocks of "Log people in to this device".

def blocks() -> list:
    """(fence language, whether a background comment precedes it, body) of each fenced block of
    the section, in order."""
    text = (ROOT / "README.md").read_text()
    start = text.index(f"\n{SECTION}\n")
    end = text.find("\n## ", start + 1)
    section = text[start:end if end >= 0 else len(text)].splitlines()
    return [(language, before.startswith(BACKGROUND), body)
            for language, before, body in fenced(section)]


class Trial:
    """The test's names for the README's trial, and the answers its prompts get."""

    def __init__(self):
        self.name = f"accounts-try-{secrets.token_hex(4)}"
        self.prefix = pathlib.Path("/opt") / self.name
        self.store = self.prefix / "accounts.sqlite3"
        self.user = f"bob{secrets.token_hex(4)}"
        self.owner = f"own{secrets.token_hex(4)}"
        self.port = free_port()
        self.key = None

    def own(self, text: str) -> str:
        text = text.replace("accounts-try", self.name)
        text = text.replace("/var/lib/accounts/accounts.sqlite3", str(self.store))
        text = re.sub(r"\b2222\b", str(self.port), text)
        return re.sub(r"\bbob\b", self.user, text)

    def answers(self, command: str) -> list:
        """The (prompt, answer) pairs a person types for `command`; an answer of None is the
        code of the key the command printed."""
        if command.startswith("accounts activate"):
            return [("User name: ", self.owner), ("Full name: ", FULL_NAME),
                    ("E-mail address: ", "alice@example.org"), ("Password: ", PASSWORD),
                    ("Password again: ", PASSWORD)]
        if command.startswith("accounts user add"):
            return [("Password: ", BOB_PASSWORD), ("Password again: ", BOB_PASSWORD)]
        if command.startswith("accounts 2fa enable"):
            return [("Password: ", BOB_PASSWORD), ("Verification code: ", None)]
        return []


def typed(shell: pexpect.spawn, trial: Trial, command: str) -> str:
    """`command` typed into the shell with its answers; what it printed (exit 0 asserted)."""
    shell.sendline(command)
    printed = ""
    for question, answer in trial.answers(command):
        shell.expect_exact(question)
        printed += shell.before + shell.after
        if answer is None:
            trial.key = KEY.search(shell.before).group(1)
            answer = code_now(trial.key)
        shell.sendline(answer)
    shell.expect(PROMPT)
    printed += shell.before
    assert shell.match.group(1) == "0", f"{command!r} failed:\n{printed}"
    return printed


def root_shell(trial: Trial) -> pexpect.spawn:
    env = {**os.environ, "ACCOUNTS_DATABASE": str(trial.store), "TERM": "dumb",
           "LC_ALL": "C.UTF-8", "HOME": "/root"}
    shell = pexpect.spawn("bash", ["--noprofile", "--norc", "--noediting"], cwd=str(ROOT),
                          env=env, encoding="utf-8", timeout=300, dimensions=(60, 200))
    shell.sendline("PS1='__rc=$?__# '; PS2=''")
    shell.expect(PROMPT)
    return shell


def login(server: Sshd, trial: Trial, *answers: str):
    child = spawn_ssh(server, trial.user, "id -un; stat -c '%a %U' ~")
    for question, answer in zip(("Password", "Verification code"), answers):
        child.expect_exact(f"({trial.user}@127.0.0.1) {question}: ")
        child.sendline(answer)
    return finish(child)


def fresh_code(trial: Trial) -> str:
    """A code the store takes: the step `2fa enable` accepted moved ten steps back (as if it was
    five minutes ago), so that the login needs no wait for the next step."""
    with contextlib.closing(sqlite3.connect(trial.store)) as db, db:
        moved = db.execute("UPDATE second_factor SET last_step = last_step - 10").rowcount
    assert moved == 1
    return code_now(trial.key)


@contextlib.contextmanager
def cleaned_up(trial: Trial, server: Sshd):
    try:
        yield
    finally:
        server.stop()
        program = trial.prefix / "bin" / "accounts"
        if trial.store.exists() and program.exists():
            disabled = subprocess.run([str(program), "userdb", "disable"], capture_output=True,
                                      text=True, env={**os.environ,
                                                      "ACCOUNTS_DATABASE": str(trial.store)})
            assert disabled.returncode in (0, 1), disabled.stderr
        pathlib.Path(f"/etc/pam.d/{trial.name}").unlink(missing_ok=True)
        shutil.rmtree(trial.prefix, ignore_errors=True)
        shutil.rmtree(f"/home/{trial.user}", ignore_errors=True)


def test_log_people_in_as_readme_says(tmp_path):
    """Install, activate, add a person, their second factor, user records, the PAM service and
    a second sshd, each as README gives it (the activation asking what its transcript shows);
    then that person logs in over SSH with the password and a code, into the home folder the
    login made (mode 0700), and a wrong code gets only sshd's refusal, its reason in the log."""
    trial = Trial()
    server = Sshd(tmp_path, trial.name)
    server.port = trial.port
    public = pathlib.Path("/etc/ssh/ssh_host_ed25519_key.pub").read_text().split()
    server.known_hosts.write_text(f"[127.0.0.1]:{trial.port} {public[0]} {public[1]}\n")
    os.makedirs(PRIVSEP_FOLDER, mode=0o755, exist_ok=True)
    shell = root_shell(trial)
    printed = {}
    with cleaned_up(trial, server), contextlib.closing(shell):
        for language, background, lines in blocks():
            if language != "sh":
                continue
            for command in commands([trial.own(line) for line in lines]):
                if background:
                    server.run(shlex.split(command))
                    server.wait_for_log(f"Server listening on 0.0.0.0 port {trial.port}.")
                else:
                    printed[command.split("#")[0].strip()] = typed(shell, trial, command)
        activation = next(lines for language, _, lines in blocks()
                          if language == "text" and lines[0].startswith("User name: "))
        shown = printed["accounts activate"].replace("\r", "")
        assert re.findall(r"^([A-Z][\w -]*:) ", shown, re.M) == \
            [line.split(":")[0] + ":" for line in activation if ":" in line]
        assert activation[-1].replace("alice", trial.owner) in shown
        assert "SSH keys command: ok" in printed["accounts userdb status"]
        assert f"{trial.user}:x:" in printed[f"getent passwd {trial.user}"]

        entered = login(server, trial, BOB_PASSWORD, fresh_code(trial))
        assert entered.code == 0, (entered, server.log())
        assert entered.stdout.endswith(f"{trial.user}\r\n700 {trial.user}\r\n")

        refused = login(server, trial, BOB_PASSWORD, wrong_code(trial.key))
        assert refused.code == REFUSED_CODE
        assert refused.stdout == "".join(
            f"\r({trial.user}@127.0.0.1) {question}: \r\n"
            for question in ("Password", "Verification code")) + \
            REFUSED.format(trial.user).replace("\n", "\r\r\n")
        log = subprocess.run([str(trial.prefix / "bin" / "accounts"), "log", "--user",
                              trial.user, "--event", "login_failure"], capture_output=True,
                             text=True, env={**os.environ, "ACCOUNTS_DATABASE": str(trial.store)})
        assert f"(wrong verification code; pam service={trial.name} rhost=127.0.0.1 tty=ssh)" \
            in log.stdout, log
