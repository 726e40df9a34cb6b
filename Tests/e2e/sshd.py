"""Debian's real OpenSSH server for the end-to-end tests, and Debian's ssh client run against it.

sshd names its PAM service after the name it was started as (Debian's build leaves
SSHD_PAM_SERVICE at `__progname`), so each server runs as a link named after a scratch service of
its own (pammodule.scratch_service) and /etc/pam.d/sshd is never touched. Its folder is made under
/run, owned by root and closed to writers other than root, because sshd runs an
AuthorizedKeysCommand only from such a path; it holds the server's config, ed25519 host key, pid
file and link, a copy of the program that `nobody` (the AuthorizedKeysCommandUser) can run, and
the client's known_hosts (the host key written in it beforehand, so the client checks it strictly
and says nothing about adding it).

API:

- `running_sshd(service, userdb=None) -> context manager yielding an Sshd`: sshd on 127.0.0.1 at a
  free high port, in the foreground, logging to a pipe this module reads; it returns once sshd
  logged that it listens, and stops it and removes its folder on every exit. `userdb` (a folder
  of user records) turns on the AuthorizedKeysCommand `accounts userdb ssh-authorized-keys`.
  PubkeyAuthentication and KbdInteractiveAuthentication (through PAM) are on, either one being
  enough (AuthenticationMethods); PasswordAuthentication is off; AuthorizedKeysFile is none.
- `Sshd.port`, `Sshd.service`, `Sshd.log() -> str` (what it logged so far), and
  `Sshd.wait_for_log(text, timeout=30) -> str` (the first line holding `text`, once logged).
  `Sshd(folder, service).run(command)` runs an sshd started by a command of one's own (in the
  foreground, -D -e) as one (its port and the folder of its known_hosts set by the caller);
  `stop()` stops it.
- `client_key(folder) -> pathlib.Path`: a new ed25519 key pair without passphrase in `folder`
  (the public half at the same path + `.pub`).
- `authorized_key(device, name, folder) -> pathlib.Path`: a client key made in `folder` whose
  public half `accounts user ssh-key add NAME FILE` gave the account.
- `ssh_with_key(sshd, name, key, command) -> Result`: `ssh NAME@127.0.0.1 COMMAND` with that key
  only, BatchMode (nothing asked), stdin /dev/null.
- `spawn_ssh(sshd, name, command) -> pexpect.spawn`: `ssh NAME@127.0.0.1 COMMAND` on a
  pseudo-terminal with keyboard-interactive only and one attempt, for the test to answer its
  questions; `finish(child) -> Result` waits for its end (stdout is the transcript, stderr empty).
- `typed_in(sshd, name, command, *answers) -> Result`: `spawn_ssh`, each (question, answer) of
  `answers` waited for (`prompt(name, question)`, the question as ssh shows it) and typed, then
  `finish`; `refused_transcript(name, *questions) -> str`: the transcript of those questions
  answered and then the refusal.
- `REFUSED`: what the client prints on stderr (a pipe) when the server refuses every method
  (`.format(name)`), and `REFUSED_CODE` (255) its exit code.
"""

from __future__ import annotations

import contextlib
import io
import os
import pathlib
import shutil
import socket
import subprocess
import tempfile
import threading
import time

import pexpect

from constants import BIN
from device import Result

SSHD = "/usr/sbin/sshd"
# The folder Debian's sshd chroots its unprivileged pre-authentication child into.
PRIVSEP_FOLDER = "/run/sshd"
HOST = "127.0.0.1"
REFUSED = "{}@127.0.0.1: Permission denied (publickey,keyboard-interactive).\n"
REFUSED_CODE = 255


