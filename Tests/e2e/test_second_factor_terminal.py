"""The TOTP second factor at a terminal: `2fa enable` with the key read off the screen, the QR code
on the screen read back by `zbarimg`, wrong and early codes asked again, and the bare flow going
back to the login after a wrong or empty code."""

import time

from totp import STEP

from conftest import PASSWORD, USERNAME, answer, answer_secret, finish, screen
from secondfactor import (AUTHORIZED, EMPTY_CODE, INVALID_CODE, ON, RECOVERY_HEADER, RECOVERY_LINE,
                          SCAN, WELCOME, enabled, expected_uri, oath, qr_modules, wrong_code, zbar)


# At a terminal.

def test_terminal_enable_login_logout(activated):
    """At a terminal: `2fa enable` (key read off the screen, an oathtool code typed with echo
    on), `login` with a code, bare `accounts` shows Home with no prompt, `logout`, then bare
    `accounts` asks the user name again and takes a recovery code."""
    child = activated.spawn("2fa", "enable")
    answer(child, "User name: ", USERNAME)
    answer_secret(child, "Password: ", PASSWORD)
    child.expect(r"Key: ([A-Z2-7]{32})\r\n")
    key = child.match.group(1)
    code = oath(key)
    answer(child, "Verification code: ", code)
    child.expect_exact(ON.format(USERNAME))
    assert finish(child) == 0
    shown = screen(child)
    assert f"URI: {expected_uri(activated, key)}\nKey: {key}\nVerification code: {code}\n" \
           f"{ON.format(USERNAME)}\n{RECOVERY_HEADER}\n" in shown, shown
    codes = [m.group(1) for m in map(RECOVERY_LINE.match, shown.splitlines()) if m]
    assert len(codes) == 10
    assert PASSWORD not in shown

    child = activated.spawn("login")
    answer(child, "User name: ", USERNAME)
    answer_secret(child, "Password: ", PASSWORD)
    later = oath(key, time.time() + 30)
    answer(child, "Verification code: ", later)
    assert finish(child) == 0
    shown = screen(child)
    assert shown.startswith(f"User name: {USERNAME}\nPassword: \nVerification code: {later}\n"
                            f"{AUTHORIZED}\n{WELCOME}\n"), shown

    child = activated.spawn()
    assert finish(child) == 0
    lines = screen(child).splitlines()
    assert lines[0] == WELCOME and lines[1].startswith("Last login: "), lines

    child = activated.spawn("logout")
    assert finish(child) == 0
    assert screen(child) == "Logged out.\n"
    assert not activated.session_file.exists()

    child = activated.spawn()
    answer(child, "User name: ", USERNAME)
    answer_secret(child, "Password: ", PASSWORD)
    answer(child, "Verification code: ", codes[0])
    assert finish(child) == 0
    shown = screen(child)
    assert f"Recovery code accepted; 9 left.\n{WELCOME}\n" in shown, shown


def test_terminal_qr_code_decodes(activated):
    """At a terminal the QR code on the screen (real SGR colours, black on white) reads back
    through zbarimg as exactly the URI shown under it."""
    child = activated.spawn("2fa", "enable", "--username", USERNAME)
    answer_secret(child, "Password: ", PASSWORD)
    child.expect(r"Key: ([A-Z2-7]{32})\r\n")
    key = child.match.group(1)
    answer(child, "Verification code: ", oath(key))
    assert finish(child) == 0
    lines = screen(child).splitlines()
    qr = lines[lines.index(SCAN) + 1:lines.index(f"URI: {expected_uri(activated, key)}")]
    assert zbar(qr_modules(qr), activated.root) == expected_uri(activated, key)


def test_terminal_enable_asks_again_after_a_wrong_code(activated):
    """At a terminal a wrong enrollment code says `Invalid verification code!` and asks again;
    the right code then turns it on."""
    child = activated.spawn("2fa", "enable", "--username", USERNAME, "--qr", "none")
    answer_secret(child, "Password: ", PASSWORD)
    child.expect(r"Key: ([A-Z2-7]{32})\r\n")
    key = child.match.group(1)
    answer(child, "Verification code: ", wrong_code(key))
    child.expect_exact(INVALID_CODE)
    answer(child, "Verification code: ", oath(key))
    assert finish(child) == 0
    assert f"{INVALID_CODE}\nVerification code: " in screen(child)
    assert ON.format(USERNAME) in screen(child)


def test_terminal_enable_three_wrong_codes_store_nothing(activated):
    """At a terminal three wrong enrollment codes end it: exit 1, nothing stored."""
    child = activated.spawn("2fa", "enable", "--username", USERNAME, "--qr", "none")
    answer_secret(child, "Password: ", PASSWORD)
    child.expect(r"Key: ([A-Z2-7]{32})\r\n")
    key = child.match.group(1)
    for _ in range(3):
        answer(child, "Verification code: ", wrong_code(key))
        child.expect_exact(INVALID_CODE)
    assert finish(child) == 1
    assert screen(child).count("Verification code: ") == 3
    assert activated.query("SELECT count(*) FROM second_factor") == [(0,)]
    assert ON.format(USERNAME) not in screen(child)


def test_terminal_enable_clock_off_asks_again(activated):
    """At a terminal a code four steps ahead says the clock sentence and asks again; a right
    code then turns it on."""
    child = activated.spawn("2fa", "enable", "--username", USERNAME, "--qr", "none")
    answer_secret(child, "Password: ", PASSWORD)
    child.expect(r"Key: ([A-Z2-7]{32})\r\n")
    key = child.match.group(1)
    answer(child, "Verification code: ", oath(key, time.time() + 4 * STEP))
    child.expect_exact("That code is for a time about ")
    child.expect_exact("seconds ahead of this device's clock: set the clock right and try "
                       "again.")
    answer(child, "Verification code: ", oath(key))
    assert finish(child) == 0
    assert ON.format(USERNAME) in screen(child)


def test_terminal_bare_flow_wrong_and_empty_code_go_back_to_login(activated):
    """In the bare flow at a terminal, a wrong code and then an empty one each go back to the
    User name prompt; the third attempt with a right code reaches Home, which counts the one
    wrong code (the empty one is not counted). A login without a session comes first, so Home
    counts since it."""
    plain = activated.run("login", "--no-session", input=f"{USERNAME}\n{PASSWORD}\n")
    assert plain.code == 0, plain
    enrollment = enabled(activated)
    child = activated.spawn()
    bad = wrong_code(enrollment.key)
    for typed in (bad, ""):
        answer(child, "User name: ", USERNAME)
        answer_secret(child, "Password: ", PASSWORD)
        answer(child, "Verification code: ", typed)
    answer(child, "User name: ", USERNAME)
    answer_secret(child, "Password: ", PASSWORD)
    code = oath(enrollment.key)
    answer(child, "Verification code: ", code)
    assert finish(child) == 0
    shown = screen(child)
    attempt = f"User name: {USERNAME}\nPassword: \nVerification code: "
    assert shown.startswith(
        f"{attempt}{bad}\n{INVALID_CODE}\n{attempt}\n{EMPTY_CODE}{attempt}{code}\n{AUTHORIZED}\n"
        f"{WELCOME}\n"), shown
    assert shown.endswith("1 failed attempt since your last login\n"), shown
