"""pam_accounts.so's account, password and session stages with the real program: an unknown
name falls through to pam_unix, a password that must change gives PAM_NEW_AUTHTOK_REQD and is
then changed through chauthtok (the new one works), root sets a password without the old one,
allow_groups allows and denies, and the OS login and logout land in the audit log."""

import pytest

from conftest import BOB, BOB_PASSWORD, NEW_PASSWORD, PASSWORD, USERNAME, WRONG_PASSWORD
from pammodule import PAM_CODES, failure_line, pamtester, scratch_service, succeeded
from pamstack import (CODE_PROMPT, ITEMS, PASSWORD_PROMPT, events, module, options, service,
                      where)
from secondfactor import enabled, oath, rewind

pytestmark = pytest.mark.front_end

CURRENT = "Current password: "
NEW = "New password: "
AGAIN = "New password again: "


def test_an_unknown_name_is_user_unknown_and_falls_through_to_pam_unix(activated):
    fallthrough = [
        " ".join(["account [success=done user_unknown=ignore default=bad]", str(module()),
                  *options(activated)]),
        "account required pam_unix.so"]
    with service(activated, auth=None, account=()) as alone:
        unknown = pamtester(alone, user="mallory", operations=("acct_mgmt",))
    with scratch_service(fallthrough) as stacked:
        root = pamtester(stacked, user="root", operations=("acct_mgmt",))
        ours = pamtester(stacked, user=USERNAME, operations=("acct_mgmt",))
    assert failure_line(PAM_CODES["PAM_USER_UNKNOWN"]) in unknown.output, unknown
    assert succeeded(root, "acct_mgmt"), root
    assert succeeded(ours, "acct_mgmt"), ours


def test_a_password_that_must_change_is_changed_through_chauthtok(activated):
    activated.add_user()
    changed = activated.run("user", "passwd", BOB, "--must-change", "--password-stdin",
                            input=BOB_PASSWORD + "\n")
    assert changed.code == 0, changed
    with service(activated, auth=(), account=(), password=()) as name:
        due = pamtester(name, user=BOB, operations=("acct_mgmt",))
        change = pamtester(name, user=BOB,
                           operations=("chauthtok(PAM_CHANGE_EXPIRED_AUTHTOK)",),
                           answers=[(CURRENT, BOB_PASSWORD), (NEW, NEW_PASSWORD),
                                    (AGAIN, NEW_PASSWORD)])
        after = pamtester(name, user=BOB, operations=("authenticate", "acct_mgmt"),
                          answers=[(PASSWORD_PROMPT, NEW_PASSWORD)])
    assert failure_line(PAM_CODES["PAM_NEW_AUTHTOK_REQD"]) in due.output, due
    assert "You must choose a new password" in due.output, due
    assert succeeded(change, "chauthtok"), change
    assert succeeded(after), after
    assert succeeded(after, "acct_mgmt"), after
    assert activated.login(BOB, BOB_PASSWORD).code == 1


def test_a_forced_change_asks_the_code_unless_auth_ran_in_the_same_handle(activated):
    """A must-change account with a second factor: the forced change alone (a key login to
    sshd runs no auth) asks the current password and the code; right after auth accepted both
    in the same handle (a console login), only the passwords."""
    enrollment = enabled(activated)
    activated.run("user", "passwd", USERNAME, "--must-change", "--password-stdin",
                  input=PASSWORD + "\n")
    with service(activated, auth=(), password=()) as name:
        rewind(activated)
        code = oath(enrollment.key)
        alone = pamtester(name, operations=("chauthtok(PAM_CHANGE_EXPIRED_AUTHTOK)",),
                          answers=[(CURRENT, PASSWORD), (CODE_PROMPT, code),
                                   (NEW, NEW_PASSWORD), (AGAIN, NEW_PASSWORD)])
        assert succeeded(alone, "chauthtok"), alone
        activated.run("user", "passwd", USERNAME, "--must-change", "--password-stdin",
                      input=PASSWORD + "\n")
        rewind(activated)
        code = oath(enrollment.key)
        console = pamtester(name, operations=("authenticate",
                                              "chauthtok(PAM_CHANGE_EXPIRED_AUTHTOK)"),
                            answers=[(PASSWORD_PROMPT, PASSWORD), (CODE_PROMPT, code),
                                     (CURRENT, PASSWORD), (NEW, NEW_PASSWORD),
                                     (AGAIN, NEW_PASSWORD)])
        assert succeeded(console, "chauthtok"), console
        assert console.output.count(CODE_PROMPT) == 1, console