class Sshd:
    """One running sshd: its folder, port, PAM service and log."""

    def __init__(self, folder: pathlib.Path, service: str):
        self.folder = folder
        self.service = service
        self.port = 0
        self.process = None
        self._lines = []
        self._changed = threading.Condition()
        self._reader = None

    @property
    def known_hosts(self) -> pathlib.Path:
        return self.folder / "known_hosts"

    def log(self) -> str:
        with self._changed:
            return "".join(line for line in self._lines if line is not None)

    def wait_for_log(self, text: str, timeout=30) -> str:
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = [line for line in self._lines if line is not None and text in line]
                if found:
                    return found[0]
                left = deadline - time.monotonic()
                assert left > 0, f"sshd never logged {text!r}; its log:\n{self.log()}"
                self._changed.wait(left)

    def _read(self, stream):
        for line in stream:
            with self._changed:
                self._lines.append(line)
                self._changed.notify_all()
        with self._changed:
            self._lines.append(None)
            self._changed.notify_all()

    def _listening(self, timeout=30) -> bool:
        """True once sshd says it listens; False when it ended first (its log says why)."""
        listening = f"Server listening on {HOST} port {self.port}."
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                if any(line is not None and listening in line for line in self._lines):
                    return True
                if None in self._lines:
                    return False
                left = deadline - time.monotonic()
                assert left > 0, f"sshd did not listen within {timeout} s:\n{self.log()}"
                self._changed.wait(left)

    def start(self, config: list):
        """sshd with `config` (lines; its port added), at a free port: a port taken between
        choosing it and binding it is chosen again."""
        for _ in range(5):
            self.port = free_port()
            path = self.folder / "sshd_config"
            path.write_text("".join(line + "\n" for line in [f"Port {self.port}", *config]))
            self._lines = []
            link = self.folder / self.service
            self.process = subprocess.Popen(
                [str(link), "-D", "-e", "-f", str(path)], stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd="/")
            self._reader = threading.Thread(target=self._read, args=(self.process.stderr,),
                                            daemon=True)
            self._reader.start()
            if self._listening():
                return
            self.process.wait(timeout=30)
            self._reader.join(timeout=30)
            assert "Address already in use" in self.log(), \
                f"sshd ended with {self.process.returncode}:\n{self.log()}"
        raise AssertionError(f"no free port for sshd after 5 tries:\n{self.log()}")

    def run(self, command: list):
        """`command`, an sshd in the foreground logging to standard error (-D -e, as a person
        starts one), as this server; `wait_for_log` then tells when it listens."""
        self._lines = []
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        text=True, cwd="/")
        self._reader = threading.Thread(target=self._read, args=(self.process.stderr,),
                                        daemon=True)
        self._reader.start()

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)
        if self._reader is not None:
            self._reader.join(timeout=30)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def client_key(folder) -> pathlib.Path:
    path = pathlib.Path(folder) / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "accounts-test",
                    "-f", str(path)], check=True, stdin=subprocess.DEVNULL)
    return path


def authorized_key(device, name: str, folder) -> pathlib.Path:
    key = client_key(folder)
    added = device.run("user", "ssh-key", "add", name, f"{key}.pub")
    assert added.code == 0, added
    return key


