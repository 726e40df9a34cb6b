"""pam_accounts.so's line protocol, through the real PAM stack (pamtester on a pseudo-terminal,
a scratch service in /etc/pam.d) and a fake helper in Python that speaks it: the conversation's
questions relayed, every RESULT name mapped to its PAM code, the stacked token (use_first_pass,
try_first_pass), the password stage's flags, and answers no password can be."""

import pytest

from pammodule import (
    PAM_CODES, build_module, failure_line, fake_helper, finish, module_line, pamtester,
    scratch_service, spawn_pamtester, succeeded, wait_for_file)

# The module is C and the helper a fake: no store is involved, so these run once.
pytestmark = pytest.mark.front_end

RESULT_NAMES = {
    "success": "PAM_SUCCESS", "auth_err": "PAM_AUTH_ERR", "maxtries": "PAM_MAXTRIES",
    "user_unknown": "PAM_USER_UNKNOWN", "acct_expired": "PAM_ACCT_EXPIRED",
    "new_authtok_reqd": "PAM_NEW_AUTHTOK_REQD", "perm_denied": "PAM_PERM_DENIED",
    "authinfo_unavail": "PAM_AUTHINFO_UNAVAIL", "authtok_err": "PAM_AUTHTOK_ERR",
    "authtok_recovery_err": "PAM_AUTHTOK_RECOVERY_ERR",
    "cred_insufficient": "PAM_CRED_INSUFFICIENT", "system_err": "PAM_SYSTEM_ERR",
}


@pytest.fixture(scope="module")
def helper(tmp_path_factory):
    """The fake helper's path (each test writes its body there) and the module built for it."""
    path = tmp_path_factory.mktemp("helper") / "accounts"
    fake_helper(path, "send('RESULT system_err')")
    return path, build_module(path)


def test_conversation_relayed(helper, tmp_path):
    """AUTHTOK, SECRET and INFO reach the person as the prompts and text the helper wrote; the
    answers come back as OK lines; RESULT success authenticates."""
    path, module = helper
    fake_helper(path, f"""
got = [ask('AUTHTOK Password: '), ask('SECRET Verification code: ')]
send('INFO Welcome back alice!')
send('ERROR Your password expires in 3 days.')
record({str(tmp_path / 'got')!r}, got)
send('RESULT success')""")
    with scratch_service([module_line("auth", module)]) as service:
        run = pamtester(service, answers=[("Password: ", "correct horse"),
                                          ("Verification code: ", "492039")])
    assert succeeded(run), run
    assert "Welcome back alice!" in run.output and "Your password expires in 3 days." in run.output
    assert wait_for_file(tmp_path / "got") == ["OK correct horse", "OK 492039"]


def test_text_prompt_echoes(helper, tmp_path):
    """TEXT asks with echo on: what is typed shows on the terminal and comes back as OK."""
    path, module = helper
    fake_helper(path, f"""
record({str(tmp_path / 'got')!r}, ask('TEXT Recovery e-mail: '))
send('RESULT success')""")
    with scratch_service([module_line("auth", module)]) as service:
        run = pamtester(service, answers=[("Recovery e-mail: ", "alice@example.org")])
    assert succeeded(run) and "alice@example.org" in run.output
    assert wait_for_file(tmp_path / "got") == "OK alice@example.org"


@pytest.mark.parametrize("name", sorted(RESULT_NAMES))
def test_result_names(helper, name):
    """Each RESULT name gives its PAM code: pamtester reports that code's own message."""
    path, module = helper
    fake_helper(path, f"send('RESULT {name}')")
    with scratch_service([module_line("account", module)]) as service:
        run = pamtester(service, operations=("acct_mgmt",))
    code = PAM_CODES[RESULT_NAMES[name]]
    if code == 0:
        assert succeeded(run, "acct_mgmt"), run
    else:
        assert run.code == 1 and failure_line(code) in run.output, (name, run)


