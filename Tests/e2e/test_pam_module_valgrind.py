"""pam_accounts.so under Valgrind (memcheck, full leak check) on every path the other module
tests take: the conversation, each verdict, the stacked token, the stages, refused answers, a
missing, dead, killed, stuck, garbled or chatty helper, a host that reaps its children, an
unusable service line. The module is built with -g, pamtester runs under Valgrind (not the
helper), and no error may have a frame in pam_accounts.so; an invalid read or write, a use of
uninitialised memory or a bad free is an error wherever it is."""

import signal
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field

import pytest

from pammodule import (
    PAM_CODES, build_module, failure_line, fake_helper, finish, module_line,
    scratch_service, spawn_pamtester, succeeded, wait_for_exited_helper)

# The module is C and the helper a fake: no store is involved, so these run once.
pytestmark = pytest.mark.front_end

ANYWHERE = {"InvalidRead", "InvalidWrite", "InvalidFree", "MismatchedFree", "UninitCondition",
            "UninitValue", "InvalidJump", "Overlap"}


@dataclass
class Path:
    body: str  # the fake helper's body
    verdict: str = "PAM_SUCCESS"
    group: str = "auth"
    options: tuple = ()
    operations: tuple = ("authenticate",)
    answers: tuple = ()
    second: tuple = ()  # options of a second line of the same group, if any
    gone_before_reply: bool = False
    reaping_host: bool = False
    module_missing: bool = False
    extra: dict = field(default_factory=dict)


ASK = "import sys, signal, time\nask('AUTHTOK Password: ')\n"
PW = (("Password: ", "correct horse"),)
# The line with database=/db/second asks AUTHTOK twice (the real helper does after a wrong
# stacked token).
SECOND_ASKS_AGAIN = """ask('AUTHTOK Password: ')
if ARGV[ARGV.index('--database') + 1] == '/db/second':
    ask('AUTHTOK Again: ')
send('RESULT success')"""
PATHS = {
    "conversation": Path("ask('AUTHTOK Password: '); ask('SECRET Verification code: '); "
                         "ask('TEXT E-mail: '); send('INFO Welcome'); send('ERROR Expiring'); "
                         "send('LOG a note'); send('RESULT success')",
                         answers=PW + (("Verification code: ", "492039"),
                                       ("E-mail: ", "alice@example.org"))),
    "use_first_pass": Path(SECOND_ASKS_AGAIN, answers=PW, second=("use_first_pass",)),
    "try_first_pass": Path(SECOND_ASKS_AGAIN, answers=PW + (("Again: ", "right one"),),
                           second=("try_first_pass",)),
    "use_first_pass, nothing stacked": Path("ask('AUTHTOK Password: '); send('RESULT auth_err')",
                                            verdict="PAM_AUTH_ERR", options=("use_first_pass",)),
    "password stage": Path("ask('OLDAUTHTOK Current: '); ask('AUTHTOK New: '); "
                           "send('RESULT success')", group="password",
                           operations=("chauthtok(PAM_CHANGE_EXPIRED_AUTHTOK)",),
                           answers=(("Current: ", "old"), ("New: ", "new"))),
    "account stage": Path("send('RESULT success')", group="account",
                          options=("allow_groups=staff,wheel", "key_file=/k"),
                          operations=("acct_mgmt",)),
    "session stages": Path("send('RESULT success')", group="session",
                           operations=("open_session", "close_session")),
    "answer with a newline": Path("ask('SECRET Code: '); send('RESULT success')",
                                  answers=(("Code: ", "12\x16\n34"),)),
    "items": Path("send('RESULT success')", extra={"rhost": "a\nb", "tty": "pts/1"}),
    "missing helper": Path("", verdict="PAM_AUTH_ERR", module_missing=True),
    "exits 0 without RESULT": Path(ASK, verdict="PAM_AUTH_ERR", answers=PW),
    "exits 1 after RESULT": Path(ASK + "send('RESULT success'); sys.exit(1)",
                                 verdict="PAM_AUTH_ERR", answers=PW),
    "killed mid-check": Path(ASK + "os.kill(os.getpid(), signal.SIGKILL)",
                             verdict="PAM_AUTH_ERR", answers=PW),
    "killed after RESULT": Path(ASK + "send('RESULT success'); "
                                "os.kill(os.getpid(), signal.SIGKILL)",
                                verdict="PAM_AUTH_ERR", answers=PW),
    "never answers": Path(ASK + "time.sleep(3600)", verdict="PAM_AUTH_ERR",
                          options=("timeout=1",), answers=PW),
    "closes, then never exits": Path(ASK + "send('RESULT success'); os.close(0); os.close(1); "
                                     "time.sleep(3600)", verdict="PAM_AUTH_ERR",
                                     options=("timeout=1",), answers=PW),
    "garbage": Path(ASK + "send('HELLO')", verdict="PAM_AUTH_ERR", answers=PW),
    "a 10,000-byte line": Path(ASK + "send('INFO ' + 'x' * 9995)", verdict="PAM_AUTH_ERR",
                               answers=PW),
    "a NUL byte": Path(ASK + "send(b'INFO a\\0b\\n')", verdict="PAM_AUTH_ERR", answers=PW),
    "half a line": Path(ASK + "send(b'RESULT success')", verdict="PAM_AUTH_ERR", answers=PW),
    "writes after RESULT": Path(ASK + "send('RESULT success'); send('INFO more')",
                                verdict="PAM_AUTH_ERR", answers=PW),
    "unknown verdict": Path(ASK + "send('RESULT fine')", verdict="PAM_AUTH_ERR", answers=PW),
    "gone before the reply": Path("send('SECRET Code: ')", verdict="PAM_AUTH_ERR",
                                  gone_before_reply=True),
    "host reaps its children": Path("send('RESULT perm_denied')", verdict="PAM_PERM_DENIED",
                                    group="account", operations=("acct_mgmt",),
                                    reaping_host=True),
    "unusable service line": Path("send('RESULT success')", verdict="PAM_SERVICE_ERR",
                                  options=("timeout=0",)),
}
PATHS.update({f"verdict {name}": Path(f"send('RESULT {name}')", verdict=code, group="account",
                                      operations=("acct_mgmt",))
              for name, code in [("auth_err", "PAM_AUTH_ERR"), ("maxtries", "PAM_MAXTRIES"),
                                 ("new_authtok_reqd", "PAM_NEW_AUTHTOK_REQD"),
                                 ("system_err", "PAM_SYSTEM_ERR")]})


