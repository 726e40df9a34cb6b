"""The helper process pam_accounts.so starts, seen from inside (a fake helper that records
what it got) and from the host (pamtester's fds and children in /proc): only the PAM items in
its environment, the socket on fds 0 and 1 and nothing else open, default signals, the
caller's uid; its clock stopped while the person types; no zombie and no fd left behind, also
when the host reaps children itself."""

import os
import re
import signal
import time

import pytest

from pammodule import (
    PAM_CODES, build_module, children, failure_line, fake_helper, finish, module_line,
    open_fds, pamtester, scratch_service, spawn_pamtester, succeeded, wait_for_file)

# The module is C and the helper a fake: no store is involved, so these run once.
pytestmark = pytest.mark.front_end

RHOST = "evil.example\nPAM_USER=root"  # an item may hold a newline: still one variable


@pytest.fixture(scope="module")
def helper(tmp_path_factory):
    """The fake helper's path (each test writes its body there) and the module built for it."""
    path = tmp_path_factory.mktemp("helper") / "accounts"
    fake_helper(path, "send('RESULT system_err')")
    return path, build_module(path)


INSPECT = """
import stat
environ = open('/proc/self/environ', 'rb').read().split(b'\\0')[:-1]
cmdline = open('/proc/self/cmdline', 'rb').read().split(b'\\0')[:-1]
status = dict(line.split(':\\t', 1) for line in open('/proc/self/status').read().splitlines()
              if ':\\t' in line)
def open_fd(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False
socket0, socket1 = os.fstat(0), os.fstat(1)
record({record!r}, dict(
    environ=[entry.decode() for entry in environ], argv=[a.decode() for a in cmdline[2:]],
    fds=[fd for fd in range(4096) if open_fd(fd)],
    same_socket=stat.S_ISSOCK(socket0.st_mode) and socket0.st_ino == socket1.st_ino,
    stderr=os.readlink('/proc/self/fd/2'), uid=os.getuid(), euid=os.geteuid(),
    blocked=int(status['SigBlk'], 16), ignored=int(status['SigIgn'], 16)))
send('RESULT success')"""


def test_what_the_helper_gets(helper, tmp_path):
    """The helper's environment is PAM_USER, PAM_SERVICE, PAM_RHOST and PAM_TTY from the items
    (none of pamtester's variables, none of PAM's environment list); its arguments are the
    stage's; fds 0 and 1 are one socket, 2 is /dev/null, nothing else is open (not even an fd
    the host left inheritable); no signal is blocked or ignored (the host blocked and ignored
    some); its uid is the caller's."""
    path, module = helper
    fake_helper(path, INSPECT.format(record=str(tmp_path / "got")))
    inherited = []

    def host_state():
        fd = os.open("/dev/null", os.O_RDONLY)
        os.set_inheritable(fd, True)
        inherited.append(fd)
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGUSR1})
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    with scratch_service([module_line("auth", module, "key_file=/etc/accounts.key")]) as service:
        child = spawn_pamtester(service, items={"rhost": RHOST, "tty": "pts/9"},
                                environment={"ACCOUNTS_DATABASE": "/tmp/other.sqlite3",
                                             "HOME": "/tmp"},
                                env={"OPENSSL_CONF": "/tmp/evil.cnf",
                                     "PAM_USER": "mallory", "PGHOST": "evil.example"},
                                preexec_fn=host_state)
        run = finish(child)
        got = wait_for_file(tmp_path / "got")
    assert succeeded(run), run
    assert sorted(got["environ"]) == sorted([
        "PAM_USER=alice", f"PAM_SERVICE={service}", f"PAM_RHOST={RHOST}", "PAM_TTY=pts/9"])
    assert got["argv"] == ["pam-helper", "auth", "--database",
                           "/var/lib/accounts-test/accounts.sqlite3", "--key-file",
                           "/etc/accounts.key", "--time-limit", "10"]
    assert got["fds"] == [0, 1, 2] and got["same_socket"] and got["stderr"] == "/dev/null"
    assert (got["uid"], got["euid"]) == (os.getuid(), os.geteuid())
    assert got["blocked"] == 0, hex(got["blocked"])
    for number in (signal.SIGINT, signal.SIGHUP):
        assert not got["ignored"] & (1 << (number - 1)), hex(got["ignored"])


def test_only_items_that_are_set(helper, tmp_path):
    """Without rhost and tty items, only PAM_USER and PAM_SERVICE are passed."""
    path, module = helper
    fake_helper(path, INSPECT.format(record=str(tmp_path / "got")))
    with scratch_service([module_line("auth", module)]) as service:
        run = pamtester(service)
    assert succeeded(run)
    assert sorted(wait_for_file(tmp_path / "got")["environ"]) == \
        sorted(["PAM_USER=alice", f"PAM_SERVICE={service}"])


