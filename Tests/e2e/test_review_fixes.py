"""Issue 8: the findings of an outside security review and of a newcomer's trial, each met by the
real binary. Cases where another OS user is involved (a shared folder, a planted file or link)
run that user's part as `nobody` through setpriv."""

import os
import pathlib
import pwd
import resource
import shutil
import sqlite3
import subprocess
import tempfile

import pexpect
import pytest

from conftest import (BIN, EMAIL, FULL_NAME, INVALID, NOBODY, NOBODY_UID, PASSWORD, TOO_MANY,
                      USERNAME, WRONG_PASSWORD, finish, form, nobody_binary, screen,
                      store_execute)

STORAGE = 3


def as_nobody(*command, umask=None):
    """Runs a shell command as the second user."""
    script = (f"umask {umask:o}; " if umask is not None else "") + " ".join(command)
    subprocess.run([*NOBODY, "sh", "-c", script], check=True)


@pytest.fixture
def shared():
    """A folder like /tmp: everyone may write it, the sticky bit keeps each user's files."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="accounts-shared-", dir="/tmp"))
    os.chmod(folder, 0o1777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def activate_at(device, db, expect=0):
    result = device.run("activate", "--database", str(db), input=form())
    assert result.code == expect, result
    return result


def names(folder):
    return sorted(p.name for p in pathlib.Path(folder).iterdir())


# §1: files that are not ours, or not private.

@pytest.mark.sqlite_only  # the SQLite file's owner and mode, and its companions'
def test_companion_planted_by_another_user_is_refused(device, shared):
    """Another user pre-creates `db-wal` mode 0666 in a shared folder to read the hash from it:
    refused before anything is written, naming the file and its owner; the planted file stays
    empty (no hash reaches it) and no database is left behind."""
    as_nobody(f"touch {shared}/db-wal", umask=0)
    result = activate_at(device, shared / "db", expect=STORAGE)
    assert result.stderr == (
        f"Cannot use the database {shared}/db: {shared}/db-wal belongs to the user nobody, not "
        f"to you (root). If it is yours, run `chown root {shared}/db-wal`; otherwise use it as "
        "nobody.\n")
    assert names(shared) == ["db-wal"]
    assert (shared / "db-wal").stat().st_size == 0


@pytest.mark.sqlite_only  # the SQLite file's owner and mode, and its companions'
def test_database_of_another_user_is_refused(device, shared):
    """A database that another user made (in a shared folder) is not read or written."""
    subprocess.run([*NOBODY, nobody_binary(), "activate", "--database", f"{shared}/db",
                    "--username", "mallory", "--full-name", "M", "--email", "m@example.org",
                    "--password-stdin"], input=PASSWORD + "\n", text=True, check=True,
                   env=device.env())
    before = (shared / "db").read_bytes()
    for args in (["status"], ["login"], ["log"]):
        result = device.run(*args, "--database", str(shared / "db"), input=f"mallory\n{PASSWORD}\n")
        assert result.code == STORAGE
        assert f"{shared}/db belongs to the user nobody, not to you (root)" in result.stderr
    assert (shared / "db").read_bytes() == before


@pytest.mark.sqlite_only  # the SQLite file's owner and mode, and its companions'
@pytest.mark.parametrize("args", [["status"], ["log"], ["login"], ["reset", "--yes"]])
def test_database_readable_by_others_is_refused(activated, args):
    """A database others may read (mode 0644) is refused with the chmod that fixes it, byte for
    byte untouched, no companion created."""
    activated.db.chmod(0o644)
    before = activated.db.read_bytes()
    result = activated.run(*args, input=f"{USERNAME}\n{PASSWORD}\n")
    assert (result.code, result.stdout) == (STORAGE, "")
    assert result.stderr == (
        f"Cannot use the database {activated.db}: other users may read or write {activated.db} "
        f"(mode 644). Run `chmod 600 {activated.db}` to make it private.\n")
    assert activated.db.read_bytes() == before
    assert names(activated.db.parent) == [activated.db.name]


@pytest.mark.sqlite_only  # the SQLite file's owner and mode, and its companions'
def test_companion_readable_by_others_is_refused(activated):
    """A -wal holding data that others may read is refused too."""
    wal = pathlib.Path(str(activated.db) + "-wal")
    wal.write_bytes(b"\0" * 32)
    wal.chmod(0o644)
    result = activated.login()
    assert result.code == STORAGE
    assert f"other users may read or write {wal} (mode 644)" in result.stderr


@pytest.mark.sqlite_only  # the SQLite file's owner and mode, and its companions'
def test_empty_file_of_our_own_is_made_private(device):
    """A file made by `touch` under umask 022 (0644, empty) is made private and used."""
    device.db.parent.mkdir(mode=0o700)
    subprocess.run(["touch", str(device.db)], check=True, preexec_fn=lambda: os.umask(0o022))
    assert device.db.stat().st_mode & 0o777 == 0o644
    device.activate()
    assert device.db.stat().st_mode & 0o777 == 0o600
    assert device.login().code == 0


@pytest.mark.sqlite_only  # the SQLite file's owner and mode, and its companions'
def test_folder_others_may_write_is_refused(device, tmp_path):
    """A folder others may write (not sticky): refused with the chmod that fixes it; nothing is
    created in it. The same folder made sticky is fine."""
    folder = tmp_path / "open"
    folder.mkdir()
    folder.chmod(0o777)
    result = activate_at(device, folder / "db", expect=STORAGE)
    assert result.stderr == (
        f"Cannot use the database {folder}/db: other users may write its folder {folder} (mode "
        f"777, not sticky) and replace the file. Run `chmod go-w {folder}` or choose a private "
        "folder with --database.\n")
    assert names(folder) == []
    folder.chmod(0o1777)
    activate_at(device, folder / "db")
    assert (folder / "db").stat().st_mode & 0o777 == 0o600


@pytest.mark.sqlite_only  # the SQLite file's owner and mode, and its companions'
def test_folder_of_another_user_is_refused(device, tmp_path):
    """A folder another user owns: that user could replace the file."""
    folder = tmp_path / "theirs"
    folder.mkdir()
    os.chown(folder, NOBODY_UID, NOBODY_UID)
    result = activate_at(device, folder / "db", expect=STORAGE)
    assert result.stderr == (
        f"Cannot use the database {folder}/db: its folder {folder} belongs to the user nobody, "
        "who could replace the file. Choose a folder of your own with --database.\n")
    assert names(folder) == []


# §2: a final symbolic link is never followed.

@pytest.mark.sqlite_only  # a symbolic link in the SQLite path
def test_symlink_planted_by_another_user_is_refused(device, shared, tmp_path):
    """The reported attack: in a folder another user can write, that user points `db` at a
    victim's empty file; root running with --database there must not turn it into a database."""
    victim = tmp_path / "victim"
    victim.mkdir(mode=0o700)
    (victim / "empty").touch(mode=0o600)
    as_nobody(f"ln -s {victim}/empty {shared}/db")
    result = activate_at(device, shared / "db", expect=STORAGE)
    assert result.stderr == (
        f"Cannot use the database {shared}/db: it is a symbolic link, which accounts does not "
        "follow. Name the file itself with --database (links to folders are fine).\n")
    assert (victim / "empty").stat().st_size == 0
    assert names(victim) == ["empty"]


