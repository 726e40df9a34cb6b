"""pam_accounts.so under the resource limits of its caller. `su` is setuid, so the person who
runs it chooses the limits the module and its helper inherit. The module sets the helper's own
limits before exec (docs/pam.md): every attempt whose password reached the helper is counted,
and where a hard limit may not be raised (a caller without CAP_SYS_RESOURCE) the helper is not
started, so nothing is asked or checked and the refusal is logged. Driven from outside:
`prlimit` around `su - NAME` typed by nobody at a pseudo-terminal, and around pamtester."""

import pexpect
import pytest

from conftest import PASSWORD, WRONG_PASSWORD
from hostusers import unique_name, user_records
from pamhelp import failures
from pammodule import PAM_CODES, captured_syslog, failure_line, finish, spawn_pamtester
from pamstack import CODE_PROMPT, PASSWORD_PROMPT, service, su, su_stack
from secondfactor import enabled

pytestmark = pytest.mark.front_end

LOCKOUT_AFTER = 5
LOCKED = "Too many failed attempts"


def refusal(limit, value) -> str:
    return (f"the helper was not started: its {limit} cannot be set to {value} (the caller's "
            "hard limit is lower, and raising it needs CAP_SYS_RESOURCE)")


# Soft limits, the hard ones left as they were: the store's files may not grow past 32 KiB
# (a helper run under it is killed by SIGXFSZ writing the failure, after it checked the
# password); then that with as few open files and as little address space as su itself still
# runs with, and no core file. (A CPU limit low enough to stop the helper stops su first.)
SOFT = {
    "file size": ["--fsize=32768:unlimited"],
    "all": ["--fsize=32768:unlimited", "--nofile=8:1024", "--as=268435456:unlimited",
            "--core=0:unlimited"],
}

# The same limits soft and hard, as the review's `prlimit --fsize=32768` sets them; the
# refusal the module logs when the host may not raise them.
HARD = {
    "file size": (["--fsize=32768"], refusal("RLIMIT_FSIZE", "unlimited")),
    "all": (["--fsize=32768", "--nofile=8", "--as=268435456"], refusal("RLIMIT_FSIZE",
                                                                        "unlimited")),
}


def may_raise_limits() -> bool:
    """Whether a process here can hold CAP_SYS_RESOURCE (bit 24 of the bounding set)."""
    with open("/proc/self/status") as status:
        bounding = next(line for line in status if line.startswith("CapBnd:"))
    return bool(int(bounding.split()[1], 16) >> 24 & 1)


def wrong_then_right(device, name, limits):
    """Five wrong passwords, then the right one, each through `su - NAME` run by nobody under
    `limits`, each refused without the code question. After each: (failures, locked, what su
    showed, what the module logged)."""
    seen = []
    for password in [WRONG_PASSWORD] * LOCKOUT_AFTER + [PASSWORD]:
        with captured_syslog() as syslog:
            child = su(name, prefix=[*syslog.prefix, "prlimit", *limits])
            child.expect_exact(PASSWORD_PROMPT)
            child.sendline(password)
            child.expect(pexpect.EOF)
            child.close()
            shown = child.logfile_read.getvalue()
            assert child.exitstatus != 0 and CODE_PROMPT not in shown, shown
            seen.append((failures(device, name), device.account(name)["locked"], shown,
                         [line for line in syslog.messages() if "pam_accounts(" in line]))
    return seen


@pytest.mark.parametrize("limits", SOFT.values(), ids=SOFT.keys())
def test_every_wrong_password_through_su_is_counted_under_the_callers_soft_limits(device,
                                                                                  limits):
    """A second-factor account, five wrong passwords through `su` under soft limits that would
    stop the helper: each counted, the fifth locks the name; then the right password is refused
    with the lock's sentence, and the code question never shows."""
    name = unique_name("lim")
    device.activate(username=name)
    enabled(device, username=name)
    with user_records(device), su_stack(device):
        seen = wrong_then_right(device, name, limits)
    counts = [(count, locked) for count, locked, _, _ in seen]
    assert counts == [(1, False), (2, False), (3, False), (4, False), (0, True), (0, True)], seen
    assert LOCKED in seen[-1][2], seen[-1]


@pytest.mark.parametrize("limits,refused", HARD.values(), ids=HARD.keys())
def test_under_the_callers_hard_limits_every_attempt_is_counted_or_never_checked(device,
                                                                                 limits,
                                                                                 refused):
    """The same under hard limits. Where su may raise them (CAP_SYS_RESOURCE in this machine's
    bounding set) each attempt is counted as above; where it may not (a container without the
    capability), the module logs the refusal first and starts no helper, so no attempt is
    checked at all, the right password neither. The code question never shows."""
    name = unique_name("lim")
    device.activate(username=name)
    enabled(device, username=name)
    with user_records(device), su_stack(device):
        seen = wrong_then_right(device, name, limits)
    counts = [(count, locked) for count, locked, _, _ in seen]
    if may_raise_limits():
        assert counts == [(1, False), (2, False), (3, False), (4, False), (0, True),
                          (0, True)], seen
    else:
        assert counts == [(0, False)] * (LOCKOUT_AFTER + 1), seen
        first = [lines[:1] for _, _, _, lines in seen]
        assert first == [[f"pam_accounts(su-l:auth): {refused}"]] * (LOCKOUT_AFTER + 1), seen


def test_a_caller_that_may_not_raise_a_limit_is_refused_before_anything_is_asked(activated):
    """pamtester run without CAP_SYS_RESOURCE (root, but as unprivileged here as any user) under
    a hard file-size limit of 32 KiB, which it may not raise: the module starts no helper, asks
    nothing, answers PAM_AUTH_ERR and logs which limit it could not set."""
    with service(activated) as name, captured_syslog() as syslog:
        prefix = [*syslog.prefix, "prlimit", "--fsize=32768", "setpriv",
                  "--bounding-set=-sys_resource"]
        run = finish(spawn_pamtester(name, prefix=prefix))
        assert run.code != 0 and PASSWORD_PROMPT not in run.output, run.output
        assert failure_line(PAM_CODES["PAM_AUTH_ERR"]) in run.output, run.output
        logged = syslog.messages()
    assert f"pam_accounts({name}:auth): {refusal('RLIMIT_FSIZE', 'unlimited')}" in logged, logged
    assert failures(activated) == 0
