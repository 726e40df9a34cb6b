"""Logging in with the TOTP second factor on: the code line after the password, the steps a code
may be of, replays, wrong codes and the lockout they share with wrong passwords (also when logins
run at once), and the code that `verify` and `passwd` ask too."""

import json
import pathlib
import signal
import subprocess
import time

import pyotp
import pytest
from totp import STEP, code_for_step

from conftest import (BIN, NEW_PASSWORD, PASSWORD, TOO_MANY, USERNAME, WRONG_PASSWORD, form,
                      with_program_role)
from secondfactor import (AUTHORIZED, EMPTY_CODE, INVALID_CODE, REPLAY, WELCOME, authorized_home,
                          enable, enabled, events, failures, login, oath, steady, wrong_code)


# Logging in with the second factor.

def test_login_needs_the_code(activated):
    """With 2FA on, login reads a third line: the right oathtool code gives `You are successfully
    authorized.` on stderr and Home on stdout, and a login_success event that names both
    factors."""
    enrollment = enabled(activated)
    result = login(activated, oath(enrollment.key))
    authorized_home(result)
    assert events(activated)[-1] == ("login_success", USERNAME, "password and TOTP code")
    whoami = activated.run("whoami", "--json")
    assert whoami.code == 0, whoami
    assert json.loads(whoami.stdout)["secondFactor"] is True


def test_login_with_flags_reads_code_line(activated):
    """`login --username U --password-stdin`: the password line, then the code line."""
    enrollment = enabled(activated)
    result = activated.run("login", "--username", USERNAME, "--password-stdin",
                           input=f"{PASSWORD}\n{oath(enrollment.key)}\n")
    authorized_home(result)


def test_login_without_the_code_line(activated):
    """Input ending before the code: not logged in, exit 1, the usual sentence."""
    enabled(activated)
    result = activated.run("login", input=f"{USERNAME}\n{PASSWORD}\n")
    assert (result.code, result.stdout, result.stderr) == (
        1, "", "Input ended before the login was complete; you are not logged in.\n")


def test_bare_flow_through_a_pipe(activated):
    """Bare `accounts` (no session) through a pipe asks the code too, then shows Home."""
    enrollment = enabled(activated)
    result = activated.run(input=f"{USERNAME}\n{PASSWORD}\n{oath(enrollment.key)}\n")
    authorized_home(result)


def test_empty_code(activated):
    """An empty code line: `Please fill all fields!` / `Empty: Verification code.`, exit 1, not
    counted."""
    enabled(activated)
    result = login(activated, "")
    assert (result.code, result.stdout, result.stderr) == (1, "", EMPTY_CODE)
    assert failures(activated) == 0


def test_code_with_spaces(activated):
    """A code typed as `123 456` is read without its space."""
    enrollment = enabled(activated)
    code = oath(enrollment.key)
    authorized_home(login(activated, f"{code[:3]} {code[3:]}"))


# The steps a code may be of, and replays.

def test_code_one_step_later_accepted(activated):
    """A code of the next step (pyotp at now+30) is accepted."""
    enrollment = enabled(activated)
    authorized_home(login(activated, pyotp.TOTP(enrollment.key).at(time.time() + 30)))


def test_code_one_step_earlier_accepted(activated):
    """A code of the step before (pyotp at now-30) is accepted."""
    enrollment = enabled(activated)
    result = steady(lambda step: login(activated, code_for_step(enrollment.key, step - 1)))
    assert (result.code, result.stderr) == (0, AUTHORIZED + "\n"), result
    assert result.out_lines[0] == WELCOME


@pytest.mark.parametrize("offset", [3, -3])
def test_code_three_steps_away_refused(activated, offset):
    """A code three steps from now is wrong at login (only one step of skew): exit 1,
    `Invalid verification code!`, counted."""
    enrollment = enabled(activated)
    result = login(activated, pyotp.TOTP(enrollment.key).at(time.time() + offset * STEP))
    assert (result.code, result.stdout, result.stderr) == (1, "", INVALID_CODE + "\n")
    assert failures(activated) == 1


