"""An unknown user name costs the same PBKDF2 work as a wrong password.

Compared by the CPU time the process spends (not wall-clock), at the real 1,200,000 iterations:
without the dummy hash an unknown name would cost about 1% of a wrong password, so the wide
bounds below cannot hide the difference and do not depend on how busy the machine is."""

import statistics

import pytest

from conftest import cpu_seconds

# The front end: the same code on either store, so these run once, in the sqlite run.
pytestmark = pytest.mark.front_end


def login_cpu(device, username, password, fast=False):
    """CPU seconds of one refused `login` (at the real iteration count unless `fast`)."""
    return cpu_seconds(["login", "--username", username, "--password-stdin"], password + "\n",
                       device.env(fast=fast))


def test_unknown_name_costs_a_wrong_password(device):
    """Unknown name vs wrong password, 3 runs each alternated: CPU medians within 2× of each
    other (and a wrong password is not free either)."""
    device.activate(fast=False)
    wrong, unknown = [], []
    for turn in range(3):
        wrong.append(login_cpu(device, "alice", "not the password, but long enough"))
        unknown.append(login_cpu(device, f"nobody{turn}", "not the password, but long enough"))
    wrong_median, unknown_median = statistics.median(wrong), statistics.median(unknown)
    assert wrong_median > 0.02, wrong
    assert 0.5 < unknown_median / wrong_median < 2.0, (wrong, unknown)
    # Three failures each: no lock yet, so every run did its full work.
    assert len([e for e in device.events() if e["event"] == "lockout"]) == 0


def test_cost_does_not_follow_the_environment(device):
    """With ACCOUNTS_PBKDF2_ITERATIONS=1000 (cheap NEW hashes) and the stored hash at
    1,200,000, an unknown name must still cost what the stored user costs (it cost 1/1200
    before): CPU medians within 2× of each other."""
    device.activate(fast=False)
    wrong, unknown = [], []
    for turn in range(3):
        wrong.append(login_cpu(device, "alice", "not the password, but long enough", fast=True))
        unknown.append(login_cpu(device, f"nobody{turn}", "not the password, but long enough",
                                   fast=True))
    wrong_median, unknown_median = statistics.median(wrong), statistics.median(unknown)
    assert wrong_median > 0.02, wrong
    assert 0.5 < unknown_median / wrong_median < 2.0, (wrong, unknown)


GUESS = "not the password, but long enough"
NEW = "tangerine submarine orchestra 93"
# Each way of being refused, next to the refusal it must look like. The first
# command of each pair is a wrong password of an existing account.
REFUSALS = {
    "verify-unknown-name": (
        (["verify", "--username", "alice", "--password-stdin"], GUESS + "\n"),
        (["verify", "--username", "nobody{turn}", "--password-stdin"], GUESS + "\n")),
    "passwd-unknown-name": (
        (["passwd"], f"alice\n{GUESS}\n{NEW}\n{NEW}\n"),
        (["passwd"], f"nobody{{turn}}\n{GUESS}\n{NEW}\n{NEW}\n")),
    "login-disabled-account": (
        (["login", "--username", "alice", "--password-stdin"], GUESS + "\n"),
        (["login", "--username", "bob", "--password-stdin"], "can we fix it yes we can\n")),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_new_refusals_cost_a_wrong_password(device, case):
    """Verify and passwd with an unknown name, and login of a disabled account (right
    password), cost what a wrong password costs: CPU medians within 2x, 3 alternated runs each."""
    device.activate(fast=False)
    added = device.run("user", "add", "--username", "bob", "--full-name", "Bob Builder",
                       "--email", "bob@example.org", "--password-stdin",
                       input="can we fix it yes we can\n", fast=False)
    assert added.code == 0, added
    assert device.run("user", "disable", "bob").code == 0
    (wrong_args, wrong_stdin), (other_args, other_stdin) = REFUSALS[case]
    wrong, other = [], []
    env = device.env(fast=False)
    for turn in range(3):
        wrong.append(cpu_seconds(wrong_args, wrong_stdin, env))
        other.append(cpu_seconds([a.format(turn=turn) for a in other_args],
                                 other_stdin.format(turn=turn), env))
    wrong_median, other_median = statistics.median(wrong), statistics.median(other)
    assert wrong_median > 0.02, wrong
    assert 0.5 < other_median / wrong_median < 2.0, (wrong, other)
