"""The key file beside an SQLite database that seals the TOTP secrets: a copy of the database
without it, and a key file or folder that cannot be trusted, each refused with exit 3 and one
sentence that names it. A PostgreSQL store has none: its server keeps the secrets
(test_second_factor_server.py)."""

import os
import pathlib
import secrets
import shutil
import sqlite3
import stat

import pytest

from conftest import BOB, BOB_PASSWORD, NOBODY_UID, Result
from secondfactor import (ON, Live, authorized_home, enabled, failures, login, oath, recovered,
                          rewind)

pytestmark = pytest.mark.sqlite_only


# The key file.

def copy_database(device, folder: pathlib.Path) -> pathlib.Path:
    """A consistent copy of the database (SQLite's backup) in another folder, private like the
    original, without the key file."""
    folder.mkdir(mode=0o700)
    copy = folder / "accounts.sqlite3"
    source = sqlite3.connect(device.db)
    target = sqlite3.connect(copy)
    try:
        source.backup(target)
    finally:
        target.close()
        source.close()
    os.chmod(copy, 0o600)
    return copy


def key_file_error(result, key_path):
    """Exit 3 with one sentence on stderr that names the key file."""
    assert (result.code, result.stdout) == (3, ""), result
    assert len(result.err_lines) == 1, result
    assert f"key file {key_path}" in result.stderr, result


def test_copied_database_without_key_file(activated):
    """A database copied without its key file: a TOTP code cannot be checked (exit 3 naming the
    key file, nothing counted); a recovery code still logs in; a different key of the right form
    is refused too; with the key file copied as well the TOTP login works. PostgreSQL: the same
    for another host of the same store (another HOME, so no ~/.config/accounts/postgresql.key)."""
    enrollment = enabled(activated)
    if activated.postgresql:
        other_home = activated.root / "other-host"
        other_home.mkdir(mode=0o700)
        env = activated.env(HOME=str(other_home))
        key_path = other_home / ".config" / "accounts" / "postgresql.key"
        assert not key_path.exists()
        key_path.parent.mkdir(mode=0o700, parents=True)
    else:
        copy = copy_database(activated, activated.root / "elsewhere")
        env = activated.env(ACCOUNTS_DATABASE=str(copy))
        key_path = pathlib.Path(str(copy) + ".key")
        assert not key_path.exists()

    result = login(activated, oath(enrollment.key), env=env)
    key_file_error(result, key_path)
    assert failures(activated, env=env) == 0

    recovered(login(activated, enrollment.codes[0], env=env), 9)

    key_path.write_text(secrets.token_hex(32) + "\n")
    os.chmod(key_path, 0o600)
    key_file_error(login(activated, oath(enrollment.key), env=env), key_path)

    shutil.copy2(activated.key_file, key_path)
    assert stat.S_IMODE(os.stat(key_path).st_mode) == 0o600
    authorized_home(login(activated, oath(enrollment.key), env=env))


def test_key_file_readable_by_others_refused(activated):
    """The key file made mode 0644: a TOTP login fails exit 3 naming it; back to 0600 it works."""
    enrollment = enabled(activated)
    os.chmod(activated.key_file, 0o644)
    key_file_error(login(activated, oath(enrollment.key)), activated.key_file)
    assert failures(activated) == 0
    os.chmod(activated.key_file, 0o600)
    authorized_home(login(activated, oath(enrollment.key)))


def enable_bob_refused(device, env=None) -> Result:
    """bob's `2fa enable` where the key file cannot be used: his password, then a right code if
    a key is shown at all (a refusal may come before it or after the code)."""
    live = Live(device, "2fa", "enable", "--username", BOB, "--qr", "none", env=env)
    live.send(BOB_PASSWORD)
    shown = live.read_until("Key: ", may_end=True)
    if shown and shown[-1].startswith("Key: "):
        live.send(oath(shown[-1][len("Key: "):]))
    return live.finish()


