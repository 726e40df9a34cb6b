"""What pam_accounts.so writes to the log an administrator reads, on every store: a session the
module's auth did not start is a login (`login_success` saying how, from which service and
remote host, and the account's last login set), one it did start is not logged twice, the
account stage's refusals are `access_refused` (never counted as failed logins), and the
module's own logins say their factors. sshd's SSH_AUTH_INFO_0, which root's sshd puts in the PAM
environment just before the session opens, is set here by pam_env from a file of the test's."""

import pytest

from conftest import BOB_PASSWORD
from hostusers import unique_name
from pammodule import pamtester, scratch_service, succeeded
from pamstack import ITEMS, PASSWORD_PROMPT, lines, where


def added(device, prefix: str) -> str:
    """A new account of a name no other test or system user has (NSS is shared)."""
    name = unique_name(prefix)
    device.add_user(username=name)
    return name


def last_login(device, name) -> str:
    """The LAST LOGIN column of `accounts user list` for `name`."""
    listed = device.run("user", "list")
    assert listed.code == 0, listed
    row = next(line for line in listed.out_lines if line.split()[0] == name)
    return row.split()[-1]


def logins(device) -> list:
    return [(e["user"], e["detail"]) for e in device.events() if e["event"] == "login_success"]


def sshd_like(device, tmp_path, auth_info: str, **groups):
    """A service whose session first sets SSH_AUTH_INFO_0 to `auth_info` in the PAM
    environment, as sshd does before pam_open_session, then runs the module's `groups`."""
    conf = tmp_path / "pam_env.conf"
    conf.write_text(f'SSH_AUTH_INFO_0 DEFAULT="{auth_info}"\n')
    conf.chmod(0o644)
    env_line = f"session required pam_env.so readenv=0 user_readenv=0 conffile={conf}"
    return scratch_service([env_line, *lines(device, **groups)])


def test_a_key_login_is_a_login_with_its_remote_host(activated, tmp_path):
    """sshd's key login (no auth, the account stage, the session): one `login_success` saying
    `ssh-key` and where from, before the session's own event; the account's last login set.
    The account stage alone logs no login."""
    user = added(activated, "key")
    with sshd_like(activated, tmp_path, "publickey ssh-ed25519 AAAAC3Nza", auth=None,
                   account=(), session=()) as name:
        alone = pamtester(name, user=user, operations=("acct_mgmt",), items=ITEMS)
        assert succeeded(alone, "acct_mgmt"), alone
        assert logins(activated) == []
        assert last_login(activated, user) == "never"
        run = pamtester(name, user=user, operations=("acct_mgmt", "open_session"), items=ITEMS)
    assert succeeded(run, "open_session"), run
    assert logins(activated) == [(user, f"ssh-key; {where(name)}")]
    assert [(e["event"], e["detail"]) for e in activated.events()][-2:] == [
        ("login_success", f"ssh-key; {where(name)}"), ("pam_session_opened", where(name))]
    assert last_login(activated, user) != "never"


def test_keyboard_interactive_in_sshd_is_logged_once(activated, tmp_path):
    """sshd runs keyboard-interactive's auth in a process of its own (its PAM data never reaches
    the session's handle): SSH_AUTH_INFO_0 naming it, the session logs no second login."""
    user = added(activated, "kbd")
    with sshd_like(activated, tmp_path, "keyboard-interactive/pam", auth=None,
                   session=()) as name:
        run = pamtester(name, user=user, operations=("open_session",), items=ITEMS)
    assert succeeded(run, "open_session"), run
    assert logins(activated) == []


def test_another_service_without_auth_is_a_pam_session_login(activated):
    """A session another module let in (root's su through pam_rootok): `pam-session`."""
    user = added(activated, "su")
    with scratch_service(lines(activated, auth=None, account=(), session=())) as name:
        run = pamtester(name, user=user,
                        operations=("acct_mgmt", "open_session", "close_session"), items=ITEMS)
    assert succeeded(run, "close_session"), run
    assert logins(activated) == [(user, f"pam-session; {where(name)}")]


def test_auth_and_session_in_one_handle_log_one_login_with_its_factor(activated):
    """The module's auth accepted the password in this handle: its login says `password`, and
    the session that follows logs none more."""
    user = added(activated, "pw")
    with scratch_service(lines(activated, auth=(), account=(), session=())) as name:
        run = pamtester(name, user=user, operations=("authenticate", "acct_mgmt", "open_session"),
                        answers=[(PASSWORD_PROMPT, BOB_PASSWORD)], items=ITEMS)
    assert succeeded(run, "open_session"), run
    assert logins(activated) == [(user, f"password; {where(name)}")]


def test_account_stage_refusals_are_access_refused_and_not_counted(activated):
    """Disabled, expired, in none of the allowed groups: each refusal an `access_refused` event
    with the reason and where from, shown by `log --event access_refused`; no failed login is
    counted (Home says none at the next login)."""
    user = added(activated, "acct")
    ok = activated.run("group", "add", "staff")
    assert ok.code == 0, ok
    with scratch_service(lines(activated, auth=None, account=("allow_groups=staff",))) as name:
        grouped = pamtester(name, user=user, operations=("acct_mgmt",), items=ITEMS)
        for change in (("user", "edit", user, "--add-group", "staff"), ("user", "disable", user)):
            done = activated.run(*change)
            assert done.code == 0, done
        disabled = pamtester(name, user=user, operations=("acct_mgmt",), items=ITEMS)
        for change in (("user", "enable", user), ("user", "edit", user, "--expires", "2020-01-01")):
            done = activated.run(*change)
            assert done.code == 0, done
        expired = pamtester(name, user=user, operations=("acct_mgmt",), items=ITEMS)
    assert not any(succeeded(r, "acct_mgmt") for r in (grouped, disabled, expired))
    refused = [(e["user"], e["detail"]) for e in activated.events()
               if e["event"] == "access_refused"]
    assert refused == [(user, f"in none of the allowed groups; {where(name)}"),
                       (user, f"account disabled; {where(name)}"),
                       (user, f"account expired; {where(name)}")]
    shown = activated.run("log", "--event", "access_refused")
    assert shown.code == 0 and len(shown.out_lines) == 3, shown
    assert all("  access_refused  " in line for line in shown.out_lines), shown
    assert [e for e in activated.events() if e["event"] == "login_failure"] == []