@pytest.fixture(scope="module")
def helper(tmp_path_factory):
    """The fake helper's path (each test writes its body there) and the -g module for it."""
    path = tmp_path_factory.mktemp("helper") / "accounts"
    fake_helper(path, "send('RESULT system_err')")
    return path, build_module(path, debug=True)


def valgrind(folder) -> tuple:
    return ("valgrind", "-q", "--leak-check=full", "--errors-for-leak-kinds=definite,indirect",
            "--error-exitcode=99", "--trace-children=no", "--keep-debuginfo=yes",
            "--xml=yes", f"--xml-file={folder}/valgrind.%p.xml")


def errors(folder, pid) -> list:
    """Every error Valgrind wrote, as (kind, what, frames' objects, frames' functions):
    pamtester's (process `pid`), and its child's between fork and exec (that report stops at
    the exec, unfinished). A leak counts in pamtester only: a child whose exec failed ends with
    _exit(127) and frees nothing, by design (free is not async-signal-safe after fork)."""
    found = []
    files = sorted(folder.glob("valgrind.*.xml"))
    assert folder / f"valgrind.{pid}.xml" in files, "Valgrind wrote no report for pamtester"
    for report in files:
        text = report.read_text()
        if "</valgrindoutput>" not in text:
            text += "</valgrindoutput>\n"
        root = ElementTree.fromstring(text)
        for error in root.iter("error"):
            if report.name != f"valgrind.{pid}.xml" and error.findtext("kind").startswith("Leak_"):
                continue
            frames = error.findall("./stack/frame")
            what = error.findtext("what") or error.findtext("./xwhat/text") or ""
            found.append((error.findtext("kind"), what,
                          [frame.findtext("obj") or "" for frame in frames],
                          [frame.findtext("fn") or "" for frame in frames]))
    return found


@pytest.mark.parametrize("name", sorted(PATHS))
def test_no_memory_error(helper, tmp_path, name):
    """This path under Valgrind: the same verdict as without it, and no error of the module's."""
    path, module = helper
    case = PATHS[name]
    fake_helper(path, case.body)
    if case.module_missing:
        module = build_module(tmp_path / "no-such-accounts", debug=True)
    lines = [module_line(case.group, module, *case.options, database="/db/first")]
    if case.second:
        lines.append(module_line(case.group, module, *case.second, database="/db/second"))
    preexec = (lambda: signal.signal(signal.SIGCHLD, signal.SIG_IGN)) if case.reaping_host \
        else None
    with scratch_service(lines) as service:
        child = spawn_pamtester(service, operations=case.operations, items=case.extra,
                                prefix=valgrind(tmp_path), preexec_fn=preexec, timeout=180)
        for prompt, answer in case.answers:
            child.expect_exact(prompt)
            child.send(answer + "\n")
        if case.gone_before_reply:
            child.expect_exact("Code: ")
            wait_for_exited_helper(child.pid)  # pamtester holds its zombie
            child.sendline("123456")
        pid = child.pid
        run = finish(child)
    for kind, what, objects, functions in errors(tmp_path, pid):
        ours = any(obj.endswith("pam_accounts.so") for obj in objects)
        uninitialised = kind == "SyscallParam" and "uninitialised" in what
        assert not (ours or kind in ANYWHERE or uninitialised), (kind, what, functions)
    if case.verdict == "PAM_SUCCESS":
        assert succeeded(run, case.operations[-1].split("(")[0]), run
    else:
        assert failure_line(PAM_CODES[case.verdict]) in run.output, run