def _server_folder(service: str) -> pathlib.Path:
    """A folder for one server under /run, root's alone to write, that `nobody` may enter (to
    run the program copied into it), with the host key and the client's known_hosts."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="accounts-sshd-", dir="/run"))
    folder.chmod(0o755)
    os.symlink(SSHD, folder / service)
    host_key = folder / "ssh_host_ed25519_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(host_key)],
                   check=True, stdin=subprocess.DEVNULL)
    program = folder / "accounts"
    shutil.copy2(BIN, program)
    program.chmod(0o755)
    return folder


def _config(folder: pathlib.Path, userdb) -> list:
    config = [
        f"ListenAddress {HOST}",
        f"HostKey {folder / 'ssh_host_ed25519_key'}",
        f"PidFile {folder / 'sshd.pid'}",
        "UsePAM yes",
        "PubkeyAuthentication yes",
        "KbdInteractiveAuthentication yes",
        "PasswordAuthentication no",
        "AuthenticationMethods publickey keyboard-interactive",
        "AuthorizedKeysFile none",
        "StrictModes yes",
        "PermitRootLogin no",
        "UseDNS no",
        "PrintMotd no",
        "PrintLastLog no",
        "LogLevel VERBOSE",
    ]
    if userdb is not None:
        config += [
            f"AuthorizedKeysCommand {folder / 'accounts'} userdb ssh-authorized-keys "
            f"--folder {userdb} %u %U",
            "AuthorizedKeysCommandUser nobody",
        ]
    return config


@contextlib.contextmanager
def running_sshd(service: str, userdb=None):
    # Debian's sshd.service makes this folder (RuntimeDirectory); it is left for the next server.
    os.makedirs(PRIVSEP_FOLDER, mode=0o755, exist_ok=True)
    server = Sshd(_server_folder(service), service)
    try:
        public = (server.folder / "ssh_host_ed25519_key.pub").read_text().split()
        server.start(_config(server.folder, userdb))
        server.known_hosts.write_text(f"[{HOST}]:{server.port} {public[0]} {public[1]}\n")
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.folder, ignore_errors=True)


def _client(sshd: Sshd, *options: str) -> list:
    options = [
        "-F", "/dev/null", "-p", str(sshd.port),
        "-o", f"UserKnownHostsFile={sshd.known_hosts}", "-o", "GlobalKnownHostsFile=/dev/null",
        "-o", "StrictHostKeyChecking=yes", "-o", "ConnectTimeout=10", "-o", "LogLevel=ERROR",
        "-o", "IdentityAgent=none", "-o", "IdentitiesOnly=yes", *options]
    return ["ssh", *options]


def ssh_with_key(sshd: Sshd, name: str, key, command: str) -> Result:
    arguments = _client(sshd, "-o", "PreferredAuthentications=publickey", "-o", "BatchMode=yes",
                        "-i", str(key), f"{name}@{HOST}", command)
    done = subprocess.run(arguments, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=60, env={"PATH": os.environ["PATH"], "LC_ALL": "C.UTF-8"})
    return Result(done.returncode, done.stdout, done.stderr)


def spawn_ssh(sshd: Sshd, name: str, command: str) -> pexpect.spawn:
    arguments = _client(sshd, "-o", "PreferredAuthentications=keyboard-interactive",
                        "-o", "PubkeyAuthentication=no", "-o", "NumberOfPasswordPrompts=1",
                        f"{name}@{HOST}", command)
    child = pexpect.spawn(arguments[0], arguments[1:], encoding="utf-8", timeout=60,
                          env={"PATH": os.environ["PATH"], "TERM": "dumb", "LC_ALL": "C.UTF-8"},
                          dimensions=(24, 200), cwd="/")
    child.logfile_read = io.StringIO()
    return child


def finish(child: pexpect.spawn) -> Result:
    child.expect(pexpect.EOF)
    child.close()
    code = child.exitstatus if child.exitstatus is not None else 128 + child.signalstatus
    return Result(code, child.logfile_read.getvalue(), "")


def prompt(name: str, question: str) -> str:
    """A question as ssh shows it: at the start of its line, after who is asked."""
    return f"\r({name}@{HOST}) {question}: "


def typed_in(sshd: Sshd, name: str, command: str, *answers) -> Result:
    child = spawn_ssh(sshd, name, command)
    for question, answer in answers:
        child.expect_exact(prompt(name, question))
        child.sendline(answer)
    return finish(child)


def refused_transcript(name: str, *questions: str) -> str:
    """The questions answered, then the refusal: at a terminal ssh ends it with \\r\\n, which
    the terminal makes \\r\\r\\n."""
    return "".join(prompt(name, q) + "\r\n" for q in questions) + \
        REFUSED.format(name).replace("\n", "\r\r\n")
