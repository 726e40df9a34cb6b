"""Running the `accounts` binary under stress: a sandbox of temporary folders, commands run to
their end or started and left running (`Started`, output to files), a starting gate that
releases many processes at one moment, and the points a test waits for instead of a time: a
process blocked reading its standard input (`barrier`, `code_barrier`), sleeping in a
lock wait (`waiting_for_lock`), or a line it printed (`read_key`).

`BIN` is the binary under test, set by conftest.py (a private copy of ACCOUNTS_BIN).
"""

from __future__ import annotations

import fcntl
import os
import pathlib
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import termios
import threading
import time
from dataclasses import dataclass

import totp


BIN = ""  # set by conftest.py

PASSWORD = "correct horse battery staple"
WRONG_PASSWORD = "incorrect donkey battery staple"
FULL_NAME = "Alice Liddell"
WELCOME = f"Welcome back {FULL_NAME}!"
INVALID = "Invalid user name or password!"
TOO_MANY = "Too many failed attempts"
ALREADY = "already activated"
OTHER_PASSWORD = "violet walrus under tangerine skies"
RACERS = 12
RACE_ITERATIONS = 100_000  # long enough that the hashing of 12 racers overlaps
LOGIN_ITERATIONS = 100_000
KILL_ITERATIONS = 20_000  # short commands: kills land in SQLite as well as in PBKDF2
RAW_SQLITE = ("sqlite_busy", "database is locked", "sqlite_locked", "sqlite error")

KEY_LINE = re.compile(r"^Key: ([A-Z2-7]{32})$", re.M)
RECOVERY_LINE = re.compile(r"^  [A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}$", re.M)
AUTHORIZED = "You are successfully authorized."
REPLAYED = "That code was already used; wait for the next one."


