"""pam_accounts.so when its helper fails it: missing, dead, killed, stuck, garbled or too
long, or saying something after its verdict. Each gives the group's failure code (PAM_AUTH_ERR
from auth, PAM_SYSTEM_ERR from the others), one syslog line saying what went wrong, and never
the password typed; a service line the module cannot use gives PAM_SERVICE_ERR."""


import pytest

from pammodule import (
    PAM_CODES, build_module, captured_syslog, failure_line, fake_helper, finish, module_line,
    pamtester, scratch_service, spawn_pamtester, succeeded, wait_for_exited_helper)

# The module is C and the helper a fake: no store is involved, so these run once.
pytestmark = pytest.mark.front_end

SECRET = "s3cret typed by alice"
AUTH_ERR, SYSTEM_ERR = PAM_CODES["PAM_AUTH_ERR"], PAM_CODES["PAM_SYSTEM_ERR"]
SERVICE_ERR = PAM_CODES["PAM_SERVICE_ERR"]

# A helper that breaks the protocol is killed; one that stays after breaking it shows that (one
# that ended on its own first would be reaped with its exit status instead). It waits for a
# signal, not for a time: the module's kill is what ends it.
WAIT_FOR_KILL = "import signal; signal.pause()"
STAY = "; " + WAIT_FOR_KILL

# Each fake helper first asks for the password (typed: SECRET), then fails the module this way;
# what the module logs about it.
FAULTS = {
    "exits 0 without RESULT": ("", "ended without a RESULT; exit status 0"),
    "exits 1 without RESULT": ("sys.exit(1)", "ended without a RESULT; exit status 1"),
    "exits 1 after RESULT": ("send('RESULT success'); sys.exit(1)",
                             "RESULT not honoured; exit status 1"),
    "killed mid-check": ("import signal; os.kill(os.getpid(), signal.SIGKILL)",
                         "ended without a RESULT; killed by signal 9"),
    "killed after RESULT": ("import signal; send('RESULT success'); "
                            "os.kill(os.getpid(), signal.SIGKILL)",
                            "RESULT not honoured; killed by signal 9"),
    "never answers": (WAIT_FOR_KILL,
                      "no verdict within the time limit; killed by signal 9"),
    "closes, then never exits": ("send('RESULT success'); os.close(0); os.close(1)" + STAY,
                                 "RESULT not honoured; still running at the time limit, killed"),
    "garbage": ("send('HELLO there')" + STAY,
                "sent a line that is not a request; killed by signal 9"),
    "lower-case request": ("send('result success')" + STAY,
                           "sent a line that is not a request; killed by signal 9"),
    "unknown verdict": ("send('RESULT fine')" + STAY,
                        "RESULT names no known verdict; killed by signal 9"),
    "a 10,000-byte line": ("send('INFO ' + 'x' * 9995)" + STAY,
                           "sent a line longer than 4096 bytes; killed by signal 9"),
    "a NUL byte": ("send(b'INFO a\\0b\\n')" + STAY, "sent a NUL byte; killed by signal 9"),
    "half a line": ("send(b'RESULT success')", "ended in the middle of a line; exit status 0"),
    "writes after RESULT": ("send('RESULT success'); send('INFO one more thing')",
                            "wrote after its RESULT; "),
    "writes after RESULT, later": ("import time; send('RESULT success'); time.sleep(0.2); "
                                   "send('INFO one more thing')", "wrote after its RESULT; "),
}


@pytest.fixture(scope="module")
def helper(tmp_path_factory):
    """The fake helper's path (each test writes its body there) and the module built for it."""
    path = tmp_path_factory.mktemp("helper") / "accounts"
    fake_helper(path, "send('RESULT system_err')")
    return path, build_module(path)


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_faulty_helper_fails_auth(helper, fault):
    """auth gives PAM_AUTH_ERR (pamtester exits 1 with its message), the helper is reaped, one
    line is logged naming the fault, and the password is nowhere in the log."""
    path, module = helper
    body, logged = FAULTS[fault]
    fake_helper(path, f"import sys\nask('AUTHTOK Password: ')\n{body}")
    with scratch_service([module_line("auth", module, "timeout=1")]) as service, \
            captured_syslog() as log:
        run = pamtester(service, answers=[("Password: ", SECRET)], prefix=log.prefix)
        messages = log.messages()
    assert run.code == 1 and failure_line(AUTH_ERR) in run.output, (fault, run)
    ours = [m for m in messages if m.startswith(f"pam_accounts({service}:auth)")]
    assert len(ours) == 1 and logged in ours[0] and str(path) in ours[0], (fault, messages)
    assert not any(SECRET in m for m in messages)


