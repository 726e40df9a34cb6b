"""The terminal is put back on every exit path: Ctrl-Z and fg, SIGTERM, SIGHUP (issue 2)."""

import os
import signal
import termios

import pexpect
from conftest import BIN, PASSWORD, USERNAME, finish

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


def _terminate_at_password(activated, signo):
    child = activated.spawn("login")
    at_password_prompt(child)
    assert not pty_echo(child)
    os.kill(child.pid, signo)
    child.expect(pexpect.EOF)
    echo_after = pty_echo(child)
    child.close()
    return child.exitstatus, child.signalstatus, echo_after


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
