"""`accounts pam-auth --database PATH`, called directly the way pam_exec calls it (PAM_* in
the environment, the password on standard input): the check itself. The right password (a
final NUL or newline dropped), a wrong one, an unknown name and the variants of a stored name
refused like one, disabled, locked and must-change accounts, the tally shared with login, and
a TOTP account's password and code in one string."""

import subprocess

import pytest

from conftest import (BIN, BOB, BOB_PASSWORD, NEW_PASSWORD, PASSWORD, USERNAME, WRONG_PASSWORD,
                      Result)
from pamhelp import (GUESS, INVALID_DETAIL, WHERE, events, failures, pam_auth, pam_env, sessions,
                     silent, totp)
from secondfactor import enabled, steady, wrong_code
from totp import code_for_step

# The front end PAM reaches: pam_exec's environment, input, time limit and items, and what
# pam-auth answers. The store behind it is asked what login asks (the same repository calls,
# run on both stores by test_login.py and the test_session_*.py files), so these run once,
# in the sqlite run.
pytestmark = pytest.mark.front_end

# An account without TOTP whose password ends in six digits: the whole string is its password.
DIGITS_PASSWORD = "purple elephants dance 482913"

# The detail of a login that passed the password and a TOTP code.
TOTP_WHERE = f"password and TOTP code; {WHERE}"


def test_right_password_exit_0(activated):
    """The right password, no newline and no NUL: exit 0, nothing printed, login_success with
    detail `pam service=sshd rhost=203.0.113.9 tty=ssh`."""
    assert silent(pam_auth(activated)) == 0
    assert events(activated)[-1] == ("login_success", USERNAME, f"password; {WHERE}")


@pytest.mark.parametrize("ending", [b"\0", b"\n"], ids=["nul-pam_exec-before-1.4", "newline"])
def test_final_nul_or_newline_dropped(activated, ending):
    """A final NUL (pam_exec before 1.4) or a final newline is not part of the password:
    exit 0, silent, login_success."""
    assert silent(pam_auth(activated, ending=ending)) == 0
    assert events(activated)[-1] == ("login_success", USERNAME, f"password; {WHERE}")


@pytest.mark.parametrize("ending, counted", [(b"\n\n", 0), (b" ", 1), (b"\0\0", 0)],
                         ids=["two-newlines", "space", "two-nuls"])
def test_only_one_final_newline_dropped(activated, ending, counted):
    """Only one final newline and one final NUL are dropped: two newlines, two NULs or a
    trailing space leave a different password, exit 1. A trailing space is a wrong password
    (counted); a control character left in it is refused before anything is counted, as at
    the prompts."""
    assert silent(pam_auth(activated, ending=ending)) == 1
    assert failures(activated) == counted


def test_success_recorded_as_login_without_session(activated):
    """A success after two failures clears the count and sets the last login, as a login does,
    but starts no session (no row, no session file)."""
    assert activated.account(USERNAME)["lastLogin"] is None
    for _ in range(2):
        assert silent(pam_auth(activated, WRONG_PASSWORD)) == 1
    assert failures(activated) == 2
    assert silent(pam_auth(activated)) == 0
    alice = activated.account(USERNAME)
    assert alice["failures"] == 0 and alice["lastLogin"] is not None, alice
    assert sessions(activated) == 0
    assert not activated.session_file.exists()


def test_wrong_password_exit_1(activated):
    """A wrong password: exit 1, silent, login_failure `invalid user name or password; pam
    service=sshd rhost=203.0.113.9 tty=ssh`, one failure counted."""
    assert silent(pam_auth(activated, WRONG_PASSWORD)) == 1
    assert events(activated)[-1] == ("login_failure", USERNAME, f"{INVALID_DETAIL}; {WHERE}")
    assert failures(activated) == 1


def test_unknown_name_exit_1(activated):
    """An unknown PAM_USER: exit 1, silent, logged like a wrong password under the name given."""
    assert silent(pam_auth(activated, user="mallory")) == 1
    assert events(activated)[-1] == ("login_failure", "mallory", f"{INVALID_DETAIL}; {WHERE}")


# Other programs on the host take PAM_USER as it is: another case, full-width letters or
# spaces around the name would log in a user named that way with alice's password.
NAME_VARIANTS = {"upper-case": "ALICE", "title-case": "Alice", "full-width": "ａｌｉｃｅ",
                 "space-before": " alice", "space-after": "alice ", "tab-after": "alice\t"}


