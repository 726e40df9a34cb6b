"""`accounts pam-auth --database PATH`, called directly the way pam_exec calls it: its limits.
At most 4096 bytes of input, read and refused uncounted past that; a time limit (5 seconds, or
--time-limit) that ends the program by its own SIGALRM whatever the caller did to that signal,
with the store held by another writer or the input never ending; and the cost of an answer: an
unknown name, a variant of a stored name and a disabled account cost what a wrong password
costs, at the real iteration count."""

import signal
import statistics
import subprocess
import threading
import time

import pytest

from conftest import (BIN, BOB, BOB_EMAIL, BOB_FULL_NAME, BOB_PASSWORD, PASSWORD, USERNAME,
                      WRONG_PASSWORD, cpu_seconds)
from pamhelp import GUESS, events, failures, iterations, pam_auth, pam_env, silent

# The front end PAM reaches: pam_exec's environment, input, time limit and items, and what
# pam-auth answers. The store behind it is asked what login asks (the same repository calls,
# run on both stores by test_login.py and the test_session_*.py files), so these run once,
# in the sqlite run.
pytestmark = pytest.mark.front_end

# Timings use the release build when there is one, as test_timing.py does.

MAX_INPUT = 4096


# Input: at most 4096 bytes.

def test_input_over_4096_bytes_refused_uncounted(activated):
    """4097 bytes of input: exit 1, nothing on stdout, nothing counted or logged; exactly 4096
    bytes is an ordinary wrong password (exit 1, silent, counted). (Input that is no password
    at all is not a credential refusal: a sentence on stderr for the administrator is allowed.)"""
    before = events(activated)
    results = [pam_auth(activated, stdin=b"x" * (MAX_INPUT + 1)),
               pam_auth(activated, stdin=PASSWORD.encode() + b"y" * MAX_INPUT)]
    assert [(r.code, r.stdout) for r in results] == [(1, "")] * 2, results
    assert events(activated) == before
    assert failures(activated) == 0
    assert silent(pam_auth(activated, stdin=b"x" * MAX_INPUT)) == 1
    assert failures(activated) == 1


def test_huge_input_refused_uncounted(activated):
    """Eight MiB on standard input: exit 1 within the time limit, nothing counted or logged."""
    before = events(activated)
    result = pam_auth(activated, stdin=b"x" * (8 << 20), timeout=30)
    assert (result.code, result.stdout) == (1, ""), result
    assert events(activated) == before


# The time limit.

def test_gives_up_after_5_seconds(activated):
    """With the database held by another writer the whole time, pam-auth gives up within 5
    seconds in total (killed by its own SIGALRM; or, if its store gives up first, exit 3 with
    one sentence), prints nothing on stdout and writes nothing: no failure, no event, file
    intact."""
    before = events(activated)
    with activated.write_lock():
        start = time.monotonic()
        result = pam_auth(activated, WRONG_PASSWORD, timeout=30,
                          args=["pam-auth", *activated.pam_store_args()])
        elapsed = time.monotonic() - start
    assert result.stdout == "", result
    if result.code == 3:
        assert len(result.err_lines) == 1, result
    else:
        assert result.code == -signal.SIGALRM, result
        assert elapsed >= 4.5, elapsed
    assert elapsed < 30, elapsed  # ended by itself: the test's own limit is 30 seconds
    assert events(activated) == before
    assert failures(activated) == 0
    if not activated.postgresql:  # PostgreSQL has no whole-database check to ask for
        assert activated.query("PRAGMA integrity_check") == [("ok",)]


