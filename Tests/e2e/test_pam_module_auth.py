"""pam_accounts.so's auth stage with the real program as its helper, through Debian's pamtester
on a pseudo-terminal: right, wrong, unknown, locked, disabled and expired accounts, the second
factor as its own question (a TOTP code, a wrong one, a replayed one, a recovery code used
twice), and the password an earlier module read (use_first_pass, try_first_pass)."""

import pyotp
import pytest

from conftest import BOB, BOB_PASSWORD, PASSWORD, USERNAME, WRONG_PASSWORD
from pammodule import PAM_CODES, failure_line, pamtester, scratch_service, succeeded
from pamstack import CODE_PROMPT, ITEMS, PASSWORD_PROMPT, events, lines, service, where
from secondfactor import enabled

pytestmark = pytest.mark.front_end

AUTH_ERR = failure_line(PAM_CODES["PAM_AUTH_ERR"])


def auth(name, *answers, user=USERNAME, operations=("authenticate",)):
    return pamtester(name, user=user, operations=operations, items=ITEMS,
                     answers=[(PASSWORD_PROMPT, answers[0]),
                              *((CODE_PROMPT, code) for code in answers[1:])])


def test_right_password_authenticates_and_is_recorded_with_where_it_came_from(activated):
    with service(activated, account=()) as name:
        run = auth(name, PASSWORD, operations=("authenticate", "acct_mgmt"))
    assert succeeded(run), run
    assert succeeded(run, "acct_mgmt"), run
    assert events(activated)[-1] == ("login_success", USERNAME, f"password; {where(name)}")


def test_wrong_password_and_unknown_name_answer_alike_and_are_counted(activated):
    with service(activated) as name:
        wrong = auth(name, WRONG_PASSWORD)
        unknown = auth(name, PASSWORD, user="mallory")
    for run in (wrong, unknown):
        assert run.code == 1 and AUTH_ERR in run.output, run
        assert run.output.count(PASSWORD_PROMPT) == 1, run
    assert activated.account(USERNAME)["failures"] == 1
    assert events(activated)[-2:] == [
        ("login_failure", USERNAME, f"invalid user name or password; {where(name)}"),
        ("login_failure", "mallory", f"invalid user name or password; {where(name)}")]


def test_a_locked_name_is_refused_with_maxtries_and_the_lock_sentence(activated):
    with service(activated) as name:
        for _ in range(5):
            assert auth(name, WRONG_PASSWORD).code == 1
        run = auth(name, PASSWORD)
    assert failure_line(PAM_CODES["PAM_MAXTRIES"]) in run.output, run
    assert "Too many failed attempts!" in run.output, run
    assert events(activated)[-1][0] == "login_failure"


def test_a_disabled_account_is_refused_and_its_account_stage_says_expired(activated):
    activated.add_user()
    assert activated.run("user", "disable", BOB).code == 0
    with service(activated, account=()) as name:
        run = auth(name, BOB_PASSWORD, user=BOB)
        stage = pamtester(name, user=BOB, operations=("acct_mgmt",))
    assert run.code == 1 and AUTH_ERR in run.output, run
    assert events(activated)[-2] == ("login_failure", BOB, f"account disabled; {where(name)}")
    assert events(activated)[-1][:2] == ("access_refused", BOB)
    assert failure_line(PAM_CODES["PAM_ACCT_EXPIRED"]) in stage.output, stage
    assert "Your account has expired or been disabled" in stage.output, stage


def test_an_expired_account_is_refused_as_a_disabled_one(activated):
    activated.add_user()
    assert activated.run("user", "edit", BOB, "--expires", "2020-01-01").code == 0
    with service(activated, account=()) as name:
        run = auth(name, BOB_PASSWORD, user=BOB)
        stage = pamtester(name, user=BOB, operations=("acct_mgmt",))
    assert run.code == 1 and AUTH_ERR in run.output, run
    assert events(activated)[-2] == ("login_failure", BOB, f"account expired; {where(name)}")
    assert events(activated)[-1][:2] == ("access_refused", BOB)
    assert failure_line(PAM_CODES["PAM_ACCT_EXPIRED"]) in stage.output, stage


def test_the_code_is_its_own_question_and_a_replayed_one_is_refused(activated):
    enrollment = enabled(activated)
    with service(activated) as name:
        code = pyotp.TOTP(enrollment.key).now()
        right = auth(name, PASSWORD, code)
        replayed = auth(name, PASSWORD, code)
        wrong = auth(name, PASSWORD, "000000" if code != "000000" else "111111")
    assert succeeded(right), right
    assert right.output.index(PASSWORD_PROMPT) < right.output.index(CODE_PROMPT)
    for run in (replayed, wrong):
        assert run.code == 1 and AUTH_ERR in run.output, run
    details = [detail.split(";")[0] for kind, _, detail in events(activated)[-3:]]
    assert details == ["password and TOTP code", "verification code replayed",
                       "wrong verification code"]
    assert activated.account(USERNAME)["failures"] == 2


def test_a_wrong_password_is_never_asked_for_a_code(activated):
    enabled(activated)
    with service(activated) as name:
        run = auth(name, WRONG_PASSWORD)
    assert run.code == 1 and CODE_PROMPT not in run.output, run


def test_a_recovery_code_works_once_and_says_how_many_are_left(activated):
    enrollment = enabled(activated)
    recovery = enrollment.codes[0]
    with service(activated) as name:
        first = auth(name, PASSWORD, recovery)
        again = auth(name, PASSWORD, recovery)
    assert succeeded(first), first
    assert f"Recovery code accepted; {len(enrollment.codes) - 1} left." in first.output, first
    assert again.code == 1 and AUTH_ERR in again.output, again
    assert events(activated)[-1] == (
        "login_failure", USERNAME, f"wrong verification code; {where(name)}")


def test_use_first_pass_takes_the_password_pam_unix_read(activated):
    stack = ["auth optional pam_unix.so", *lines(activated, auth=("use_first_pass",))]
    with scratch_service(stack) as name:
        right = auth(name, PASSWORD)
        wrong = auth(name, WRONG_PASSWORD)
    assert succeeded(right), right
    assert right.output.count(PASSWORD_PROMPT) == 1, right
    assert wrong.code == 1 and wrong.output.count(PASSWORD_PROMPT) == 1, wrong


def test_try_first_pass_asks_again_when_the_stacked_password_is_wrong(activated):
    stack = ["auth optional pam_unix.so", *lines(activated, auth=("try_first_pass",))]
    with scratch_service(stack) as name:
        run = pamtester(name, items=ITEMS, answers=[(PASSWORD_PROMPT, WRONG_PASSWORD),
                                                    (PASSWORD_PROMPT, PASSWORD)])
    assert succeeded(run), run
    assert activated.account(USERNAME)["failures"] == 0  # the success cleared the count
    assert [kind for kind, _, _ in events(activated)[-2:]] == ["login_failure", "login_success"]
