"""An account named like a user the system already has never logs in as that user, through
docs/pam.md's stack (`pam_unix` first, then pam_accounts.so with use_first_pass): the module answers
for a name only when NSS gives it no user (a virtual user) or the uid of the account's own
record. A user of /etc/passwd is answered as none of the module's before the store is reached,
so root passes the account stage through pam_unix with the store unreachable."""

import json
import pathlib

import pytest

from conftest import BOB_PASSWORD, PASSWORD
from hostusers import USERDB, local_user, passwd_entry, uid_block, unique_name
from pammodule import pamtester, scratch_service, succeeded
from pamstack import PASSWORD_PROMPT, events, shared_stack
from test_pam_module_su import refused, su_stack

pytestmark = pytest.mark.front_end

# A store at a PostgreSQL server that is not there: a socket folder that does not exist.
UNREACHABLE = "postgresql:///accounts?host=/nonexistent-accounts-test-socket"
USERDB_PATH = pathlib.Path(USERDB)


def logins_of(device, name) -> list:
    return [kind for kind, user, _ in events(device)
            if user == name and kind in ("login_success", "login_failure")]


def test_su_root_with_a_store_account_named_root_is_refused(activated):
    """`nobody` runs `su - root` and types the password of the store's account `root`:
    pam_unix refuses it for the system's root and so does the module (uid 0 is not the
    account's), so no shell opens."""
    activated.add_user(username="root", password=BOB_PASSWORD)
    with su_stack(activated):
        refused("root", BOB_PASSWORD)
    assert logins_of(activated, "root") == []


@pytest.mark.parametrize("name", ["daemon", "sys"])
def test_pamtester_system_names_never_succeed_at_any_stage(activated, name):
    """A store account named like a system user: auth through docs/pam.md's stack fails with its
    own password, and the module's other stages answer the name as none of theirs."""
    activated.add_user(username=name, password=BOB_PASSWORD)
    with scratch_service(shared_stack(activated)) as service:
        run = pamtester(service, user=name, answers=[(PASSWORD_PROMPT, BOB_PASSWORD)])
        assert not succeeded(run), run.output
    module_only = [line for line in shared_stack(activated) if "pam_accounts" in line
                   and not line.startswith("auth")]
    # The module alone, no pam_unix: what it answers for the name itself.
    with scratch_service([line.replace("[success=ok user_unknown=ignore default=bad]",
                                       "required")
                          .replace("[success=done user_unknown=ignore default=die]",
                                   "required")
                          .replace("optional", "required")
                          for line in module_only]) as service:
        for operation in ("acct_mgmt", "open_session"):
            run = pamtester(service, user=name, operations=(operation,))
            assert not succeeded(run, operation), run.output
            assert "User not known to the underlying authentication module" in run.output, \
                run.output
    assert logins_of(activated, name) == []


def test_an_account_shadowed_by_a_local_user_is_not_that_user(activated):
    """An account whose name a later `useradd` took (a user of /etc/passwd with another uid):
    the account's password does not open the local user, at any stage."""
    name = unique_name("shadowed")
    activated.add_user(username=name, password=BOB_PASSWORD)
    with local_user(name, PASSWORD + "-local"):
        with scratch_service(shared_stack(activated)) as service:
            run = pamtester(service, user=name, answers=[(PASSWORD_PROMPT, BOB_PASSWORD)])
            assert not succeeded(run), run.output
    assert logins_of(activated, name) == []


@pytest.fixture
def directory_user():
    """A user NSS gives from a record no store wrote (no `UID.user` link beside it, as a
    directory's or another program's user): a drop-in in /run/userdb, removed afterwards."""
    name, uid = unique_name("dir"), uid_block()[0]
    path = pathlib.Path(USERDB) / f"{name}.user"
    USERDB_PATH.mkdir(exist_ok=True)
    path.write_text(json.dumps({"userName": name, "uid": uid, "gid": uid,
                                "disposition": "regular", "homeDirectory": f"/home/{name}",
                                "shell": "/bin/sh", "locked": False}) + "\n")
    path.chmod(0o644)
    try:
        yield name
    finally:
        path.unlink()


def test_root_passes_the_account_stage_with_the_store_unreachable(activated):
    """docs/pam.md's stack pointed at a PostgreSQL server that is away: root's account stage is left
    to pam_unix (the module answers root as none of its users before reaching the store), while
    a name that may be the store's is refused (the store cannot say)."""
    stack = [line.replace(f"database={activated.pam_store_args()[1]}",
                          f"database={UNREACHABLE}")
             for line in shared_stack(activated)]
    assert any(UNREACHABLE in line for line in stack)
    with scratch_service(stack) as service:
        run = pamtester(service, user="root", operations=("acct_mgmt",))
        assert succeeded(run, "acct_mgmt"), run.output
        run = pamtester(service, user=unique_name("virtual"), operations=("acct_mgmt",))
        assert not succeeded(run, "acct_mgmt"), run.output


def test_a_directory_user_passes_the_account_stage_with_the_store_unreachable(activated,
                                                                             directory_user):
    """A user NSS gives from a record no store wrote is none of the module's, decided before
    the store: its account stage goes on to pam_unix while the server is away."""
    assert passwd_entry(directory_user)[0] == directory_user
    stack = [line.replace(f"database={activated.pam_store_args()[1]}",
                          f"database={UNREACHABLE}")
             for line in shared_stack(activated)]
    with scratch_service(stack) as service:
        run = pamtester(service, user=directory_user, operations=("acct_mgmt",))
        assert succeeded(run, "acct_mgmt"), run.output