@pytest.mark.sqlite_only  # a symbolic link in the SQLite path
@pytest.mark.parametrize("args", [["status"], ["login"]])
def test_symlink_to_our_own_database_is_refused(activated, args):
    link = activated.root / "link.sqlite3"
    link.symlink_to(activated.db)
    result = activated.run(*args, "--database", str(link), input=f"{USERNAME}\n{PASSWORD}\n")
    assert result.code == STORAGE
    assert "it is a symbolic link" in result.stderr


@pytest.mark.sqlite_only  # a symbolic link in the SQLite path
def test_links_to_folders_are_followed(activated):
    """Folders along the way may be links."""
    link = activated.root / "folder-link"
    link.symlink_to(activated.db.parent)
    result = activated.run("login", "--database", str(link / activated.db.name),
                           input=f"{USERNAME}\n{PASSWORD}\n")
    assert (result.code, result.stdout) == (0, f"Welcome back {FULL_NAME}!\n")


# §3: never an SQLite URI.

def test_file_uri_flag_is_a_plain_file_name(device):
    """`--database 'file:x?nolock=1'` names a file called that in the current folder."""
    result = device.run("activate", "--database", "file:x?nolock=1", input=form())
    assert result.code == 0, result
    plain = device.root / "file:x?nolock=1"
    assert plain.is_file()
    assert not (device.root / "x").exists()
    with sqlite3.connect(f"file:{plain}?mode=ro".replace("?nolock", "%3Fnolock"), uri=True) as db:
        assert db.execute("SELECT state FROM activation").fetchone() == ("Activated",)