def stacking_helper(path, tmp_path):
    """A helper whose two instances tell themselves apart by their database: `first` asks
    AUTHTOK and records the reply; `second` asks AUTHTOK, and asks it again after a STACKED
    token (as the real helper does after a wrong stacked token), recording both replies."""
    return fake_helper(path, f"""
folder = {str(tmp_path)!r}
instance = ARGV[ARGV.index('--database') + 1].rsplit('/', 1)[1]
replies = [ask('AUTHTOK Password: ')]
if instance == 'second' and replies[0].startswith('STACKED '):
    replies.append(ask('AUTHTOK Password again: '))
record(folder + '/' + instance, replies)
send('RESULT success')""")


def test_use_first_pass_gets_the_stacked_token(helper, tmp_path):
    """The first instance's typed password is stored as PAM_AUTHTOK; a second instance with
    use_first_pass receives it as STACKED without a prompt (and, asked again, STACKED again)."""
    path, module = helper
    stacking_helper(path, tmp_path)
    lines = [module_line("auth", module, database="/db/first"),
             module_line("auth", module, "use_first_pass", database="/db/second")]
    with scratch_service(lines) as service:
        run = pamtester(service, answers=[("Password: ", "typed once")])
    assert succeeded(run), run
    assert "Password again: " not in run.output
    assert wait_for_file(tmp_path / "first") == ["OK typed once"]
    assert wait_for_file(tmp_path / "second") == ["STACKED typed once", "STACKED typed once"]


def test_use_first_pass_without_a_token_fails(helper, tmp_path):
    """use_first_pass with no PAM_AUTHTOK on the stack: FAIL, and no prompt."""
    path, module = helper
    stacking_helper(path, tmp_path)
    with scratch_service([module_line("auth", module, "use_first_pass",
                                      database="/db/second")]) as service:
        run = pamtester(service)
    assert succeeded(run) and "Password" not in run.output.split("authenticate", 1)[1]
    assert wait_for_file(tmp_path / "second") == ["FAIL"]


def test_try_first_pass_asks_after_a_wrong_stacked_token(helper, tmp_path):
    """try_first_pass: the first AUTHTOK gets the stacked token; the second (the helper found
    it wrong) asks the person, and the answer replaces PAM_AUTHTOK."""
    path, module = helper
    stacking_helper(path, tmp_path)
    lines = [module_line("auth", module, database="/db/first"),
             module_line("auth", module, "try_first_pass", database="/db/second"),
             module_line("auth", module, "use_first_pass", database="/db/third")]
    with scratch_service(lines) as service:
        run = pamtester(service, answers=[("Password: ", "stale one"),
                                          ("Password again: ", "right one")])
    assert succeeded(run), run
    assert wait_for_file(tmp_path / "second") == ["STACKED stale one", "OK right one"]
    assert wait_for_file(tmp_path / "third") == ["STACKED right one"]


def test_try_first_pass_asks_when_nothing_is_stacked(helper, tmp_path):
    """try_first_pass with no stacked token asks at once."""
    path, module = helper
    stacking_helper(path, tmp_path)
    with scratch_service([module_line("auth", module, "try_first_pass",
                                      database="/db/first")]) as service:
        run = pamtester(service, answers=[("Password: ", "typed")])
    assert succeeded(run)
    assert wait_for_file(tmp_path / "first") == ["OK typed"]


@pytest.mark.parametrize("flags, expired_only", [("", False),
                                                 ("(PAM_CHANGE_EXPIRED_AUTHTOK)", True)])