def test_each_accepted_code_must_be_later(activated):
    """After a code of this step was accepted, the next one must be of a later step: the code
    of now+30 is accepted, then this step's code is a replay (an earlier step)."""
    enrollment = enabled(activated)
    totp = pyotp.TOTP(enrollment.key)
    t = time.time()
    authorized_home(login(activated, totp.at(t)))
    authorized_home(login(activated, totp.at(t + 30)))
    result = login(activated, totp.at(t))
    assert (result.code, result.stdout, result.stderr) == (1, "", REPLAY + "\n")


def test_same_code_twice_is_a_replay(activated):
    """The same code a second time: `That code was already used; wait for the next one.` exit 1,
    logged as `verification code replayed` and counted."""
    enrollment = enabled(activated)
    code = oath(enrollment.key)
    authorized_home(login(activated, code))
    result = login(activated, code)
    assert (result.code, result.stdout, result.stderr) == (1, "", REPLAY + "\n")
    assert events(activated)[-1] == ("login_failure", USERNAME, "verification code replayed")
    assert failures(activated) == 1


def test_enrollment_code_cannot_log_in(activated):
    """The code typed at enrollment has its step stored: logging in with it is a replay."""
    typed = []

    def remembered(key):
        typed.append(oath(key))
        return typed[-1]
    assert enable(activated, code=remembered).result.code == 0
    result = login(activated, typed[0])
    assert (result.code, result.stderr) == (1, REPLAY + "\n"), result


# Wrong codes and the lockout.

def test_wrong_code(activated):
    """A wrong code after the right password: exit 1, `Invalid verification code!`, a
    login_failure `wrong verification code`, one failure counted, no session."""
    enrollment = enabled(activated)
    result = login(activated, wrong_code(enrollment.key))
    assert (result.code, result.stdout, result.stderr) == (1, "", INVALID_CODE + "\n")
    assert events(activated)[-1] == ("login_failure", USERNAME, "wrong verification code")
    assert failures(activated) == 1
    assert not activated.session_file.exists()


def test_five_wrong_codes_lock(activated):
    """Five wrong codes in a row: exit 1, 1, 1, 1, then 4 with the lock sentence; then even the
    right password and code exit 4."""
    enrollment = enabled(activated)
    results = [login(activated, wrong_code(enrollment.key)) for _ in range(5)]
    assert [r.code for r in results] == [1, 1, 1, 1, 4]
    last = results[-1]
    assert last.stdout == "" and len(last.err_lines) == 2, last
    assert last.err_lines[0] == INVALID_CODE and TOO_MANY in last.err_lines[1], last
    assert events(activated)[-1][:2] == ("lockout", USERNAME)
    locked = login(activated, oath(enrollment.key))
    assert locked.code == 4 and TOO_MANY in locked.stderr, locked


def test_wrong_codes_and_passwords_share_the_tally(activated):
    """Three wrong codes and two wrong passwords lock the name."""
    enrollment = enabled(activated)
    codes = [login(activated, wrong_code(enrollment.key)).code for _ in range(3)]
    codes += [activated.login(USERNAME, WRONG_PASSWORD).code for _ in range(2)]
    assert codes == [1, 1, 1, 1, 4]


def _blocked_reading_stdin(pid: int) -> bool:
    """The process's main thread waits in read(2) on its standard input (fd 0)."""
    fields = pathlib.Path(f"/proc/{pid}/syscall").read_text().split()
    return len(fields) > 2 and fields[0] == "0" and int(fields[1], 16) == 0


def _cpu_ticks(pid: int) -> int:
    """User plus system CPU time the process has used, in clock ticks."""
    after_name = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(after_name[11]) + int(after_name[12])


def _wait_for(condition, what, timeout=60):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting until {what}")
        time.sleep(0.001)


def _ended(proc) -> tuple:
    """Waits for a process whose input is closed; its (small) output."""
    proc.wait(timeout=120)
    return proc.stdout.read(), proc.stderr.read()