def test_enrollment_with_a_key_file_readable_by_others(activated):
    """With the key file made 0644, a second account's enrollment is refused: exit 3 naming the
    key file, nothing stored for bob (whether it stops before showing a key or after the
    code)."""
    enabled(activated)
    activated.add_user()
    os.chmod(activated.key_file, 0o644)
    result = enable_bob_refused(activated)
    assert result.code == 3, result
    assert len(result.err_lines) == 1 and f"key file {activated.key_file}" in result.stderr, \
        result
    assert ON.format(BOB) not in result.stdout
    assert activated.query("SELECT count(*) FROM second_factor") == [(1,)]


def test_damaged_key_file_refused(activated):
    """A key file that is not 64 hex characters: exit 3 naming it."""
    enrollment = enabled(activated)
    activated.key_file.write_text("not a key\n")
    key_file_error(login(activated, oath(enrollment.key)), activated.key_file)


def test_key_file_symlink_refused(activated):
    """A symlink in place of the key file (to the real key's bytes) is not a regular file:
    exit 3 naming the key file."""
    enrollment = enabled(activated)
    real = activated.root / "real.key"
    shutil.copy2(activated.key_file, real)
    activated.key_file.unlink()
    activated.key_file.symlink_to(real)
    key_file_error(login(activated, oath(enrollment.key)), activated.key_file)


def test_key_file_in_a_folder_others_may_write_refused(activated):
    """A key file (ACCOUNTS_KEY_FILE) in a folder others may write that is not sticky, or in a
    folder another user owns, is refused as the database would be there: a TOTP login exits 3
    with the sentence naming the folder and the fix, nothing counted; in a sticky folder (like
    /tmp) it is used. A second factor is not turned on with a key file to be made under such a
    folder, and nothing is made there."""
    enrollment = enabled(activated)
    shared = activated.root / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    key_path = shared / "accounts.key"
    shutil.copy2(activated.key_file, key_path)
    env = activated.env(ACCOUNTS_KEY_FILE=str(key_path))
    result = login(activated, oath(enrollment.key), env=env)
    assert (result.code, result.stdout, result.stderr) == (
        3, "", f"Cannot use the key file {key_path}: other users may write its folder {shared} "
        f"(mode 777, not sticky) and replace the file. Run `chmod go-w {shared}` or keep it in a "
        "private folder.\n"), result
    assert failures(activated) == 0
    shared.chmod(0o1777)
    authorized_home(login(activated, oath(enrollment.key), env=env))

    rewind(activated)
    theirs = activated.root / "theirs"
    theirs.mkdir()
    shutil.copy2(activated.key_file, theirs / "accounts.key")
    os.chown(theirs, NOBODY_UID, NOBODY_UID)
    env = activated.env(ACCOUNTS_KEY_FILE=str(theirs / "accounts.key"))
    result = login(activated, oath(enrollment.key), env=env)
    assert (result.code, result.stdout, result.stderr) == (
        3, "", f"Cannot use the key file {theirs}/accounts.key: its folder {theirs} belongs to "
        "the user nobody, who could replace the file. Keep it in a folder of your own.\n"), result
    assert failures(activated) == 0

    activated.add_user()
    open_folder = activated.root / "open"
    open_folder.mkdir()
    open_folder.chmod(0o777)
    new_key = open_folder / "keys" / "accounts.key"
    result = enable_bob_refused(activated, env=activated.env(ACCOUNTS_KEY_FILE=str(new_key)))
    assert result.code == 3, result
    assert result.err_lines == [
        f"Cannot use the key file {new_key}: other users may write its folder {open_folder} "
        f"(mode 777, not sticky) and replace the file. Run `chmod go-w {open_folder}` or keep "
        "it in a private folder."], result
    assert ON.format(BOB) not in result.stdout
    assert list(open_folder.iterdir()) == []
    assert activated.query("SELECT count(*) FROM second_factor") == [(1,)]