def test_home_that_is_a_uri_is_not_used(device):
    """A HOME that is not an absolute path (`file:…#`) is ignored: the home folder comes from the
    user database, so the path is absolute and never a URI."""
    env = device.env(database=False, XDG_DATA_HOME=None,
                     HOME=f"file:{device.root}/h?nolock=1#")
    result = device.run("status", env=env)
    home = pwd.getpwuid(os.getuid()).pw_dir
    assert f"{home}/.local/share/accounts/accounts.sqlite3" in result.stdout + result.stderr
    assert "file:" not in result.stdout + result.stderr
    assert not (device.root / "h").exists()


# §5: text from the database reaches the terminal escaped.

def tamper(db, sql, *args):
    store_execute(db, sql, *args)


def test_home_escapes_a_tampered_full_name(activated):
    tamper(activated.db, "UPDATE account SET full_name = ?", "Eve\x1b]0;pwned\x07\x1b[31m\u202e")
    result = activated.login()
    assert result.code == 0
    assert result.stdout == "Welcome back Eve\\u{1b}]0;pwned\\u{7}\\u{1b}[31m\\u{202e}!\n"


def test_reset_warning_counts_the_accounts(activated):
    """The reset warning at a terminal counts the accounts (issue 10) and shows no raw escape."""
    tamper(activated.db, "UPDATE account SET username = ?", "al\x1b[2Jice")
    child = activated.spawn("reset")
    child.expect_exact('Type "reset" to confirm: ')
    child.sendline("no")
    assert finish(child) == 1
    shown = child.logfile_read.getvalue()
    assert "This deletes every account (1) and makes this device Public again." in shown
    assert "\x1b" not in shown


def test_account_list_and_show_escape_a_tampered_user_name(activated):
    """A user name with an escape sequence, written into the database behind the program's back,
    is shown escaped by `user list` and `user show` (issue 10)."""
    tamper(activated.db, "UPDATE account SET username = ?", "al\x1b[2Jice")
    for args in (("user", "list"), ("user", "show", "alice")):
        result = activated.run(*args)
        assert result.code == 0, result
        assert "al\\u{1b}[2Jice" in result.stdout, result.stdout
        assert "\x1b" not in result.stdout + result.stderr


def test_paths_are_escaped(device, tmp_path):
    folder = tmp_path / "a\x1b[31m\nb"
    result = device.run("status", "--database", str(folder / "db"))
    assert result.code == 0
    assert "\x1b" not in result.stdout and "a\\u{1b}[31m\\u{a}b" in result.stdout
    assert len(result.out_lines) == 2  # the newline in the path forges no line


# §6 and §7: stored values that would trap or stall.

def test_tampered_counter_still_counts_and_locks(activated):
    """failures at the largest value its column holds (SQLite: Int64.max; PostgreSQL: that of
    the column's type): no crash, the attempt is counted and locks the name."""
    assert activated.login(USERNAME, WRONG_PASSWORD).code == 1
    largest = 2**63 - 1
    if activated.postgresql:
        (kind,) = activated.query(
            "SELECT data_type::text FROM information_schema.columns WHERE table_schema = "
            "'accounts' AND table_name = 'login_throttle' AND column_name = 'failures'")[0]
        largest = {"bigint": 2**63 - 1, "integer": 2**31 - 1, "smallint": 2**15 - 1}[kind]
    tamper(activated.db, "UPDATE login_throttle SET failures = ?", largest)
    result = activated.login(USERNAME, WRONG_PASSWORD)
    assert result.code == 4, result
    assert result.err_lines[0] == INVALID and TOO_MANY in result.err_lines[1]
    assert "Fatal error" not in result.stderr
    assert [e["event"] for e in activated.events()][-2:] == ["login_failure", "lockout"]


def test_absurd_iteration_count_is_a_damaged_hash(activated):
    """A stored count of 2^31-1 would cost minutes: the usual answer at the usual cost, and the
    log tells the administrator the hash is damaged."""
    stored = activated.stored_hash().split("$")
    tamper(activated.db, "UPDATE account SET password_hash = ?",
           "$".join([stored[0], str(2**31 - 1), stored[2], stored[3]]))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = activated.login()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert (result.code, result.stderr) == (1, INVALID + "\n")
    assert after.ru_utime - before.ru_utime < 10  # 2^31-1 iterations would take ~30 minutes
    last = activated.events()[-1]
    assert last["event"] == "login_failure"
    assert "stored password hash is damaged" in last["detail"]
    assert "stored password hash is damaged" in activated.run("log").stdout


# §10: hygiene.

@pytest.mark.sqlite_only  # the SQLite file's free pages (a PostgreSQL server's files are its own)
def test_reset_leaves_no_trace_of_the_hash(activated):
    """After reset the deleted user's hash is overwritten, not left in a free page."""
    salt = activated.stored_hash().split("$")[2]
    assert activated.run("reset", "--yes").code == 0
    for file in activated.db.parent.iterdir():
        assert salt.encode() not in file.read_bytes(), file