def test_logins_at_once_tell_the_locked_nothing(device):
    """Eight logins at once on an account with a second factor, seven with wrong passwords and
    one with the right one. Barrier: every process is blocked reading its password before any
    password is sent. The right one is held (SIGSTOP) once it is hashing, that is after it read
    the lock, and let go once the seven have ended: by then they have locked the name (five
    failures counted, two refused), so the right password gets the lock's answer, exit 4, and
    never the code question that would tell it is right."""
    # A stored hash of 3,000,000 iterations: each check takes long enough to be caught hashing.
    result = device.run("activate", input=form(),
                        env=device.env(ACCOUNTS_PBKDF2_ITERATIONS="3000000"))
    assert result.code == 0, result
    enabled(device)
    args = [BIN, "login", "--username", USERNAME, "--no-session"]
    procs = [subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, cwd=str(device.root),
                              env=with_program_role(args[1:], device.env()))
             for _ in range(8)]
    right, wrong = procs[0], procs[1:]
    try:
        for proc in procs:
            _wait_for(lambda: _blocked_reading_stdin(proc.pid), "every login waits for input")
        start = _cpu_ticks(right.pid)
        for proc in procs:
            proc.stdin.write(((PASSWORD if proc is right else WRONG_PASSWORD) + "\n").encode())
            proc.stdin.close()
        # Five ticks (50 ms) of CPU past the read: the lock was read, the hash is under way.
        _wait_for(lambda: _cpu_ticks(right.pid) >= start + 5, "the right login is hashing")
        right.send_signal(signal.SIGSTOP)
        ended = [_ended(proc) for proc in wrong]
        codes = sorted(proc.returncode for proc in wrong)
        assert codes == [1, 1, 1, 1, 4, 4, 4], (codes, ended)
        right.send_signal(signal.SIGCONT)
        out, err = _ended(right)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.kill()
                proc.wait()
    assert right.returncode == 4, (right.returncode, out, err)
    assert out == b"" and TOO_MANY in err.decode(), (out, err)
    assert b"Verification code" not in out + err
    logged = events(device)
    counted = [e for e in logged if e[0] == "login_failure" and e[2] == "invalid user name or password"]
    assert len(counted) == 5, logged
    assert [e[0] for e in logged].count("lockout") == 1, logged
    assert logged[-1] == ("login_failure", USERNAME, "locked"), logged


# verify and passwd with the second factor.

def test_verify_reads_the_code_line(activated):
    """`verify --username alice --password-stdin` with 2FA on: the right code on the next line
    exits 0 silently; the same code again and a wrong one exit 1 silently (verify prints
    nothing for right, wrong or locked), logged `verification code replayed` and `wrong
    verification code`; no code line exits 1 without a login_success."""
    enrollment = enabled(activated)
    args = ("verify", "--username", USERNAME, "--password-stdin")
    code = oath(enrollment.key)
    right = activated.run(*args, input=f"{PASSWORD}\n{code}\n")
    assert (right.code, right.stdout, right.stderr) == (0, "", "")
    replay = activated.run(*args, input=f"{PASSWORD}\n{code}\n")
    assert (replay.code, replay.stdout, replay.stderr) == (1, "", "")
    assert events(activated)[-1] == ("login_failure", USERNAME, "verification code replayed")
    wrong = activated.run(*args, input=f"{PASSWORD}\n{wrong_code(enrollment.key)}\n")
    assert (wrong.code, wrong.stdout, wrong.stderr) == (1, "", "")
    assert events(activated)[-1] == ("login_failure", USERNAME, "wrong verification code")
    successes = [e for e in events(activated) if e[0] == "login_success"]
    missing = activated.run(*args, input=f"{PASSWORD}\n")
    assert (missing.code, missing.stdout) == (1, "")
    assert [e for e in events(activated) if e[0] == "login_success"] == successes


def test_passwd_needs_the_code(activated):
    """`passwd` with 2FA on asks the code after the current password: a wrong one keeps the
    password; the right one changes it."""
    enrollment = enabled(activated)
    wrong = activated.run("passwd", "--username", USERNAME, input=(
        f"{PASSWORD}\n{wrong_code(enrollment.key)}\n{NEW_PASSWORD}\n{NEW_PASSWORD}\n"))
    assert (wrong.code, wrong.stdout, wrong.stderr) == (1, "", INVALID_CODE + "\n")
    right = activated.run("passwd", "--username", USERNAME, input=(
        f"{PASSWORD}\n{oath(enrollment.key)}\n{NEW_PASSWORD}\n{NEW_PASSWORD}\n"))
    assert (right.code, right.stdout) == (0, f"Password changed for {USERNAME}.\n"), right
    authorized_home(login(activated, oath(enrollment.key, time.time() + 30),
                          password=NEW_PASSWORD))