@pytest.mark.parametrize("operation, group", [("authenticate", "auth"),
                                              ("acct_mgmt", "account"),
                                              ("chauthtok", "password"),
                                              ("open_session", "session"),
                                              ("close_session", "session")])
def test_missing_helper(tmp_path, operation, group):
    """A helper path that does not exist: the exec fails in the child (status 127); auth gives
    PAM_AUTH_ERR, the other groups PAM_SYSTEM_ERR."""
    module = build_module(tmp_path / "no-such-accounts")
    with scratch_service([module_line(group, module)]) as service, captured_syslog() as log:
        run = pamtester(service, operations=(operation,), prefix=log.prefix)
        messages = log.messages()
    code = AUTH_ERR if group == "auth" else SYSTEM_ERR
    assert run.code == 1 and failure_line(code) in run.output, run
    assert any("ended without a RESULT; exit status 127" in m for m in messages), messages


@pytest.mark.parametrize("operation, group", [("acct_mgmt", "account"),
                                              ("chauthtok", "password"),
                                              ("open_session", "session")])
def test_garbage_fails_other_groups_with_system_err(helper, operation, group):
    """Outside auth a broken helper gives PAM_SYSTEM_ERR."""
    path, module = helper
    fake_helper(path, "send('GARBAGE')")
    with scratch_service([module_line(group, module)]) as service:
        run = pamtester(service, operations=(operation,))
    assert run.code == 1 and failure_line(SYSTEM_ERR) in run.output, run


def test_helper_gone_before_the_reply(helper):
    """The helper asks, then exits before the person answers: the reply cannot be written
    (no SIGPIPE kills pamtester: it reports PAM_AUTH_ERR and exits 1)."""
    path, module = helper
    fake_helper(path, "send('SECRET Code: ')")
    with scratch_service([module_line("auth", module)]) as service:
        child = spawn_pamtester(service)
        child.expect_exact("Code: ")
        wait_for_exited_helper(child.pid)  # pamtester holds its zombie
        child.sendline("123456")
        run = finish(child)
    assert run.code == 1 and failure_line(AUTH_ERR) in run.output, run


@pytest.mark.parametrize("options, logged", [
    ((), "database= is required"),
    (("database=relative/accounts.sqlite3",),
     "database= must be an absolute path or a postgresql:// URI"),
    (("database=~/accounts.sqlite3",), "database= must be an absolute path or a postgresql:// URI"),
    (("database=service=accounts",), "database= must be an absolute path or a postgresql:// URI"),
    (("database=/a.sqlite3", "key_file=a.key"), "key_file= must be an absolute path"),
    (("database=/a.sqlite3", "timeout=0"), "timeout= must be a whole number"),
    (("database=/a.sqlite3", "timeout=301"), "timeout= must be a whole number"),
    (("database=/a.sqlite3", "timeout=1s"), "timeout= must be a whole number"),
    (("database=/a.sqlite3", "timeout="), "timeout= must be a whole number"),
])
def test_unusable_service_line(helper, tmp_path, options, logged):
    """A service line the module cannot use gives PAM_SERVICE_ERR and a syslog line; the
    helper is not run."""
    path, module = helper
    fake_helper(path, f"open({str(tmp_path / 'ran')!r}, 'w').close(); send('RESULT success')")
    line = " ".join(["auth required", str(module), *options])
    with scratch_service([line]) as service, captured_syslog() as log:
        run = pamtester(service, prefix=log.prefix)
        messages = log.messages()
    assert run.code == 1 and failure_line(SERVICE_ERR) in run.output, run
    assert any(logged in m for m in messages), messages
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize("database", ["/var/lib/accounts/accounts.sqlite3",
                                      "postgresql://accounts@db.example.org/accounts",
                                      "postgres:///accounts"])
def test_unknown_option_is_logged_and_ignored(helper, tmp_path, database):
    """An unknown option is logged and ignored (as pam_unix does); absolute paths and both URI
    schemes are taken."""
    path, module = helper
    fake_helper(path, "send('RESULT success')")
    line = f"auth required {module} database={database} colour=blue"
    with scratch_service([line]) as service, captured_syslog() as log:
        run = pamtester(service, prefix=log.prefix)
        messages = log.messages()
    assert succeeded(run), run
    assert any("unknown option: colour=blue" in m for m in messages), messages