def test_gives_up_on_input_that_never_ends(activated):
    """Standard input left open and silent: pam-auth gives up at its --time-limit (1 second
    here), killed by its own SIGALRM, nothing on stdout, nothing counted or logged."""
    before = events(activated)
    proc = subprocess.Popen([BIN, "pam-auth", *activated.pam_store_args(), "--time-limit", "1"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=pam_env(), cwd=str(activated.root))
    start = time.monotonic()
    watchdog = threading.Timer(30, proc.kill)
    watchdog.start()
    try:
        proc.stdin.write(PASSWORD.encode())
        proc.stdin.flush()
        stdout = proc.stdout.read()  # until the program ends; its standard input stays open
        code = proc.wait()
        elapsed = time.monotonic() - start
    finally:
        watchdog.cancel()
        proc.stdin.close()
    assert code == -signal.SIGALRM, code
    assert stdout == b""
    assert 0.9 <= elapsed < 30, elapsed  # ended by itself: the watchdog kills at 30 seconds
    assert events(activated) == before
    assert failures(activated) == 0


@pytest.mark.parametrize("limit", ["0", "301", "-1", "5s", ""])
def test_time_limit_out_of_range_refused(activated, limit):
    """--time-limit takes whole seconds from 1 to 300: anything else is a usage error (exit 2)
    before anything is read or checked."""
    result = pam_auth(activated, args=["pam-auth", *activated.pam_store_args(),
                                       "--time-limit", limit])
    assert (result.code, result.stdout) == (2, ""), result
    assert "--time-limit" in result.stderr, result
    assert failures(activated) == 0


@pytest.mark.parametrize("inherited", ["ignored", "blocked", "ignored-and-blocked"])
def test_time_limit_holds_whatever_sigalrm_state_it_inherits(activated, inherited):
    """SIGALRM ignored and/or blocked by the caller (both survive exec), standard input left open
    and silent: pam-auth still ends itself, killed by its own SIGALRM, within a generous wait;
    nothing on stdout, nothing counted or logged."""
    def inherit():
        if "ignored" in inherited:
            signal.signal(signal.SIGALRM, signal.SIG_IGN)
        if "blocked" in inherited:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})

    before = events(activated)
    proc = subprocess.Popen([BIN, "pam-auth", *activated.pam_store_args(), "--time-limit", "1"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=pam_env(), cwd=str(activated.root),
                            preexec_fn=inherit)
    try:
        proc.stdin.write(PASSWORD.encode())
        proc.stdin.flush()
        code = proc.wait(timeout=30)
        stdout = proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdin.close()
        proc.stdout.close()
    assert code == -signal.SIGALRM, code
    assert stdout == b""
    assert events(activated) == before
    assert failures(activated) == 0


# Cost: an unknown name costs what a wrong password costs, at the real iteration count.

def pam_cpu(device, user, password, expected=1) -> float:
    """CPU seconds of one direct pam-auth run."""
    return cpu_seconds(["pam-auth", *device.pam_args()], password, pam_env(user), expected)


def within_2x(wrong, other):
    wrong_median, other_median = statistics.median(wrong), statistics.median(other)
    assert wrong_median > 0.02, wrong
    assert 0.5 < other_median / wrong_median < 2.0, (wrong, other)


def real_count_device(device):
    """Activated at the real 1,200,000 iterations, with bob (same count) disabled."""
    device.activate(fast=False)
    added = device.run("user", "add", "--username", BOB, "--full-name", BOB_FULL_NAME,
                       "--email", BOB_EMAIL, "--password-stdin", input=BOB_PASSWORD + "\n",
                       fast=False)
    assert added.code == 0, added
    assert device.run("user", "disable", BOB).code == 0
    assert iterations(device.stored_hash()) == 1_200_000
    return device


def test_unknown_name_costs_a_wrong_password(device):
    """Unknown name vs wrong password, 3 alternated runs each at 1,200,000 iterations: CPU
    medians within 2× of each other (no ACCOUNTS_PBKDF2_ITERATIONS: pam-auth ignores it)."""
    real_count_device(device)
    wrong, unknown = [], []
    for turn in range(3):
        wrong.append(pam_cpu(device, USERNAME, GUESS))
        unknown.append(pam_cpu(device, f"nobody{turn}", GUESS))
    within_2x(wrong, unknown)


def test_name_variant_costs_an_unknown_name(device):
    """ALICE with alice's right password vs an unknown name, 3 alternated runs each at 1,200,000
    iterations: both refused (exit 1), CPU medians within 2× of each other."""
    real_count_device(device)
    variant, unknown = [], []
    for turn in range(3):
        variant.append(pam_cpu(device, "ALICE", PASSWORD))
        unknown.append(pam_cpu(device, f"nobody{turn}", PASSWORD))
    within_2x(unknown, variant)


def test_disabled_account_costs_a_wrong_password(device):
    """A disabled account's right password vs alice's wrong one: CPU medians within 2×."""
    real_count_device(device)
    wrong, disabled = [], []
    for _ in range(3):
        wrong.append(pam_cpu(device, USERNAME, GUESS))
        disabled.append(pam_cpu(device, BOB, BOB_PASSWORD))
    within_2x(wrong, disabled)
