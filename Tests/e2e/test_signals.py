"""The terminal is put back on every exit path: Ctrl-Z and fg, SIGTERM, SIGHUP, and
every other signal whose default action ends the process."""

import os
import signal
import termios

import pexpect
import pytest
from conftest import BIN, PASSWORD, USERNAME, finish

# The front end: the same code on either store, so these run once, in the sqlite run.
pytestmark = pytest.mark.front_end

WELCOME_PREFIX = "Welcome back "


def pty_echo(child) -> bool:
    return bool(termios.tcgetattr(child.child_fd)[3] & termios.ECHO)


def at_password_prompt(child):
    child.expect_exact("User name: ")
    child.sendline(USERNAME)
    child.expect_exact("Password: ")
    assert child.waitnoecho(timeout=5)


def test_ctrl_z_restores_echo_and_fg_resumes(activated):
    """Ctrl-Z at the password prompt gives the shell an echoing terminal; `fg` comes back with
    echo off, shows the prompt again, and the login completes."""
    sh = activated.shell()
    sh.sendline(f"{BIN} login")
    at_password_prompt(sh)
    sh.sendcontrol("z")
    sh.expect("Stopped")
    sh.expect_exact("PROMPT$ ")
    sh.sendline("echo MARK_$((40+2))")
    sh.expect_exact("echo MARK_")  # typed text is echoed while the program is stopped
    sh.expect_exact("MARK_42")
    sh.expect_exact("PROMPT$ ")
    sh.sendline("fg")
    sh.expect_exact("Password: ")
    assert sh.waitnoecho(timeout=5)
    sh.sendline(PASSWORD)
    sh.expect_exact(WELCOME_PREFIX)
    sh.expect_exact("PROMPT$ ")
    sh.sendline("echo RC=$?")
    sh.expect_exact("RC=0")
    assert PASSWORD not in sh.logfile_read.getvalue()


def like_a_shell():
    """Starts the child with the default action for SIGPIPE and SIGXFSZ, as a shell does (Python
    ignores both, and an ignored disposition is inherited across exec)."""
    for signo in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(signo, signal.SIG_DFL)


def _terminate_at_password(activated, signo):
    child = activated.spawn("login", preexec_fn=like_a_shell)
    at_password_prompt(child)
    assert not pty_echo(child)
    os.kill(child.pid, signo)
    child.expect(pexpect.EOF)
    echo_after = pty_echo(child)
    child.close()
    return child.exitstatus, child.signalstatus, echo_after


def core_files(device):
    return sorted(p.name for p in device.root.iterdir() if p.name.startswith("core"))


# Every signal that can be caught and whose default action ends the process, except the
# synchronous faults below; STKFLT, PWR, IO and the real-time signals are Linux's.
TERMINATING = [
    signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT,
    signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM, signal.SIGXCPU, signal.SIGXFSZ,
    signal.SIGVTALRM, signal.SIGPROF, signal.SIGABRT, signal.SIGTRAP, signal.SIGPIPE,
    signal.SIGSYS, signal.SIGSTKFLT, signal.SIGPWR, signal.SIGIO, signal.SIGRTMIN,
    signal.SIGRTMAX,
]
FAULTS = [signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL]


def signal_name(signo) -> str:
    return {signal.SIGRTMIN: "SIGRTMIN", signal.SIGRTMAX: "SIGRTMAX"}.get(
        signo, signal.Signals(signo).name)


@pytest.mark.parametrize("signo", TERMINATING, ids=signal_name)
def test_terminating_signal_restores_echo(activated, signo):
    """Any terminating signal at the password prompt restores echo and exits 128 + its number,
    without dying by the signal or leaving a core file."""
    status, signalled, echo = _terminate_at_password(activated, signo)
    assert (status, signalled, echo) == (128 + signo, None, True)
    assert core_files(activated) == []
    assert [e["event"] for e in activated.events()] == ["activation"]


@pytest.mark.parametrize("signo", FAULTS, ids=signal_name)
def test_fault_signal_restores_echo_then_dies_by_it(activated, signo):
    """SEGV, BUS, FPE and ILL restore echo, then end the process by the same signal (so a parent
    sees the crash), writing no core file."""
    status, signalled, echo = _terminate_at_password(activated, signo)
    assert (status, signalled, echo) == (None, signo, True)
    assert core_files(activated) == []


@pytest.mark.parametrize("signo", [signal.SIGHUP, signal.SIGPIPE], ids=signal_name)
def test_signal_ignored_at_start_stays_ignored(activated, signo):
    """A signal ignored when the program starts (`nohup`, a parent ignoring SIGPIPE) is not
    turned into a fatal one: the login goes on and succeeds."""

    def ignoring():
        like_a_shell()
        signal.signal(signo, signal.SIG_IGN)

    child = activated.spawn("login", preexec_fn=ignoring)
    at_password_prompt(child)
    os.kill(child.pid, signo)
    child.sendline(PASSWORD)
    child.expect_exact(WELCOME_PREFIX)
    assert finish(child) == 0


def test_sigterm_restores_echo(activated):
    """SIGTERM at the password prompt restores echo and exits 143 (128 + 15)."""
    status, signalled, echo = _terminate_at_password(activated, signal.SIGTERM)
    assert (status, signalled, echo) == (143, None, True)
    assert [e["event"] for e in activated.events()] == ["activation"]


def test_sighup_restores_echo(activated):
    """SIGHUP (the terminal went away) restores echo and exits 129."""
    status, signalled, echo = _terminate_at_password(activated, signal.SIGHUP)
    assert (status, signalled, echo) == (129, None, True)


def test_wrong_password_error_path_restores_echo(activated):
    """A refused login (an error exit) leaves echo on."""
    child = activated.spawn("login")
    at_password_prompt(child)
    child.sendline("not the right password")
    child.expect_exact("Invalid user name or password!")
    child.expect(pexpect.EOF)
    assert pty_echo(child)
    assert finish(child) == 1
