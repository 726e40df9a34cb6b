"""Sessions end when the account's password changes, when it is disabled or removed, and on
reset; `user show` counts the live ones."""

from conftest import BOB, BOB_PASSWORD, NEW_PASSWORD, PASSWORD, USERNAME
from sessionhelp import (BOB_WELCOME, Client, assert_asks_to_log_in,  # noqa: F401
                         assert_not_logged_in, bare, logged_in, now, read_session_file, sessions,
                         stamp, token_hash, two, whoami)


# Sessions end.

def test_passwd_ends_the_other_sessions(activated):
    """passwd ends every other session of the account; this client's session stays."""
    here = logged_in(activated)
    others = [Client(activated, name) for name in ("b", "c")]
    for client in others:
        client.login()
    result = activated.run("passwd", input=f"{USERNAME}\n{PASSWORD}\n{NEW_PASSWORD}\n"
                                           f"{NEW_PASSWORD}\n")
    assert (result.code, result.stdout) == (0, f"Password changed for {USERNAME}.\n"), result
    assert [r["id"] for r in sessions(activated)] == [here["id"]]
    assert whoami(activated).code == 0
    for client in others:
        assert_not_logged_in(client.run("whoami"))


def test_passwd_from_a_client_of_another_account(two):
    """passwd for alice from a client holding bob's session ends all of alice's sessions and
    none of bob's."""
    bobs = logged_in(two, BOB, BOB_PASSWORD)
    alices = [Client(two, name) for name in ("b", "c")]
    for client in alices:
        client.login()
    result = two.run("passwd", input=f"{USERNAME}\n{PASSWORD}\n{NEW_PASSWORD}\n{NEW_PASSWORD}\n")
    assert result.code == 0, result
    assert [r["id"] for r in sessions(two)] == [bobs["id"]]


def test_user_passwd_ends_every_session_of_the_account(two):
    """`user passwd alice` ends all of alice's sessions, this client's too; bob's stay."""
    logged_in(two)
    other = Client(two, "other")
    other.login()
    bobs = Client(two, "bob")
    bobs.login(BOB, BOB_PASSWORD)
    result = two.run("user", "passwd", USERNAME, "--password-stdin", input=NEW_PASSWORD + "\n")
    assert (result.code, result.stdout) == (0, f"Password set for {USERNAME}.\n"), result
    assert sessions(two, USERNAME) == []
    assert_not_logged_in(whoami(two))
    assert_not_logged_in(other.run("whoami"))
    assert bobs.row() is not None


def test_login_that_must_change_the_password_ends_the_others(two):
    """The login that must change the password ends every other session of the account."""
    older = Client(two, "older")
    older.login(BOB, BOB_PASSWORD)
    two.execute("UPDATE account SET must_change_password = ? WHERE username_key = ?", True, BOB)
    alices = Client(two, "alice")
    alices.login()
    result = two.run("login", input=f"{BOB}\n{BOB_PASSWORD}\n{NEW_PASSWORD}\n{NEW_PASSWORD}\n")
    assert (result.code, result.out_lines[0]) == (0, BOB_WELCOME), result
    assert result.stderr == "You must choose a new password before you continue.\n"
    _, token = read_session_file(two.session_file)
    assert [r["token_hash"] for r in sessions(two, BOB)] == [token_hash(token)]
    assert alices.row() is not None
    assert_not_logged_in(older.run("whoami"))


def test_user_disable_ends_the_accounts_sessions(two):
    """`user disable bob` ends bob's sessions (whoami: not logged in); alice's stay."""
    alices = logged_in(two)
    bobs = Client(two, "bob")
    bobs.login(BOB, BOB_PASSWORD)
    assert two.run("user", "disable", BOB).code == 0
    assert [r["id"] for r in sessions(two)] == [alices["id"]]
    assert_not_logged_in(bobs.run("whoami"))
    assert_asks_to_log_in(bobs.run(input=""))


def test_session_of_a_disabled_account_is_not_live(two):
    """A session row whose account is disabled (even if the row was somehow kept) does not
    log anyone in: whoami says not logged in, the bare flow asks to log in."""
    logged_in(two, BOB, BOB_PASSWORD)
    two.execute("UPDATE account SET disabled_at = ? WHERE username_key = ?", stamp(now()), BOB)
    assert_not_logged_in(whoami(two))
    assert_asks_to_log_in(bare(two))


def test_user_remove_ends_the_accounts_sessions(two):
    """`user remove bob --yes` deletes bob's sessions with him, leaves the foreign keys whole,
    and alice's sessions stay."""
    alices = logged_in(two)
    bobs = [Client(two, name) for name in ("b1", "b2")]
    for client in bobs:
        client.login(BOB, BOB_PASSWORD)
    assert two.run("user", "remove", BOB, "--yes").code == 0
    assert [r["id"] for r in sessions(two)] == [alices["id"]]
    assert two.query("SELECT count(*) FROM session") == [(1,)]
    assert two.foreign_key_violations() == []
    for client in bobs:
        assert_not_logged_in(client.run("whoami"))


def test_reset_ends_every_session(two):
    """`reset --yes` deletes every session with the accounts; whoami then says not logged in."""
    logged_in(two)
    bobs = Client(two, "bob")
    bobs.login(BOB, BOB_PASSWORD)
    assert two.run("reset", "--yes").code == 0
    assert two.query("SELECT count(*) FROM session") == [(0,)]
    assert_not_logged_in(whoami(two))
    assert_not_logged_in(bobs.run("whoami"))
    result = whoami(two, "--json")
    assert (result.code, result.stdout) == (1, '{"loggedIn":false}\n'), result


def test_user_show_counts_live_sessions(two):
    """`user show` ends with `Two-factor: off` and `Sessions: N` (live sessions of that account)."""
    for name in ("b1", "b2"):
        Client(two, name).login(BOB, BOB_PASSWORD)
    logged_in(two)
    result = two.run("user", "show", BOB)
    assert result.code == 0, result
    assert result.out_lines[-2:] == ["Two-factor: off", "Sessions: 2"]
    assert two.run("session", "revoke", "--user", BOB).code == 0
    assert two.run("user", "show", BOB).out_lines[-1] == "Sessions: 0"
    assert two.run("user", "show", USERNAME).out_lines[-1] == "Sessions: 1"
