"""The recovery codes of the TOTP second factor: one at the code prompt logs in once, how they are
typed, the warnings as they run down, and a new set from `2fa recovery-codes`."""

from conftest import PASSWORD, USERNAME
from secondfactor import (AUTHORIZED, INVALID_CODE, NEW_RECOVERY_HEADER, NOT_ON, RECOVERY_LINE,
                          enabled, events, failures, login, oath, only_left, recovered,
                          wrong_code)


# Recovery codes.

def test_recovery_code_accepted_once(activated):
    """A recovery code at the code prompt logs in (`Recovery code accepted; 9 left.`, event
    recovery_code_used, and login_success naming the recovery code); the same code again is
    `Invalid verification code!`."""
    enrollment = enabled(activated)
    first = enrollment.codes[0]
    recovered(login(activated, first), 9)
    assert ("recovery_code_used", USERNAME) in [e[:2] for e in events(activated)]
    assert events(activated)[-1] == ("login_success", USERNAME, "password and recovery code")
    again = login(activated, first)
    assert (again.code, again.stdout, again.stderr) == (1, "", INVALID_CODE + "\n")
    assert activated.query("SELECT count(*) FROM recovery_code WHERE used_at IS NOT NULL") == [(1,)]


def test_recovery_code_case_spaces_hyphens(activated):
    """Case, spaces and hyphens of a recovery code do not matter."""
    enrollment = enabled(activated)
    typed = " ".join(enrollment.codes[1].replace("-", "").lower())
    recovered(login(activated, typed), 9)


def test_recovery_codes_run_down_with_warnings(activated):
    """Ten recovery codes: 9..3 left say only that; 2, 1, 0 left add `Only N recovery code(s)
    left: ...`; a TOTP login with 0 left warns too; an eleventh (used) code is refused."""
    enrollment = enabled(activated)
    for i, code in enumerate(enrollment.codes):
        left = 9 - i
        recovered(login(activated, code), left, only_left(left) if left <= 2 else None)
    result = login(activated, oath(enrollment.key))
    assert (result.code, result.err_lines) == (0, [AUTHORIZED, only_left(0)]), result
    assert login(activated, enrollment.codes[0]).code == 1
    status = activated.run("2fa", "status", "--user", USERNAME)
    assert status.stdout.endswith("; 0 recovery codes left.\n"), status


def test_unknown_recovery_code_is_wrong(activated):
    """A well-formed recovery code that was never issued is a wrong code, counted."""
    enabled(activated)
    result = login(activated, "AAAA-BBBB-CCCC-DDDD")
    assert (result.code, result.stderr) == (1, INVALID_CODE + "\n")
    assert failures(activated) == 1


def test_new_recovery_codes_replace_the_old(activated):
    """`2fa recovery-codes` (password, then a code) prints a new set of ten; the old codes stop
    working, the new ones work; event recovery_codes_made."""
    enrollment = enabled(activated)
    result = activated.run("2fa", "recovery-codes", "--username", USERNAME,
                           input=f"{PASSWORD}\n{oath(enrollment.key)}\n")
    assert result.code == 0, result
    lines = result.out_lines
    assert lines[0] == NEW_RECOVERY_HEADER.format(USERNAME)
    fresh = [RECOVERY_LINE.match(line).group(1) for line in lines[1:]]
    assert len(fresh) == 10 and len(lines) == 11 and not set(fresh) & set(enrollment.codes)
    assert ("recovery_codes_made", USERNAME) in [e[:2] for e in events(activated)]
    old = login(activated, enrollment.codes[0])
    assert (old.code, old.stderr) == (1, INVALID_CODE + "\n")
    recovered(login(activated, fresh[0]), 9)
    assert activated.query("SELECT count(*) FROM recovery_code WHERE used_at IS NULL") == [(9,)]


def test_recovery_codes_with_a_recovery_code(activated):
    """`2fa recovery-codes` takes a recovery code at the code prompt too."""
    enrollment = enabled(activated)
    result = activated.run("2fa", "recovery-codes", "--username", USERNAME,
                           input=f"{PASSWORD}\n{enrollment.codes[0]}\n")
    assert result.code == 0, result
    assert result.out_lines[0] == NEW_RECOVERY_HEADER.format(USERNAME)


def test_recovery_codes_wrong_code(activated):
    """`2fa recovery-codes` with a wrong code: exit 1, the old codes still work."""
    enrollment = enabled(activated)
    result = activated.run("2fa", "recovery-codes", "--username", USERNAME,
                           input=f"{PASSWORD}\n{wrong_code(enrollment.key)}\n")
    assert (result.code, result.stdout, result.stderr) == (1, "", INVALID_CODE + "\n")
    recovered(login(activated, enrollment.codes[0]), 9)


def test_recovery_codes_when_off(activated):
    """`2fa recovery-codes` without 2FA: after the right password, the not-on sentence, exit 1."""
    result = activated.run("2fa", "recovery-codes", "--username", USERNAME,
                           input=PASSWORD + "\n")
    assert (result.code, result.stdout, result.stderr) == (1, "", NOT_ON.format(USERNAME) + "\n")