def test_chauthtok_refuses_a_wrong_current_password_and_new_ones_that_differ(activated):
    with service(activated, auth=None, password=()) as name:
        nothing_due = pamtester(name, operations=("chauthtok(PAM_CHANGE_EXPIRED_AUTHTOK)",))
    # Nothing is due: PAM_CHANGE_EXPIRED_AUTHTOK changes only a password that must change.
    assert succeeded(nothing_due, "chauthtok"), nothing_due
    assert "Current password" not in nothing_due.output
    activated.run("user", "passwd", USERNAME, "--must-change", "--password-stdin",
                  input=PASSWORD + "\n")
    stored = activated.stored_hash()
    with service(activated, auth=None, password=()) as name:
        refused = pamtester(name, operations=("chauthtok(PAM_CHANGE_EXPIRED_AUTHTOK)",),
                            answers=[(CURRENT, WRONG_PASSWORD)])
        differ = pamtester(name, operations=("chauthtok(PAM_CHANGE_EXPIRED_AUTHTOK)",),
                           answers=[(CURRENT, PASSWORD), (NEW, NEW_PASSWORD),
                                    (AGAIN, NEW_PASSWORD + "!")])
    assert failure_line(PAM_CODES["PAM_AUTHTOK_RECOVERY_ERR"]) in refused.output, refused
    assert failure_line(PAM_CODES["PAM_AUTHTOK_ERR"]) in differ.output, differ
    assert "Passwords must match!" in differ.output, differ
    assert activated.account(USERNAME)["failures"] == 1
    assert activated.stored_hash() == stored


def test_root_sets_a_password_without_the_current_one(activated):
    with service(activated, auth=None, password=()) as name:
        run = pamtester(name, operations=("chauthtok",),
                        answers=[(NEW, NEW_PASSWORD), (AGAIN, NEW_PASSWORD)])
    assert succeeded(run, "chauthtok"), run
    assert CURRENT not in run.output
    assert activated.login(USERNAME, NEW_PASSWORD).code == 0
    assert events(activated)[-2][:2] == ("password_set", USERNAME)


def test_allow_groups_allows_members_and_denies_the_rest(activated):
    activated.add_user()
    for command in (["group", "add", "staff"], ["group", "add", "wheel"],
                    ["user", "edit", USERNAME, "--add-group", "wheel"]):
        result = activated.run(*command)
        assert result.code == 0, result
    with service(activated, auth=None, account=("allow_groups=wheel,admins",)) as name:
        member = pamtester(name, user=USERNAME, operations=("acct_mgmt",))
        other = pamtester(name, user=BOB, operations=("acct_mgmt",))
    assert succeeded(member, "acct_mgmt"), member
    assert failure_line(PAM_CODES["PAM_PERM_DENIED"]) in other.output, other


def test_the_os_login_and_logout_are_in_the_audit_log(activated):
    with service(activated, auth=None, session=()) as name:
        run = pamtester(name, operations=("open_session", "close_session"), items=ITEMS)
        unknown = pamtester(name, user="mallory", operations=("open_session",), items=ITEMS)
    assert succeeded(run, "open_session") and succeeded(run, "close_session"), run
    assert failure_line(PAM_CODES["PAM_USER_UNKNOWN"]) in unknown.output, unknown
    assert events(activated)[-2:] == [("pam_session_opened", USERNAME, where(name)),
                                      ("pam_session_closed", USERNAME, where(name))]
    assert not any(user == "mallory" for _, user, _ in events(activated))
