"""Typing into the program: the standard input of the activation form, and the pexpect helpers
that wait for a prompt on the pseudo-terminal, check its echo and answer it."""

from __future__ import annotations

import termios

import pexpect

from constants import EMAIL, FULL_NAME, PASSWORD, USERNAME


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


def ctrl_c_at_secret(child, prompt):
    """Waits for a password prompt with echo off, then presses Ctrl-C."""
    child.expect_exact(prompt)
    assert child.waitnoecho(timeout=5)
    child.sendintr()



def finish(child, timeout=15) -> int:
    """Waits for the spawned process to end and returns its exit status."""
    child.expect(pexpect.EOF, timeout=timeout)
    child.close()
    assert child.signalstatus is None, f"killed by signal {child.signalstatus}"
    return child.exitstatus