def test_impossible_names_are_not_stored(activated):
    """An 8,000-character name at the prompt gets the usual answer and is not written."""
    result = activated.login("n" * 8000, WRONG_PASSWORD)
    assert (result.code, result.stderr) == (1, INVALID + "\n")
    assert activated.query("SELECT count(*) FROM login_throttle") == [(0,)]
    assert activated.query("SELECT max(length(username)) FROM audit_event") == [(5,)]


# §12, §13, §18, §19, §20: the newcomer's trial.

def test_bare_flow_input_ends_at_login_after_activation(device):
    """From a pipe: answer, form, then end of input at login. The device IS activated, and the
    sentence says so (not 'nothing was stored')."""
    result = device.run(input="y\n" + form())
    assert result.code == 1
    assert result.err_lines[-1] == (
        "Input ended before the login; the device stays activated for alice. Run "
        "`accounts login` to log in.")
    assert device.status()["state"] == "Activated"


def test_input_ends_at_the_question(device):
    result = device.run(input="")
    assert result.err_lines == [
        "This device is not activated yet.",
        "Input ended at the activation question; nothing was stored."]


def test_first_login_counts_failures_since_activation(activated):
    assert activated.login(USERNAME, WRONG_PASSWORD).code == 1
    assert activated.login().out_lines == [
        f"Welcome back {FULL_NAME}!", "1 failed attempt since activation"]


def test_locked_name_is_told_before_the_password(activated):
    """At a terminal a locked name is refused right after the user name: no Password prompt."""
    for _ in range(5):
        activated.login(USERNAME, WRONG_PASSWORD)
    child = activated.spawn("login")
    child.expect_exact("User name: ")
    child.sendline(USERNAME)
    assert finish(child) == 4
    shown = screen(child)
    assert TOO_MANY in shown and "Password" not in shown


def test_crlf_everywhere_from_a_pipe(device):
    """Lines ending in \\r\\n: the bare flow's answer, the form and the login."""
    result = device.run(input=("y\n" + form() + f"{USERNAME}\n{PASSWORD}\n").replace("\n", "\r\n"))
    assert (result.code, result.stdout) == (
        0, f"Device activated for alice.\nWelcome back {FULL_NAME}!\n"), result
    result = device.run("login", "--username", USERNAME, "--password-stdin",
                        input=PASSWORD + "\r\n")
    assert result.code == 0


def test_terminal_names_the_empty_fields(device):
    child = device.spawn("activate")
    for prompt, text in (("User name: ", USERNAME), ("Full name: ", ""), ("E-mail address: ", "")):
        child.expect_exact(prompt)
        child.sendline(text)
    for prompt in ("Password: ", "Password again: "):
        child.expect_exact(prompt)
        child.sendline(PASSWORD)
    child.expect_exact("Please fill all fields!\r\nEmpty: Full name, E-mail address.\r\n")
    child.expect_exact(f"User name [{USERNAME}]: ")
    child.sendeof()
    assert finish(child) == 1


# §14, §15, §17.

@pytest.mark.parametrize("value", ["5", "abc", "1e6", "-1000", "100000001"])
@pytest.mark.parametrize("args", [["activate"], ["status"]])
def test_unusable_iteration_setting_is_a_usage_error(device, value, args):
    env = device.env(ACCOUNTS_PBKDF2_ITERATIONS=value)
    result = device.run(*args, input=form(), env=env)
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == (
        f'ACCOUNTS_PBKDF2_ITERATIONS must be a whole number from 1000 to 100000000, not "{value}".\n')
    assert not device.db.exists()


def test_log_json_always_has_every_key(activated):
    for event in activated.events():
        assert list(event) == ["time", "event", "user", "detail"]
    assert activated.events()[0]["detail"] is None


def test_unlock_on_a_missing_database_creates_nothing(device):
    result = device.run("unlock", USERNAME)
    assert (result.code, result.stdout) == (1, "")
    assert result.stderr == (
        f"No database exists at {device.db}; nothing was changed. Check --database or "
        "ACCOUNTS_DATABASE.\n")
    assert device.nothing_created()


def test_unlock_refuses_an_impossible_name(activated):
    result = activated.run("unlock", "two words")
    assert (result.code, result.stderr) == (
        1, "User name must be 1 to 64 letters, digits, '.', '_' or '-'!\n")
    assert [e["event"] for e in activated.events()] == ["activation"]