class Sandbox:
    """A temporary HOME with its own databases; removed at the end."""

    def __init__(self) -> None:
        self.root = pathlib.Path(tempfile.mkdtemp(prefix="accounts-stress-"))
        self.home = self.root / "home"
        self.home.mkdir()
        self.counter = 0

    def db(self, name: str) -> str:
        return str(self.root / f"{name}.sqlite3")

    def scratch(self, stem: str) -> pathlib.Path:
        self.counter += 1
        return self.root / f"{stem}-{self.counter}"

    def env(self, iterations: int | None, state: pathlib.Path | None = None) -> dict[str, str]:
        """The environment of a process; `state` is its own XDG_STATE_HOME (where its session
        file lives), else one shared by the sandbox."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("ACCOUNTS_")}
        env.update(HOME=str(self.home), XDG_DATA_HOME=str(self.home / "xdg"), TZ="UTC",
                   XDG_STATE_HOME=str(state or self.home / "state"))
        if iterations is not None:
            env["ACCOUNTS_PBKDF2_ITERATIONS"] = str(iterations)
        return env

    def clean(self, text: str) -> str:
        """Output with the sandbox path replaced, so that word checks do not see it."""
        return text.replace(str(self.root), "<tmp>")

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def text(self) -> str:
        return self.stdout + self.stderr

    def brief(self) -> str:
        out = " / ".join(line for line in self.text.splitlines() if line.strip())
        return f"exit {self.code}: {out[:300]!r}"


def run(box: Sandbox, args: list[str], db: str, stdin: str | None = None,
        iterations: int | None = KILL_ITERATIONS, timeout: float = 60,
        state: pathlib.Path | None = None) -> Result:
    start = time.monotonic()
    proc = subprocess.run(
        [BIN, *args, "--database", db], input=stdin if stdin is not None else "",
        capture_output=True, text=True, env=box.env(iterations, state), timeout=timeout)
    return Result(proc.returncode, box.clean(proc.stdout), box.clean(proc.stderr),
                  time.monotonic() - start)


def activate(box: Sandbox, db: str, username: str = "alice", iterations: int = KILL_ITERATIONS,
             full_name: str = FULL_NAME) -> Result:
    return run(box, ["activate", "--username", username, "--full-name", full_name,
                     "--email", f"{username}@example.org", "--password-stdin"], db,
               stdin=PASSWORD + "\n", iterations=iterations)


def login(box: Sandbox, db: str, username: str = "alice", password: str = PASSWORD,
          iterations: int | None = KILL_ITERATIONS) -> Result:
    return run(box, ["login", "--username", username, "--password-stdin"], db,
               stdin=password + "\n", iterations=iterations)


def user_add_args(name: str, full_name: str | None = None) -> list[str]:
    return ["user", "add", "--username", name, "--full-name", full_name or f"Added {name}",
            "--email", f"{name}@example.org", "--password-stdin"]


def user_add(box: Sandbox, db: str, name: str, iterations: int = KILL_ITERATIONS,
             password: str = PASSWORD) -> Result:
    return run(box, user_add_args(name), db, stdin=password + "\n", iterations=iterations)


def passwd_stdin(name: str, current: str, new: str) -> str:
    return f"{name}\n{current}\n{new}\n{new}\n"


def enable_args(name: str) -> list[str]:
    return ["2fa", "enable", "--username", name, "--password-stdin", "--qr", "none"]


def login_args(name: str) -> list[str]:
    return ["login", "--username", name, "--password-stdin"]


class Gate:
    """A starting gate: processes started behind it wait in a shell, before exec, until it
    opens; then all of them exec the binary at once, however slowly Python spawned them."""

    def __init__(self) -> None:
        self.read_end, self.write_end = os.pipe()
        self.waiting = 0

    def wrap(self, argv: list[str]) -> list[str]:
        self.waiting += 1
        # `read` takes one byte at a time from a pipe, so each shell consumes one line.
        # bash, not sh: the pipe may have any descriptor number (dash takes 0 to 9 only).
        return ["/bin/bash", "-c", f'read -r _ <&{self.read_end}; exec "$0" "$@"', *argv]

    def open(self) -> None:
        os.write(self.write_end, b"\n" * self.waiting)
        os.close(self.write_end)
        os.close(self.read_end)


class Started:
    """A process started now, its output going to files (no pipe to drain)."""

    def __init__(self, box: Sandbox, args: list[str], db: str, iterations: int | None,
                 stdin_pipe: bool, gate: Gate | None = None,
                 state: pathlib.Path | None = None) -> None:
        base = box.scratch("proc")
        self.box = box
        self.out_path = base.with_suffix(".out")
        self.err_path = base.with_suffix(".err")
        argv = [BIN, *args, "--database", db]
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.start = time.monotonic()
            self.proc = subprocess.Popen(
                gate.wrap(argv) if gate else argv, env=box.env(iterations, state),
                stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL,
                stdout=out, stderr=err, pass_fds=(gate.read_end,) if gate else ())
        self.end: float | None = None

    def feed(self, text: str) -> None:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(text.encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass

    def close_stdin(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass

    def wait(self, timeout: float = 60) -> Result:
        # A blocking wait sees the exit at once (Popen.wait with a timeout polls, in steps of up
        # to 50 ms); a timer kills a process that hangs.
        watchdog = threading.Timer(timeout, self.proc.kill)
        watchdog.start()
        try:
            self.proc.wait()
        finally:
            watchdog.cancel()
        if self.end is None:
            self.end = time.monotonic()
        self.close_stdin()
        return Result(
            self.proc.returncode,
            self.box.clean(self.out_path.read_text(errors="replace")),
            self.box.clean(self.err_path.read_text(errors="replace")),
            self.end - self.start)


def syscall_of(pid: int) -> tuple[int, int] | None:
    """(the system call PID sits in, its first argument) from /proc/PID/syscall, when it runs
    the binary under test and is blocked; None while it runs, is still the gate's shell, or has
    gone. The suite needs /proc/PID/syscall (Linux, and the right to read it): without it a
    test could only guess when a process got somewhere, so it fails instead."""
    try:
        if os.readlink(f"/proc/{pid}/exe") != os.path.realpath(BIN):
            return None  # still the gate's shell
        fields = pathlib.Path(f"/proc/{pid}/syscall").read_text().split()
    except FileNotFoundError:
        return None  # it has exited
    except OSError as error:
        raise AssertionError(f"cannot read /proc/{pid}/syscall ({error}): the stress suite "
                             "needs it to see where a process waits") from error
    if not fields or fields[0] == "running" or len(fields) < 2:
        return None
    return int(fields[0]), int(fields[1], 16)


# read(2), write(2), and the two sleeps of a lock wait (nanosleep, clock_nanosleep), by machine.
SYSCALLS = {"x86_64": (0, 1, {35, 230}), "amd64": (0, 1, {35, 230}),
            "aarch64": (63, 64, {101, 115}), "arm64": (63, 64, {101, 115})}
READ_SYSCALL, WRITE_SYSCALL, SLEEP_SYSCALLS = SYSCALLS.get(platform.machine(),
                                                           (None, None, set()))


def blocked_on_stdin(pid: int) -> bool:
    """PID runs the binary and sits in read(0, …)."""
    assert READ_SYSCALL is not None, f"no read(2) number known for {platform.machine()}"
    call = syscall_of(pid)
    return call is not None and call == (READ_SYSCALL, 0)


def blocked_writing_stdout(pid: int) -> bool:
    """PID runs the binary and sits in write(1, …) (its standard output a full pipe)."""
    assert WRITE_SYSCALL is not None, f"no write(2) number known for {platform.machine()}"
    call = syscall_of(pid)
    return call is not None and call == (WRITE_SYSCALL, 1)


def waiting_for_lock(pid: int) -> bool:
    """PID runs the binary and sleeps between two tries at a lock another program holds: in
    SQLite's busy handler, or in the store's own retry while it switches a new file to WAL
    (the only sleeps in `accounts`)."""
    assert SLEEP_SYSCALLS, f"no nanosleep numbers known for {platform.machine()}"
    call = syscall_of(pid)
    return call is not None and call[0] in SLEEP_SYSCALLS


def wait_until(ready, what: str, timeout: float = 60) -> None:
    """Polls `ready()` until it holds (a point the program reached); fails after `timeout`
    seconds (a safety net against a hang, far beyond any normal wait)."""
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, f"timed out after {timeout:.0f} s waiting until {what}"
        time.sleep(0.002)  # a polling interval: the condition, not the time, ends the wait


def barrier(procs: list[Started], timeout: float = 60) -> str:
    """Waits until every process is blocked reading its standard input (or has exited)."""
    wait_until(lambda: all(p.proc.poll() is not None or blocked_on_stdin(p.proc.pid)
                           for p in procs), "every process waits on its standard input",
               timeout)
    exited = sum(1 for p in procs if p.proc.poll() is not None)
    return f"all {len(procs) - exited} blocked on stdin" + (
        f", {exited} exited early" if exited else "")


def released_at_once(gate: Gate, procs: list[Started],
                     lines: list[str]) -> tuple[list[Result], str]:
    """Opens `gate` (all start at once), waits until every process waits on its standard input,
    feeds each its line (one a process, in order), closes their standard input and waits for
    them: (their results, how the barrier went)."""
    gate.open()
    how = barrier(procs)
    for p, line in zip(procs, lines, strict=True):
        p.feed(line + "\n")
    for p in procs:
        p.close_stdin()
    return [p.wait() for p in procs], how


def unread(p: Started) -> int:
    """Bytes fed to `p` that it has not read yet (FIONREAD on our end of its stdin pipe)."""
    if p.proc.stdin is None or p.proc.stdin.closed:
        return 0
    buffer = bytearray(4)
    fcntl.ioctl(p.proc.stdin.fileno(), termios.FIONREAD, buffer)
    return int.from_bytes(buffer, sys.byteorder)


def wants_more_input(p: Started) -> bool:
    """`p` has read everything fed to it and sits reading its standard input again (prompts are
    not printed when standard input is not a terminal, so this is how to tell)."""
    return p.proc.poll() is None and unread(p) == 0 and blocked_on_stdin(p.proc.pid)


def read_key(p: Started, timeout: float = 60) -> str | None:
    """The Base32 key `2fa enable` prints (stdout, before it reads the code), as soon as it is
    there; None when the process ends without it, or has read everything fed to it and waits
    for more input without having shown it (it prints the key before it reads the code)."""
    found: list[str] = []

    def shown_or_done() -> bool:
        waiting = p.proc.poll() is not None or wants_more_input(p)
        match = KEY_LINE.search(p.out_path.read_text(errors="replace"))
        if match:
            found.append(match.group(1))
        return bool(match) or waiting

    wait_until(shown_or_done, "`2fa enable` shows its key or stops", timeout)
    return found[0] if found else None


def enable_2fa(box: Sandbox, db: str, name: str, state: pathlib.Path,
               iterations: int = KILL_ITERATIONS) -> tuple[Result, str | None]:
    """`2fa enable` run to its end: the password, then the code of the key it shows."""
    return enable_to_the_end(Started(box, enable_args(name), db, iterations, stdin_pipe=True,
                                     state=state))


def enable_to_the_end(p: Started) -> tuple[Result, str | None]:
    """`2fa enable` started with a stdin pipe, fed the password, then the code of the key it
    shows: (its result, the key)."""
    p.feed(PASSWORD + "\n")
    secret = read_key(p)
    if secret:
        p.feed(totp.code_now(secret) + "\n")
    p.close_stdin()
    return p.wait(), secret


def enabled_ok(r: Result, name: str) -> bool:
    return (r.code == 0 and f"Two-factor authentication is on for {name}.\n" in r.stdout
            and "Recovery codes (each works once in place of a code; they are not shown again):"
            in r.stdout and len(RECOVERY_LINE.findall(r.stdout)) == 10)


def code_barrier(procs: list[Started], timeout: float = 60) -> str:
    """Waits until every process has read its password and sits reading its standard input
    again, for the code (or has exited)."""
    wait_until(lambda: all(p.proc.poll() is not None or wants_more_input(p) for p in procs),
               "every process read its password and waits for the code", timeout)
    live = [p for p in procs if p.proc.poll() is None]
    return f"{len(live)} read the password and wait for the code"


def step_after(last: int | None) -> int:
    """The step whose code to type: the first after `last`, at least the current one (within
    the +-1 window as long as `prepare_step` ran less than 30 s ago)."""
    return max((last if last is not None else -1) + 1, totp.current_step())


def code_round(procs: list[Started], mode: str, secret: str,
               last_before: int | None) -> tuple[int, str, list[Result]]:
    """One round of a race on one TOTP code, once every process waits on its standard input:
    the password and the code of the step after `last_before` fed at once ("password and code
    at once"), or the password first and the code released once all have read it ("code
    released at once"); then standard input closed. (the step typed, how the barriers went,
    the results)."""
    how = barrier(procs)
    if mode == "password and code at once":
        step = step_after(last_before)
        for p in procs:
            p.feed(f"{PASSWORD}\n{totp.code_for_step(secret, step)}\n")
    else:
        for p in procs:
            p.feed(PASSWORD + "\n")
        how += "; " + code_barrier(procs)
        step = step_after(last_before)
        for p in procs:
            p.feed(totp.code_for_step(secret, step) + "\n")
    for p in procs:
        p.close_stdin()
    return step, how, [p.wait() for p in procs]


def judge_code_race(results: list[Result], welcome: str, where: str, answers, wrong: list[str],
                    raw, label) -> list[int]:
    """Judges the answers of a race on one TOTP code: exit 0 welcomed and authorized, exit 1
    "already used", or exit 4 locked, none telling `raw(r)` (raw store errors) or "busy".
    Counts the right answers of each kind in `answers`, adds what is wrong to `wrong` (named
    `where` and `label(k)`, the count of winners first when it is not one); the winners'
    indexes."""
    winners = [k for k, r in enumerate(results) if r.code == 0]
    for k, r in enumerate(results):
        if r.code == 0:
            ok = r.stdout.startswith(welcome) and AUTHORIZED in r.stderr
            answers["exit 0"] += ok
        elif r.code == 1:
            ok = REPLAYED in r.stderr and WELCOME not in r.stdout
            answers["exit 1 replayed"] += ok
        elif r.code == 4:
            ok = TOO_MANY in r.stderr
            answers["exit 4 locked"] += ok
        else:
            ok = False
        if not ok or raw(r) or mentions(r.text, ("busy",)):
            wrong.append(f"{where} {label(k)}: {r.brief()}")
    if len(winners) != 1:
        wrong.insert(0, f"{where}: {len(winners)} exit 0")
    return winners


def mentions(text: str, words: tuple[str, ...]) -> list[str]:
    low = text.lower()
    return [w for w in words if w in low]