def test_clock_stops_while_the_person_types(helper, tmp_path):
    """timeout=2 is the helper's own time: a person who takes 3 seconds at each of two
    questions is not cut off (the typist waits here: that wait is the point of the test, and
    the 2 seconds leave a loaded machine room for the fake helper's own start)."""
    path, module = helper
    fake_helper(path, f"""
record({str(tmp_path / 'got')!r}, [ask('SECRET Verification code: '), ask('TEXT Again: ')])
send('RESULT success')""")
    with scratch_service([module_line("auth", module, "timeout=2")]) as service:
        child = spawn_pamtester(service)
        child.expect_exact("Verification code: ")
        time.sleep(3)
        child.sendline("492039")
        child.expect_exact("Again: ")
        time.sleep(3)
        child.sendline("492039")
        run = finish(child)
    assert succeeded(run), run
    assert wait_for_file(tmp_path / "got") == ["OK 492039", "OK 492039"]


def normalized(fds: dict) -> dict:
    """Fds with the inode numbers of sockets and pipes dropped (each run has new ones)."""
    return {fd: re.sub(r"^(socket|pipe):\[\d+\]$", r"\1", target) for fd, target in fds.items()}


def test_no_zombie_and_no_fd_left(helper, tmp_path):
    """Across a run of failures (a missing helper, garbage, a helper that kills itself, one
    stuck past its time, one that exits without a verdict) and successes in every group,
    pamtester's fds at the second prompt are those at the first, and its only child is the
    helper asking (alive): every helper before was reaped, every socket and pidfd closed."""
    path, module = helper
    missing = build_module(tmp_path / "no-such-accounts")
    fake_helper(path, """
import signal, time
kind = ARGV[ARGV.index('--database') + 1].rsplit('/', 1)[1]
if kind == 'ask':
    ask('TEXT Code: ')
    send('RESULT success')
elif kind == 'garbage':
    send('GARBAGE')
elif kind == 'killed':
    os.kill(os.getpid(), signal.SIGKILL)
elif kind == 'stuck':
    time.sleep(3600)
elif kind == 'ok':
    send('RESULT success')""")
    lines = [module_line("auth", missing, control="optional"),
             module_line("auth", module, control="optional", database="/db/garbage"),
             module_line("auth", module, control="optional", database="/db/killed"),
             module_line("auth", module, database="/db/ask"),
             module_line("account", module, "timeout=1", control="optional",
                         database="/db/stuck"),
             module_line("account", module, database="/db/ok"),
             module_line("session", module, control="optional", database="/db/no-result"),
             module_line("session", module, database="/db/ok")]
    with scratch_service(lines) as service:
        child = spawn_pamtester(service, operations=(
            "authenticate", "acct_mgmt", "open_session", "close_session", "authenticate"))
        snapshots = []
        for _ in range(2):
            child.expect_exact("Code: ")
            snapshots.append((normalized(open_fds(child.pid)), children(child.pid)))
            child.sendline("123456")
        run = finish(child)
    assert run.code == 0 and succeeded(run, "close_session"), run
    (first_fds, first_children), (second_fds, second_children) = snapshots
    assert first_fds == second_fds
    assert list(first_fds.values()).count("socket") == 1, first_fds
    assert [state for _, state in first_children] != ["Z"] and len(first_children) == 1
    assert [state for _, state in second_children] != ["Z"] and len(second_children) == 1


@pytest.mark.parametrize("body, verdict", [
    ("send('RESULT success')", "PAM_SUCCESS"),
    ("send('RESULT perm_denied')", "PAM_PERM_DENIED"),
    ("send('GARBAGE')", "PAM_SYSTEM_ERR"),
    ("pass", "PAM_SYSTEM_ERR"),
])
def test_host_that_reaps_children_itself(helper, body, verdict):
    """A host whose children are reaped for it (SIGCHLD ignored: waitpid gets ECHILD): the
    verdict is judged by the protocol alone."""
    path, module = helper
    fake_helper(path, body)

    def reaping_host():
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)

    with scratch_service([module_line("account", module)]) as service:
        run = finish(spawn_pamtester(service, operations=("acct_mgmt",),
                                     preexec_fn=reaping_host))
    if verdict == "PAM_SUCCESS":
        assert succeeded(run, "acct_mgmt"), run
    else:
        assert run.code == 1 and failure_line(PAM_CODES[verdict]) in run.output, run
