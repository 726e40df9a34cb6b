"""What the tests of the PAM module pam_accounts.so share: the module built for a given helper,
a scratch service in /etc/pam.d, pamtester driven through a pseudo-terminal, fake helpers that
speak the module's line protocol, and what /proc says about pamtester's fds and children.

API:

- `build_module(helper, debug=False) -> pathlib.Path`: `Scripts/build-pam --helper HELPER
  [--debug]` into a temporary folder; built once per (helper, debug) per session. `debug` adds
  -g (named frames for Valgrind).
- `module_line(group, module, *options, control="required", database=DATABASE) -> str`: one
  service line, `GROUP CONTROL /abs/pam_accounts.so database=DATABASE OPTIONS...`.
- `scratch_service(lines) -> context manager yielding the service name`: writes
  /etc/pam.d/accounts-test-<random> with `lines` (strings, one per line) and removes it.
- `replaced_service(name, lines) -> context manager`: /etc/pam.d/NAME (a service of the system's,
  such as su-l) replaced by `lines` and put back exactly afterwards, one test at a time across the
  pytest-xdist workers (an exclusive lock on /run/lock/accounts-test-NAME.lock while it is held).
- `spawn_pamtester(service, user=USER, operations=("authenticate",), items=None, prefix=(),
  preexec_fn=None, timeout=60, environment=None, env=None) -> pexpect.spawn`: `pamtester -v
  [-I key=value...] [-E NAME=value...] SERVICE USER OPERATIONS...` on a pseudo-terminal:
  `items` are PAM items (rhost, tty...), `environment` PAM's environment list (pam_putenv),
  `env` extra variables of pamtester's own process (beside PATH and TERM); `prefix`, e.g. a
  valgrind command, goes before it.
- `finish(child) -> PamRun`: waits for pamtester to end; `PamRun(code, output)`, output being
  everything it printed (the prompts included).
- `pamtester(service, user=USER, operations=("authenticate",), answers=(), items=None,
  prefix=(), timeout=60) -> PamRun`: spawn, then for each `(prompt, answer)` in `answers`
  wait for the prompt and type the answer and Enter, then finish.
- `succeeded(run, operation="authenticate") -> bool`: pamtester's own verdict line.
- `failure_line(code) -> str`: what pamtester prints when an operation fails with PAM code
  `code` (`pamtester: ` + `pam_strerror(code)`, libpam's sentence for the code).
- `PAM_CODES`: the PAM codes by name (Linux-PAM's _pam_types.h), e.g. `PAM_CODES["PAM_AUTH_ERR"]`.
- `fake_helper(path, body) -> pathlib.Path`: writes an executable Python helper at `path`
  (shebang: this Python's absolute path; the module gives the helper no PATH) whose `body`
  (Python source) may use `send(line)`, `receive() -> str | None` (one reply, None at the end),
  `ask(line) -> str | None`, `record(path, value)` (JSON, written whole via a rename) and
  `ARGV` (the arguments after the script's name: `pam-helper STAGE --database ...`).
- `wait_for_file(path, timeout=30) -> object`: the JSON a helper recorded there, once written.
- `captured_syslog() -> context manager yielding a SyslogCapture`: its `prefix` (a command
  prefix for spawn_pamtester/pamtester: `unshare -m` and a private /dev whose /dev/log is a
  socket of the test's) and `messages() -> list[str]`, what was logged so far (the
  `pam_accounts(SERVICE:GROUP): ...` part of each line).
- `wait_for_exited_helper(pid, timeout=30)`: returns once the process's only child is a zombie
  (the helper has exited and the module has not reaped it yet).
- `open_fds(pid) -> dict[int, str]`: a process's fds and what each points at.
- `children(pid) -> list[tuple[int, str]]`: a process's children, (pid, state letter).
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import io
import json
import os
import pathlib
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

import pexpect
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
USER = "alice"
DATABASE = "/var/lib/accounts-test/accounts.sqlite3"

PAM_CODES = {
    "PAM_SUCCESS": 0, "PAM_SERVICE_ERR": 3, "PAM_SYSTEM_ERR": 4, "PAM_PERM_DENIED": 6,
    "PAM_AUTH_ERR": 7, "PAM_CRED_INSUFFICIENT": 8, "PAM_AUTHINFO_UNAVAIL": 9,
    "PAM_USER_UNKNOWN": 10, "PAM_MAXTRIES": 11, "PAM_NEW_AUTHTOK_REQD": 12,
    "PAM_ACCT_EXPIRED": 13, "PAM_AUTHTOK_ERR": 20, "PAM_AUTHTOK_RECOVERY_ERR": 21,
}

_BUILT: dict = {}
_BUILD_DIR: list = []


def build_module(helper, debug: bool = False) -> pathlib.Path:
    """pam_accounts.so for `helper` (an absolute path), built once per session."""
    key = (str(helper), debug)
    if key not in _BUILT:
        if not _BUILD_DIR:
            _BUILD_DIR.append(pathlib.Path(tempfile.mkdtemp(prefix="pam-module-")))
        output = _BUILD_DIR[0] / f"{len(_BUILT)}" / "pam_accounts.so"
        command = [str(ROOT / "Scripts" / "build-pam"), "--helper", str(helper),
                   "--output", str(output)] + (["--debug"] if debug else [])
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        output.parent.chmod(0o755)
        _BUILT[key] = output
    return _BUILT[key]


def module_line(group: str, module, *options: str, control: str = "required",
                database: str = DATABASE) -> str:
    return " ".join([group, control, str(module), f"database={database}", *options])


@contextlib.contextmanager
def scratch_service(lines):
    """A scratch PAM service with `lines`, removed afterwards. Needs root and pamtester."""
    if os.geteuid() != 0:
        pytest.fail("the PAM module tests must run as root: they write a service file into "
                    f"/etc/pam.d (running as uid {os.geteuid()})")
    if shutil.which("pamtester") is None:
        pytest.fail("pamtester is not installed: run Scripts/setup --test")
    name = f"accounts-test-{secrets.token_hex(6)}"
    path = f"/etc/pam.d/{name}"
    try:
        with open(path, "x") as f:
            f.write("".join(line + "\n" for line in lines))
        yield name
    finally:
        if os.path.exists(path):
            os.unlink(path)


@contextlib.contextmanager
def replaced_service(name: str, lines):
    """/etc/pam.d/NAME holds `lines` for the duration, for one test at a time; then the file is
    as it was (its bytes, mode and times)."""
    path = f"/etc/pam.d/{name}"
    saved = f"{path}.accounts-test"
    with open(f"/run/lock/accounts-test-{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        shutil.copy2(path, saved)
        try:
            with open(path, "w") as f:
                f.write("".join(line + "\n" for line in lines))
            yield
        finally:
            os.replace(saved, path)


@dataclass
class PamRun:
    code: int
    output: str


def spawn_pamtester(service, user=USER, operations=("authenticate",), items=None, prefix=(),
                    preexec_fn=None, timeout=60, environment=None, env=None) -> pexpect.spawn:
    arguments = [arg for key, value in (items or {}).items() for arg in ("-I", f"{key}={value}")]
    arguments += [arg for key, value in (environment or {}).items()
                  for arg in ("-E", f"{key}={value}")]
    command = [*prefix, "pamtester", "-v", *arguments, service, user, *operations]
    child = pexpect.spawn(command[0], command[1:], encoding="utf-8", timeout=timeout,
                          env={"PATH": os.environ["PATH"], "TERM": "dumb", **(env or {})},
                          preexec_fn=preexec_fn, dimensions=(24, 200))
    child.logfile_read = io.StringIO()
    return child


def finish(child) -> PamRun:
    child.expect(pexpect.EOF)
    child.close()
    code = child.exitstatus if child.exitstatus is not None else -child.signalstatus
    return PamRun(code, child.logfile_read.getvalue().replace("\r\n", "\n"))


def pamtester(service, user=USER, operations=("authenticate",), answers=(), items=None,
              prefix=(), timeout=60) -> PamRun:
    child = spawn_pamtester(service, user, operations, items, prefix, timeout=timeout)
    for prompt, answer in answers:
        child.expect_exact(prompt)
        child.sendline(answer)
    return finish(child)


def succeeded(run: PamRun, operation="authenticate") -> bool:
    words = {"authenticate": "successfully authenticated",
             "acct_mgmt": "account management done.",
             "chauthtok": "authentication token altered successfully.",
             "open_session": "successfully opened a session",
             "close_session": "session has successfully been closed."}
    return run.code == 0 and f"pamtester: {words[operation.split('(')[0]]}" in run.output


def pam_strerror(code: int) -> str:
    libpam = ctypes.CDLL("libpam.so.0")
    libpam.pam_strerror.restype = ctypes.c_char_p
    libpam.pam_strerror.argtypes = [ctypes.c_void_p, ctypes.c_int]
    return libpam.pam_strerror(None, code).decode()


def failure_line(code: int) -> str:
    return "pamtester: " + pam_strerror(code)


_PRELUDE = '''import json, os, sys
ARGV = sys.argv[1:]
_pending = b""
def send(line):
    data = line if isinstance(line, bytes) else line.encode() + b"\\n"
    os.write(1, data)
def receive():
    global _pending
    while b"\\n" not in _pending:
        chunk = os.read(0, 65536)
        if not chunk:
            return None
        _pending += chunk
    line, _, _pending = _pending.partition(b"\\n")
    return line.decode()
def ask(line):
    send(line)
    return receive()
def record(path, value):
    with open(path + ".part", "w") as f:
        json.dump(value, f)
    os.rename(path + ".part", path)
'''


def fake_helper(path, body: str) -> pathlib.Path:
    """An executable Python helper at `path`: the prelude (send, receive, ask, record, ARGV),
    then `body`."""
    path = pathlib.Path(path)
    path.write_text(f"#!{os.path.realpath(sys.executable)}\n{_PRELUDE}{body}\n")
    path.chmod(0o755)
    return path


def wait_for_file(path, timeout=30):
    path = pathlib.Path(path)
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} was never written"
        time.sleep(0.02)
    return json.loads(path.read_text())


_PRIVATE_DEV = """set -e
folder="$1"; shift
mkdir "$folder/dev"
mount --bind /dev "$folder/dev"
mount -t tmpfs -o mode=0755 none /dev
for node in null zero urandom random tty ptmx; do
  touch "/dev/$node"; mount --bind "$folder/dev/$node" "/dev/$node"
