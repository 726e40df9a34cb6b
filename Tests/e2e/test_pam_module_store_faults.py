"""pam_accounts.so when the store or the real helper fails: a database held busy past the
module's timeout (killed, PAM_AUTH_ERR) and past the helper's own busy wait (PAM_AUTHINFO_UNAVAIL),
a PostgreSQL server that cannot be reached, and the helper SIGKILLed while it waits for the
code; each answers with its documented code and leaves nothing half-written."""

import os
import signal

import pyotp
import pytest

from conftest import PASSWORD, USERNAME
from pammodule import (PAM_CODES, children, failure_line, finish, pamtester, scratch_service,
                       spawn_pamtester, succeeded)
from pamstack import CODE_PROMPT, PASSWORD_PROMPT, events, module, service
from secondfactor import enabled

pytestmark = pytest.mark.front_end


def snapshot(device):
    return events(device), device.account(USERNAME)


def test_a_store_busy_past_the_timeout_gives_auth_err_and_writes_nothing(activated):
    before = snapshot(activated)
    with service(activated, auth=(), timeout=1) as name, activated.write_lock():
        run = pamtester(name, answers=[(PASSWORD_PROMPT, PASSWORD)])
    assert run.code == 1 and failure_line(PAM_CODES["PAM_AUTH_ERR"]) in run.output, run
    assert snapshot(activated) == before


def test_a_store_busy_past_the_helpers_wait_gives_authinfo_unavail(activated):
    before = snapshot(activated)
    with service(activated, auth=(), timeout=60) as name, activated.write_lock():
        run = pamtester(name, answers=[(PASSWORD_PROMPT, PASSWORD)])
    assert failure_line(PAM_CODES["PAM_AUTHINFO_UNAVAIL"]) in run.output, run
    assert snapshot(activated) == before


def test_a_postgresql_server_that_cannot_be_reached_gives_authinfo_unavail(tmp_path):
    gone = f"postgresql:///accounts?host={tmp_path}/no-server-here"
    lines = [f"auth required {module()} database={gone} timeout=60"]
    with scratch_service(lines) as name:
        run = pamtester(name)
    # The store is opened first: nobody types a password that cannot be checked.
    assert failure_line(PAM_CODES["PAM_AUTHINFO_UNAVAIL"]) in run.output, run
    assert PASSWORD_PROMPT not in run.output, run


def test_a_helper_killed_at_the_code_question_records_no_login(activated):
    enrollment = enabled(activated)
    before = snapshot(activated)
    with service(activated, auth=()) as name:
        child = spawn_pamtester(name)
        child.expect_exact(PASSWORD_PROMPT)
        child.sendline(PASSWORD)
        child.expect_exact(CODE_PROMPT)
        # The helper is waiting for the module's reply: killed there, mid-check.
        helpers = [pid for pid, _ in children(child.pid)]
        assert len(helpers) == 1, helpers
        os.kill(helpers[0], signal.SIGKILL)
        code = pyotp.TOTP(enrollment.key).now()
        child.sendline(code)
        run = finish(child)
        assert run.code == 1 and failure_line(PAM_CODES["PAM_AUTH_ERR"]) in run.output, run
        assert snapshot(activated) == before
        # The code was never accepted: it still works.
        again = pamtester(name, answers=[(PASSWORD_PROMPT, PASSWORD), (CODE_PROMPT, code)])
    assert succeeded(again), again