@pytest.mark.parametrize("variant", NAME_VARIANTS.values(), ids=NAME_VARIANTS.keys())
def test_name_variant_refused_like_an_unknown_name(activated, variant):
    """A variant of alice's stored name with her right password: exit 1, silent, no success;
    a variant that is a valid name is logged as an unknown name is (`login_failure` under the
    name given), one with spaces (no valid name) not at all. The exact name still passes."""
    before = events(activated)
    assert silent(pam_auth(activated, user=variant)) == 1
    assert silent(pam_auth(activated, user="mallory")) == 1
    logged = events(activated)[len(before):]
    assert "login_success" not in [e[0] for e in logged], logged
    unknown = ("login_failure", "mallory", f"{INVALID_DETAIL}; {WHERE}")
    if variant.strip() == variant:
        assert logged == [("login_failure", variant, f"{INVALID_DETAIL}; {WHERE}"), unknown]
    else:
        assert logged == [unknown]
    assert silent(pam_auth(activated)) == 0
    assert events(activated)[-1] == ("login_success", USERNAME, f"password; {WHERE}")


def test_disabled_account_exit_1(activated):
    """A disabled account's right password: exit 1, silent, `account disabled; pam ...`."""
    activated.add_user()
    assert activated.run("user", "disable", BOB).code == 0
    assert silent(pam_auth(activated, BOB_PASSWORD, user=BOB)) == 1
    assert events(activated)[-1] == ("login_failure", BOB, f"account disabled; {WHERE}")


def test_second_account(activated):
    """Any account can authenticate, not only the owner; its own password only."""
    activated.add_user()
    assert silent(pam_auth(activated, BOB_PASSWORD, user=BOB)) == 0
    assert silent(pam_auth(activated, PASSWORD, user=BOB)) == 1


def test_five_failures_lock_exit_4(activated):
    """Five wrong passwords: exit 1, 1, 1, 1, 4 (as login); then the right one is refused with
    4 (logged `locked; pam ...`); after unlock it passes again."""
    results = [pam_auth(activated, WRONG_PASSWORD) for _ in range(5)]
    assert [r.code for r in results] == [1, 1, 1, 1, 4], results
    assert events(activated)[-1][:2] == ("lockout", USERNAME)
    assert [silent(r) for r in results] == [1, 1, 1, 1, 4]
    assert silent(pam_auth(activated)) == 4
    assert events(activated)[-1] == ("login_failure", USERNAME, f"locked; {WHERE}")
    assert activated.run("unlock", USERNAME).code == 0
    assert silent(pam_auth(activated)) == 0


def test_unknown_name_locks_like_a_known_one(activated):
    """An unknown name locks after five failures too (exit 4), so locking tells nothing."""
    results = [pam_auth(activated, GUESS, user="mallory") for _ in range(6)]
    assert [r.code for r in results] == [1, 1, 1, 1, 4, 4], results
    assert [silent(r) for r in results] == [1, 1, 1, 1, 4, 4]


def test_shares_the_tally_with_login(activated):
    """Four wrong pam-auth runs and one wrong login lock alice (login exit 4); pam-auth then
    refuses the right password with 4."""
    for _ in range(4):
        assert silent(pam_auth(activated, WRONG_PASSWORD)) == 1
    assert activated.login(USERNAME, WRONG_PASSWORD).code == 4
    assert silent(pam_auth(activated)) == 4


def test_must_change_password_still_succeeds(activated):
    """An account that must change its password still passes (like verify), and still must."""
    activated.add_user()
    assert activated.run("user", "passwd", BOB, "--must-change", "--password-stdin",
                         input=NEW_PASSWORD + "\n").code == 0
    assert silent(pam_auth(activated, NEW_PASSWORD, user=BOB)) == 0
    assert activated.account(BOB)["mustChangePassword"] is True


def test_password_ending_in_digits_without_totp(activated):
    """An account without TOTP whose password ends in six digits: the whole input is the
    password (exit 0); without the digits it is wrong (exit 1)."""
    activated.add_user(password=DIGITS_PASSWORD)
    assert silent(pam_auth(activated, DIGITS_PASSWORD, user=BOB)) == 0
    assert silent(pam_auth(activated, DIGITS_PASSWORD[:-6], user=BOB)) == 1


# Accounts with the TOTP second factor: the password, then the code, in one string.

def test_totp_password_and_code(activated):
    """Password followed directly by the current code (pyotp): exit 0, silent, login_success
    with the pam detail, and no session."""
    enrollment = enabled(activated)
    assert silent(pam_auth(activated, PASSWORD + totp(enrollment))) == 0
    assert events(activated)[-1] == ("login_success", USERNAME, TOTP_WHERE)
    assert sessions(activated) == 0


def test_totp_password_and_code_with_newline(activated):
    """Password and code followed by a newline: the newline is dropped, exit 0."""
    enrollment = enabled(activated)
    assert silent(pam_auth(activated, PASSWORD + totp(enrollment), ending=b"\n")) == 0