done
mkdir /dev/pts; mount --bind "$folder/dev/pts" /dev/pts
touch /dev/log; mount --bind "$folder/log" /dev/log
exec "$@"
"""


class SyslogCapture:
    def __init__(self, folder: pathlib.Path):
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.socket.bind(str(folder / "log"))
        self.socket.setblocking(False)
        script = folder / "private-dev"
        script.write_text(_PRIVATE_DEV)
        self.prefix = ("unshare", "--mount", "--propagation", "private", "sh", str(script),
                       str(folder))
        self._seen = []

    def messages(self) -> list:
        with contextlib.suppress(BlockingIOError):
            while True:
                line = self.socket.recv(65536).decode("utf-8", "replace")
                self._seen.append(line[line.find("pam_accounts("):] if "pam_accounts(" in line
                                  else line)
        return list(self._seen)


@contextlib.contextmanager
def captured_syslog():
    """What PAM modules log, caught on a socket of the test's mounted over /dev/log in a mount
    namespace of pamtester's own (the host's /dev is left alone)."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="pam-syslog-"))
    capture = SyslogCapture(folder)
    try:
        yield capture
    finally:
        capture.socket.close()
        shutil.rmtree(folder, ignore_errors=True)


def open_fds(pid: int) -> dict:
    folder = f"/proc/{pid}/fd"
    fds = {}
    for name in os.listdir(folder):
        with contextlib.suppress(FileNotFoundError):
            fds[int(name)] = os.readlink(f"{folder}/{name}")
    return fds


def children(pid: int) -> list:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        with contextlib.suppress(OSError):
            stat = pathlib.Path(f"/proc/{name}/stat").read_text()
            state, parent = stat.rsplit(")", 1)[1].split()[:2]
            if int(parent) == pid:
                found.append((int(name), state))
    return found


def wait_for_exited_helper(pid: int, timeout=30):
    """Until `pid`'s only child is a zombie: the helper exited, the module has yet to reap it."""
    deadline = time.monotonic() + timeout
    while [state for _, state in children(pid)] != ["Z"]:
        assert time.monotonic() < deadline, f"the helper of {pid} never exited"
        time.sleep(0.01)
