"""Database file modes, the stored hash format, Django interop both ways, and the bare command from a pipe."""

import os
import re
import stat

import pytest

from conftest import (FULL_NAME, INPUT_ENDED, PASSWORD, USERNAME, WRONG_PASSWORD, Device, form)

WELCOME = f"Welcome back {FULL_NAME}!"
HASH_SHAPE = re.compile(r"^pbkdf2_sha256\$(\d+)\$([A-Za-z0-9]+)\$([A-Za-z0-9+/]{43}=)$")


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.sqlite_only  # the SQLite file's and its folders' modes
def test_created_file_and_folders_modes(device):
    """The database is created 0600 and every folder it creates 0700, even under umask 000."""
    db = device.root / "a" / "b" / "accounts.sqlite3"
    result = device.run("activate", "--database", str(db), input=form(), umask=0)
    assert result.code == 0, result
    assert mode(db) == 0o600
    assert mode(db.parent) == 0o700
    assert mode(db.parent.parent) == 0o700
    for sidecar in (db.parent / "accounts.sqlite3-wal", db.parent / "accounts.sqlite3-shm"):
        if sidecar.exists():
            assert mode(sidecar) == 0o600
    assert device.run("login", "--database", str(db), input=f"alice\n{PASSWORD}\n").code == 0


def test_stored_hash_format(activated):
    """The stored hash is Django's pbkdf2_sha256$<iterations>$<salt>$<base64> and hides the password."""
    stored = activated.stored_hash()
    match = HASH_SHAPE.match(stored)
    assert match, stored
    assert match.group(1) == "1000"
    assert len(match.group(2)) >= 22
    assert PASSWORD not in stored


def test_salts_differ(tmp_path):
    """Two activations with the same password store different salts."""
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    one, two = Device(tmp_path / "one"), Device(tmp_path / "two")
    hashes = []
    for d in (one, two):
        d.activate()
        hashes.append(HASH_SHAPE.match(d.stored_hash()).group(2))
    assert hashes[0] != hashes[1]


def test_product_hash_passes_django(activated, django_hashers):
    """A hash made by accounts passes Django's check_password; a wrong password does not."""
    stored = activated.stored_hash()
    assert django_hashers.check_password(PASSWORD, stored)
    assert not django_hashers.check_password(WRONG_PASSWORD, stored)


def test_product_hash_default_iterations_passes_django(device, django_hashers):
    """At the default count the stored hash has 1,200,000 iterations and passes Django."""
    device.activate(fast=False)
    stored = device.stored_hash()
    assert HASH_SHAPE.match(stored).group(1) == "1200000"
    assert django_hashers.check_password(PASSWORD, stored)


def test_django_hash_logs_in(activated, django_hashers):
    """A Django-made hash written into the database lets the user log in; a wrong password fails."""
    hasher = django_hashers.PBKDF2PasswordHasher()
    password = "a password made by django"
    encoded = hasher.encode(password, hasher.salt(), iterations=1000)
    activated.set_stored_hash(encoded)
    result = activated.login("alice", password)
    assert (result.code, result.stdout) == (0, WELCOME + "\n")
    assert activated.login("alice", PASSWORD).code == 1
    assert activated.stored_hash() == encoded


def test_django_default_hash_logs_in_and_is_upgraded(activated, django_hashers):
    """A Django default (make_password) hash logs in at default settings and is re-hashed to 1,200,000, still Django-valid."""
    password = "another password made by django"
    encoded = django_hashers.make_password(password)
    activated.set_stored_hash(encoded)
    result = activated.login("alice", password, fast=False)
    assert (result.code, result.stdout) == (0, WELCOME + "\n")
    upgraded = activated.stored_hash()
    assert HASH_SHAPE.match(upgraded).group(1) == "1200000"
    assert django_hashers.check_password(password, upgraded)


# The bare command without a terminal.

def test_bare_from_pipe(device):
    """Bare accounts from a pipe reads the answer, the form and the login, one line each."""
    stdin = "y\n" + form() + f"alice\n{PASSWORD}\n"
    result = device.run(input=stdin)
    assert result.code == 0, result
    assert result.stdout == f"Device activated for alice.\n{WELCOME}\n"
    assert result.stderr == "This device is not activated yet.\nLog in to continue.\n"


def test_bare_from_pipe_empty_answer_is_yes(device):
    """An empty answer line means yes."""
    result = device.run(input="\n" + form() + f"alice\n{PASSWORD}\n")
    assert result.code == 0
    assert device.status()["state"] == "Activated"


@pytest.mark.empty_database
def test_bare_from_pipe_no(device):
    """`n` from a pipe cancels: exit 1, nothing stored."""
    result = device.run(input="n\n" + form())
    assert (result.code, result.stdout) == (1, "")
    assert result.stderr == (
        "This device is not activated yet.\nActivation cancelled; nothing was stored.\n")
    device.assert_nothing_stored()


@pytest.mark.empty_database
def test_bare_from_pipe_invalid_form(device):
    """A failing form in the bare command from a pipe exits 1 and stores nothing."""
    result = device.run(input="y\n" + form(password="short"))
    assert result.code == 1
    assert result.stderr.splitlines()[-1] == "Password must be at least 15 characters!"
    device.assert_nothing_stored()


@pytest.mark.empty_database
def test_bare_from_pipe_input_ends(device):
    """Input ending in the middle of the bare command's form stores nothing, exit 1."""
    result = device.run(input="y\nalice\n")
    assert result.code == 1
    assert result.stderr.splitlines()[-1] == INPUT_ENDED
    device.assert_nothing_stored()


def test_bare_from_pipe_one_attempt(activated):
    """From a pipe the bare command allows a single login attempt."""
    result = activated.run(input=f"alice\n{WRONG_PASSWORD}\nalice\n{PASSWORD}\n")
    assert (result.code, result.stdout, result.stderr) == (1, "", "Invalid user name or password!\n")


def test_bare_flow_input_ends_at_login_after_activation(device):
    """From a pipe: answer, form, then end of input at login. The device IS activated, and the
    sentence says so (not 'nothing was stored')."""
    result = device.run(input="y\n" + form())
    assert result.code == 1
    assert result.err_lines[-1] == (
        "Input ended before the login; the device stays activated for alice. Run "
        "`accounts login` to log in.")
    assert device.status()["state"] == "Activated"


@pytest.mark.empty_database
def test_input_ends_at_the_question(device):
    result = device.run(input="")
    assert result.err_lines == [
        "This device is not activated yet.",
        "Input ended at the activation question; nothing was stored."]


def test_crlf_everywhere_from_a_pipe(device):
    """Lines ending in \\r\\n: the bare flow's answer, the form and the login."""
    result = device.run(input=("y\n" + form() + f"{USERNAME}\n{PASSWORD}\n").replace("\n", "\r\n"))
    assert (result.code, result.stdout) == (
        0, f"Device activated for alice.\nWelcome back {FULL_NAME}!\n"), result
    result = device.run("login", "--username", USERNAME, "--password-stdin",
                        input=PASSWORD + "\r\n")
    assert result.code == 0
