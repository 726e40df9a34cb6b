"""Where the store is when neither --database nor ACCOUNTS_DATABASE names one: root's is
/var/lib/accounts/accounts.sqlite3 (the place the PAM examples name), another user's is in its XDG
data folder, and root's store at its former default (the XDG path) is kept and pointed at until
it is moved. Root's runs see a /var/lib of the test's own, bind-mounted in a private mount
namespace (`unshare --mount`), so the machine's /var/lib/accounts is never touched; other users'
runs are `nobody`'s, with a home folder it owns."""

import os
import pathlib
import pwd
import shutil
import stat
import subprocess
import tempfile

import pytest

from conftest import BIN, NOBODY, NOBODY_UID, PASSWORD, USERNAME, form, nobody_binary

SYSTEM = "/var/lib/accounts/accounts.sqlite3"
# Binds the test's folder ($0) over /var/lib in a mount namespace of its own, then runs "$@".
PRIVATE_VAR_LIB = 'mount --bind "$0" /var/lib && exec "$@"'

pytestmark = pytest.mark.sqlite_only  # the SQLite file a run chooses by itself


def mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def var_lib(device) -> pathlib.Path:
    """The folder root's runs see as /var/lib."""
    folder = device.root / "var-lib"
    folder.mkdir()
    os.chmod(folder, 0o755)
    return folder


def as_root(device, var_lib, *args, input=None):
    """Runs the binary as root with no database named, /var/lib being `var_lib`."""
    proc = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", PRIVATE_VAR_LIB,
         str(var_lib), BIN, *args],
        input=input, stdin=subprocess.DEVNULL if input is None else None, capture_output=True,
        text=True, env=device.env(database=False), cwd=str(device.root), timeout=60)
    return proc


@pytest.fixture
def nobody_home():
    """A home folder `nobody` owns."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="accounts-nobody-", dir="/tmp"))
    os.chown(folder, NOBODY_UID, NOBODY_UID)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def as_nobody(device, *args, input=None, **variables):
    """Runs the binary as `nobody` with no database named."""
    env = device.env(database=False, **variables)
    return subprocess.run(
        [*NOBODY, nobody_binary(), *args], input=input,
        stdin=subprocess.DEVNULL if input is None else None, capture_output=True, text=True,
        env=env, cwd="/", timeout=60)


def test_root_store_is_in_var_lib(device, var_lib):
    """Root's store is /var/lib/accounts/accounts.sqlite3: a folder of root's, 0700, and a file
    0600; nothing is made in root's XDG folder."""
    result = as_root(device, var_lib, "status")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == f"State: Public\nDatabase: {SYSTEM} (no database exists at this path)\n"
    result = as_root(device, var_lib, "activate", input=form())
    assert result.returncode == 0, result
    folder = var_lib / "accounts"
    assert mode(folder) == 0o700 and folder.stat().st_uid == 0
    assert mode(folder / "accounts.sqlite3") == 0o600
    assert not (device.xdg / "accounts").exists()
    result = as_root(device, var_lib, "status")
    assert (result.returncode, result.stdout, result.stderr) == (
        0, f"State: Activated\nDatabase: {SYSTEM}\n", "")


def test_other_user_keeps_xdg_data_home(device, nobody_home):
    """Another user's store is $XDG_DATA_HOME/accounts/accounts.sqlite3, made 0700 and 0600."""
    xdg = nobody_home / "xdg"
    result = as_nobody(device, "status", HOME=str(nobody_home), XDG_DATA_HOME=str(xdg))
    assert result.stdout == (
        f"State: Public\nDatabase: {xdg}/accounts/accounts.sqlite3 (no database exists at this path)\n")
    result = as_nobody(device, "activate", input=form(), HOME=str(nobody_home),
                       XDG_DATA_HOME=str(xdg))
    assert result.returncode == 0, result
    assert mode(xdg / "accounts") == 0o700
    assert mode(xdg / "accounts" / "accounts.sqlite3") == 0o600


def test_other_user_keeps_home_without_xdg(device, nobody_home):
    """Without XDG_DATA_HOME another user's store is ~/.local/share/accounts/accounts.sqlite3."""
    result = as_nobody(device, "status", HOME=str(nobody_home), XDG_DATA_HOME=None)
    assert result.stdout == (
        f"State: Public\nDatabase: {nobody_home}/.local/share/accounts/accounts.sqlite3 "
        "(no database exists at this path)\n")


def test_home_that_is_a_uri_is_not_used(device):
    """A HOME that is not an absolute path (`file:…#`) is ignored: the home folder comes from the
    user database, so the path is absolute and never a URI."""
    result = as_nobody(device, "status", XDG_DATA_HOME=None,
                       HOME=f"file:{device.root}/h?nolock=1#")
    home = pwd.getpwuid(NOBODY_UID).pw_dir
    assert f"{home}/.local/share/accounts/accounts.sqlite3" in result.stdout + result.stderr
    assert "file:" not in result.stdout + result.stderr
    assert not (device.root / "h").exists()


def test_former_root_store_is_kept_until_moved(device, var_lib):
    """Root's store at its former default (the XDG path) is used while /var/lib/accounts holds
    none, and every command says how to move it; once `store copy` has made the system one, that
    one is used, and the note says the former one is still there."""
    former = device.xdg / "accounts" / "accounts.sqlite3"
    assert device.run("activate", "--database", str(former), input=form()).code == 0
    moving = (f"Note: this database is at root's former default place {former}; move it to "
              f"{SYSTEM} with accounts store copy --from {former} --to {SYSTEM} (and copy "
              f"{former}.key to {SYSTEM}.key if it exists).\n")
    result = as_root(device, var_lib, "status")
    assert (result.returncode, result.stdout, result.stderr) == (
        0, f"State: Activated\nDatabase: {former}\n", moving)
    result = as_root(device, var_lib, "verify", "--username", USERNAME, "--password-stdin",
                     input=f"{PASSWORD}\n")
    assert (result.returncode, result.stderr) == (0, moving)
    assert not (var_lib / "accounts").exists()

    result = as_root(device, var_lib, "store", "copy", "--from", str(former), "--to", SYSTEM)
    assert result.returncode == 0, result
    assert mode(var_lib / "accounts") == 0o700
    assert mode(var_lib / "accounts" / "accounts.sqlite3") == 0o600
    left = (f"Note: another database is still at root's former default place {former}; {SYSTEM} "
            "is used, so remove the former one once nothing in it is needed.\n")
    result = as_root(device, var_lib, "status")
    assert (result.returncode, result.stdout, result.stderr) == (
        0, f"State: Activated\nDatabase: {SYSTEM}\n", left)
    result = as_root(device, var_lib, "verify", "--username", USERNAME, "--password-stdin",
                     input=f"{PASSWORD}\n")
    assert (result.returncode, result.stderr) == (0, left)
    assert former.is_file()
