"""`2fa enable --begin` and `--confirm` in front of the store: the QR code at a terminal (read
back by `zbarimg`) and never on a pipe or with `--qr none`, the prompts at a terminal, the
arguments that cannot go together, and PAM (`pam-auth` and `pam_accounts.so`) asking no code for
a pending secret. The store's side runs on every backend in test_second_factor_steps.py."""

import pyotp
import pytest

from conftest import PASSWORD, USERNAME, answer, answer_secret, finish, screen
from pammodule import pamtester, succeeded
from pamhelp import pam_auth, silent
from pamstack import CODE_PROMPT, ITEMS, PASSWORD_PROMPT, service
from secondfactor import (ON, PENDING_KEPT, SCAN, begin, expected_uri, oath, pending_rows,
                          qr_modules, zbar)

pytestmark = pytest.mark.front_end


def test_begin_at_a_terminal_shows_the_qr_code(activated):
    """At a terminal `--begin` asks the user name and password, then shows the scan sentence
    and a QR code that reads back as the URI under it, the key and the pending sentence."""
    child = activated.spawn("2fa", "enable", "--begin")
    answer(child, "User name: ", USERNAME)
    answer_secret(child, "Password: ", PASSWORD)
    child.expect(r"Key: ([A-Z2-7]{32})\r\n")
    key = child.match.group(1)
    assert finish(child) == 0
    lines = screen(child).splitlines()
    qr = lines[lines.index(SCAN) + 1:lines.index(f"URI: {expected_uri(activated, key)}")]
    assert len(qr) >= 15
    assert zbar(qr_modules(qr), activated.root) == expected_uri(activated, key)
    assert PENDING_KEPT.match(lines[-1]), lines
    assert PASSWORD not in screen(child)


def test_begin_with_qr_none_at_a_terminal_shows_no_qr_code(activated):
    """`--qr none` at a terminal: no scan sentence and no QR code, the URI and the key."""
    child = activated.spawn("2fa", "enable", "--begin", "--username", USERNAME, "--qr", "none")
    answer_secret(child, "Password: ", PASSWORD)
    child.expect(r"Key: ([A-Z2-7]{32})\r\n")
    key = child.match.group(1)
    assert finish(child) == 0
    shown = screen(child)
    assert SCAN not in shown and "\x1b[" not in shown, shown
    assert f"URI: {expected_uri(activated, key)}\nKey: {key}\n" in shown, shown


def test_begin_on_a_pipe_with_qr_terminal_shows_no_qr_code(activated):
    """`--qr terminal` on a pipe: still no scan sentence and no QR code."""
    result, key = begin(activated, args=("--qr", "terminal"))
    assert (result.code, result.stderr) == (0, ""), result
    assert result.out_lines[:2] == [f"URI: {expected_uri(activated, key)}", f"Key: {key}"], result


def test_confirm_at_a_terminal_asks_password_then_code(activated):
    """At a terminal `--confirm` asks the user name, the password (echo off) and the code."""
    _, key = begin(activated)
    child = activated.spawn("2fa", "enable", "--confirm")
    answer(child, "User name: ", USERNAME)
    answer_secret(child, "Password: ", PASSWORD)
    answer(child, "Verification code: ", oath(key))
    child.expect_exact(ON.format(USERNAME))
    assert finish(child) == 0
    assert pending_rows(activated) == []


@pytest.mark.parametrize("args, sentence", [
    (("--begin", "--confirm"), "Give --begin or --confirm, not both."),
    (("--confirm", "--qr", "none"), "--confirm shows no QR code: leave --qr out."),
])
def test_steps_that_cannot_go_together(activated, args, sentence):
    """`--begin` with `--confirm`, and `--confirm` with `--qr`: exit 2, the one sentence, before
    any prompt; nothing kept."""
    result = activated.run("2fa", "enable", *args, input=f"{PASSWORD}\n")
    assert result.code == 2, result
    assert result.err_lines[0] == f"Error: {sentence}", result
    assert "Password" not in result.stderr
    assert pending_rows(activated) == []


def test_pam_auth_asks_no_code_for_a_pending_secret(activated):
    """pam-auth: the password alone passes; the password followed by a code of the pending key
    is a wrong password (there is no second factor to take it)."""
    _, key = begin(activated)
    assert silent(pam_auth(activated, PASSWORD)) == 0
    assert silent(pam_auth(activated, PASSWORD + pyotp.TOTP(key).now())) == 1


def test_pam_module_asks_no_code_for_a_pending_secret(activated):
    """pam_accounts.so: the password alone authenticates and no code is asked."""
    begin(activated)
    with service(activated) as name:
        run = pamtester(name, user=USERNAME, operations=("authenticate",), items=ITEMS,
                        answers=[(PASSWORD_PROMPT, PASSWORD)])
    assert succeeded(run), run
    assert CODE_PROMPT not in run.output, run
