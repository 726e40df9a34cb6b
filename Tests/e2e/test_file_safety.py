"""The SQLite database is used only when it is ours and private: files and companions another
user made or may read, folders another user owns or may write, and symbolic links are refused
before anything is written. Where another OS user is involved (a shared folder, a planted file or
link) that user's part runs as `nobody` through setpriv."""

import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest

from conftest import FULL_NAME, NOBODY, NOBODY_UID, PASSWORD, USERNAME, form, nobody_binary

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


# Files and folders that are not ours, or not private.


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


# A final symbolic link is never followed.


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