def test_password_stage(helper, tmp_path, flags, expired_only):
    """chauthtok runs the helper once (the update, not the preliminary check), as stage
    `password`, with --expired-only when PAM_CHANGE_EXPIRED_AUTHTOK is set; OLDAUTHTOK and
    AUTHTOK are asked and come back."""
    path, module = helper
    fake_helper(path, f"""
import os
if os.path.exists({str(tmp_path / 'got')!r}):
    send('RESULT system_err')
else:
    replies = [ask('OLDAUTHTOK Current password: '), ask('AUTHTOK New password: ')]
    record({str(tmp_path / 'got')!r}, dict(argv=ARGV, replies=replies))
    send('RESULT success')""")
    with scratch_service([module_line("password", module, "key_file=/etc/accounts.key")]) \
            as service:
        run = pamtester(service, operations=("chauthtok" + flags,),
                        answers=[("Current password: ", "old one"),
                                 ("New password: ", "new one")])
    assert succeeded(run, "chauthtok"), run
    got = wait_for_file(tmp_path / "got")
    assert got["replies"] == ["OK old one", "OK new one"]
    assert got["argv"] == ["pam-helper", "password", "--database", "/var/lib/accounts-test/"
                           "accounts.sqlite3", "--key-file", "/etc/accounts.key",
                           "--time-limit", "10"] + (["--expired-only"] if expired_only else [])


def test_account_and_session_stages(helper, tmp_path):
    """acct_mgmt runs stage `account` with --allow-groups; open_session and close_session run
    `open-session` and `close-session` (no --allow-groups there); with no auth in the handle,
    open-session says the session is a login of its own (--session-login pam-session)."""
    path, module = helper
    fake_helper(path, f"""
stage = ARGV[1]
record({str(tmp_path)!r} + '/' + stage, ARGV)
send('RESULT success')""")
    lines = [module_line(group, module, "allow_groups=staff,wheel", "timeout=30")
             for group in ("account", "session")]
    with scratch_service(lines) as service:
        run = pamtester(service, operations=("acct_mgmt", "open_session", "close_session"))
    assert run.code == 0 and succeeded(run, "close_session"), run
    tail = ["--database", "/var/lib/accounts-test/accounts.sqlite3", "--time-limit", "30"]
    assert wait_for_file(tmp_path / "account") == \
        ["pam-helper", "account", *tail, "--allow-groups", "staff,wheel"]
    # No auth ran in this handle: the session is a login of its own.
    assert wait_for_file(tmp_path / "open-session") == [
        "pam-helper", "open-session", *tail, "--session-login", "pam-session"]
    assert wait_for_file(tmp_path / "close-session") == ["pam-helper", "close-session", *tail]


@pytest.mark.parametrize("typed, shown", [("\x16\n", "newline"), ("\x16\r", "carriage return")])
def test_answer_with_a_line_break_fails(helper, tmp_path, typed, shown):
    """An answer holding a newline or a carriage return (typed after Ctrl-V, the terminal's
    literal-next) is answered FAIL, and never stored as PAM_AUTHTOK."""
    path, module = helper
    stacking_helper(path, tmp_path)
    lines = [module_line("auth", module, database="/db/first"),
             module_line("auth", module, "use_first_pass", database="/db/second")]
    with scratch_service(lines) as service:
        child = spawn_pamtester(service)
        child.expect_exact("Password: ")
        child.send("before" + typed + "after\n")
        run = finish(child)
    assert succeeded(run), (shown, run)
    assert wait_for_file(tmp_path / "first") == ["FAIL"]
    assert wait_for_file(tmp_path / "second") == ["FAIL"]


def test_silent_hides_info_only(helper):
    """With PAM_SILENT, INFO is not shown; ERROR still is."""
    path, module = helper
    fake_helper(path, "send('INFO quiet please'); send('ERROR said anyway'); "
                      "send('RESULT success')")
    with scratch_service([module_line("auth", module)]) as service:
        run = pamtester(service, operations=("authenticate(PAM_SILENT)",))
    assert succeeded(run) and "said anyway" in run.output and "quiet please" not in run.output


def test_log_line_needs_no_reply(helper, tmp_path):
    """LOG goes to syslog with no reply: the helper's next request is answered as usual."""
    path, module = helper
    fake_helper(path, f"""
send('LOG accounts: a note for the administrator')
record({str(tmp_path / 'got')!r}, ask('SECRET Code: '))
send('RESULT success')""")
    with scratch_service([module_line("auth", module)]) as service:
        run = pamtester(service, answers=[("Code: ", "123456")])
    assert succeeded(run)
    assert wait_for_file(tmp_path / "got") == "OK 123456"