def test_totp_code_of_the_step_before_accepted(activated):
    """The code of the previous 30-second step is accepted (±1 step, as at login); one two steps
    back is a wrong code (exit 1, `wrong verification code; pam ...`)."""
    enrollment = enabled(activated)

    def attempt(step):
        return (pam_auth(activated, PASSWORD + code_for_step(enrollment.key, step - 2)),
                pam_auth(activated, PASSWORD + code_for_step(enrollment.key, step - 1)))
    too_old, previous = steady(attempt)
    assert silent(too_old) == 1
    assert silent(previous) == 0
    kinds = events(activated)[-2:]
    assert kinds == [("login_failure", USERNAME, f"wrong verification code; {WHERE}"),
                     ("login_success", USERNAME, TOTP_WHERE)]


def test_totp_code_raced_once(activated):
    """Five pam-auth runs started together with the same password and code: exactly one exits
    0, the other four 1 (replay; four failures lock nothing), all silent; one success and four
    `verification code replayed`."""
    enrollment = enabled(activated)
    line = (PASSWORD + totp(enrollment)).encode()
    procs = [subprocess.Popen([BIN, "pam-auth", *activated.pam_args()],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=pam_env(), cwd=str(activated.root))
             for _ in range(5)]
    results = []
    for proc in procs:
        out, err = proc.communicate(line, timeout=30)
        results.append(Result(proc.returncode, out.decode(), err.decode()))
    assert sorted(silent(r) for r in results) == [0, 1, 1, 1, 1], results
    logged = [e for e in events(activated) if e[0] in ("login_success", "login_failure")]
    assert sorted(logged) == sorted(
        [("login_success", USERNAME, TOTP_WHERE)]
        + [("login_failure", USERNAME, f"verification code replayed; {WHERE}")] * 4)


def test_totp_password_alone_refused(activated):
    """A TOTP account's password without the code: exit 1, silent, counted, detail
    `no verification code; pam ...`."""
    enabled(activated)
    assert silent(pam_auth(activated)) == 1
    assert events(activated)[-1] == ("login_failure", USERNAME, f"no verification code; {WHERE}")
    assert failures(activated) == 1


def test_totp_code_replay_refused(activated):
    """The same password and code twice: 0, then 1 (replay), counted, detail
    `verification code replayed; pam ...`."""
    enrollment = enabled(activated)
    line = PASSWORD + totp(enrollment)
    assert silent(pam_auth(activated, line)) == 0
    assert silent(pam_auth(activated, line)) == 1
    assert events(activated)[-1] == (
        "login_failure", USERNAME, f"verification code replayed; {WHERE}")
    assert failures(activated) == 1


def test_totp_code_used_at_login_is_replay(activated):
    """A code accepted by `accounts login` is refused afterwards by pam-auth (one store of the
    last step for both)."""
    enrollment = enabled(activated)
    code = totp(enrollment)
    assert activated.run("login", "--no-session",
                         input=f"{USERNAME}\n{PASSWORD}\n{code}\n").code == 0
    assert silent(pam_auth(activated, PASSWORD + code)) == 1
    assert events(activated)[-1][2] == f"verification code replayed; {WHERE}"


def test_totp_wrong_code_refused(activated):
    """Password and a wrong code: exit 1, silent, counted, `wrong verification code; pam ...`."""
    enrollment = enabled(activated)
    assert silent(pam_auth(activated, PASSWORD + wrong_code(enrollment.key))) == 1
    assert events(activated)[-1] == (
        "login_failure", USERNAME, f"wrong verification code; {WHERE}")
    assert failures(activated) == 1


def test_totp_wrong_password_does_not_use_the_code(activated):
    """Wrong password with the right code: exit 1 (`invalid user name or password`), and the
    code is not used up: the right password with it then passes."""
    enrollment = enabled(activated)
    code = totp(enrollment)
    assert silent(pam_auth(activated, WRONG_PASSWORD + code)) == 1
    assert events(activated)[-1] == ("login_failure", USERNAME, f"{INVALID_DETAIL}; {WHERE}")
    assert silent(pam_auth(activated, PASSWORD + code)) == 0


def test_totp_failures_lock(activated):
    """Four wrong codes and a missing one lock alice (the fifth exits 4); then even the right
    password and code exit 4."""
    enrollment = enabled(activated)
    bad = PASSWORD + wrong_code(enrollment.key)
    results = [pam_auth(activated, bad) for _ in range(4)] + [pam_auth(activated)]
    results.append(pam_auth(activated, PASSWORD + totp(enrollment)))
    assert [r.code for r in results] == [1, 1, 1, 1, 4, 4], results
    assert [silent(r) for r in results] == [1, 1, 1, 1, 4, 4]


def test_totp_key_file_missing_exit_3(activated):
    """The key file moved away: password and code exit 3 with one sentence naming the key file,
    nothing on stdout, nothing counted."""
    enrollment = enabled(activated)
    activated.key_file.rename(activated.root / "moved.key")
    result = pam_auth(activated, PASSWORD + totp(enrollment))
    assert (result.code, result.stdout) == (3, ""), result
    assert len(result.err_lines) == 1 and str(activated.key_file) in result.stderr, result
    assert failures(activated) == 0
