"""A login cache refreshed by every successful online login (`login`, `verify`, `pam-auth`):
the person's name, state and a verifier of this host's own (PBKDF2-SHA256 under the cache's
salt, then HKDF), never the server's hash or its digest; for a second factor the TOTP secret
sealed under a key drawn from the password, the last step and the unused recovery codes. A
failure the server gives a password the entry still takes, or a disabled account, removes it.

Oracles: sqlite3 reading the cache, the verifier and key computed here (cachehelp), the
server's rows read by the test, AES-GCM of the `cryptography` package, pyotp."""

import base64
import hashlib

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

import secondfactor
from cachehelp import CacheHost, sealing_key, verifier
from conftest import BOB, BOB_PASSWORD, FAST_ITERATIONS, FULL_NAME, PASSWORD, USERNAME, \
    store_query
from pamhelp import pam_auth

pytestmark = pytest.mark.postgresql_only

NEW_PASSWORD = "a different password for alice"


@pytest.fixture
def host(activated):
    host = CacheHost(activated)
    host.enable()
    return host


def server_hash(host) -> str:
    return store_query(host.device.db, "SELECT password_hash FROM account WHERE username_key = ?",
                       USERNAME)[0][0]


def test_login_writes_an_entry_of_the_hosts_own(host):
    result = host.login()
    assert (result.code, result.out_lines[0]) == (0, f"Welcome back {FULL_NAME}!"), result
    entry = host.entry()
    assert entry is not None
    assert (entry["username"], entry["full_name"], entry["disabled"], entry["must_change"]) == \
        (USERNAME, FULL_NAME, 0, 0)
    assert entry["iterations"] == int(FAST_ITERATIONS) and len(entry["salt"]) == 16
    assert entry["verifier"] == verifier(PASSWORD, entry["salt"], entry["iterations"])
    assert entry["sealed_secret"] is None and entry["last_step"] is None
    status = host.run("store", "cache", "status").out_lines
    assert "Entries: 1" in status and "Last contact: -" not in status, status


def test_the_cache_holds_neither_the_servers_hash_nor_its_digest(host):
    assert host.login().code == 0
    _, iterations, salt, digest = server_hash(host).split("$")
    content = host.file_bytes()
    for secret in (salt.encode(), digest.encode(), base64.b64decode(digest), PASSWORD.encode(),
                   hashlib.pbkdf2_hmac("sha256", PASSWORD.encode(), salt.encode(),
                                       int(iterations))):
        assert secret not in content
    entry = host.entry()
    assert entry["salt"] != salt.encode()


def test_a_verifier_is_made_again_only_for_a_new_server_hash(host):
    """While the server's hash stays, a login keeps the entry's salt and verifier (no second
    PBKDF2 of the same password); a password changed on the server gets a new salt and the new
    password's verifier at the next login."""
    assert host.login().code == 0
    first = host.entry()
    assert host.run("verify", "--username", USERNAME, "--password-stdin",
                    input=PASSWORD).code == 0
    second = host.entry()
    assert (first["salt"], first["verifier"]) == (second["salt"], second["verifier"])
    assert second["refreshed_at"] >= first["refreshed_at"]
    changed = host.run("user", "passwd", USERNAME, "--password-stdin", input=NEW_PASSWORD + "\n")
    assert changed.code == 0, changed
    assert host.login(USERNAME, NEW_PASSWORD).code == 0
    third = host.entry()
    assert third["salt"] != second["salt"]
    assert third["verifier"] == verifier(NEW_PASSWORD, third["salt"], third["iterations"])


def test_pam_auth_refreshes_the_cache_it_is_given(host):
    result = pam_auth(host.device, args=["pam-auth", *host.device.pam_args(), "--login-cache",
                                         str(host.path)])
    assert (result.code, result.stdout, result.stderr) == (0, "", ""), result
    entry = host.entry()
    assert entry["verifier"] == verifier(PASSWORD, entry["salt"], entry["iterations"])


def test_a_second_factor_is_kept_sealed_under_the_password(host):
    enrollment = secondfactor.enabled(host.device)
    code = secondfactor.oath(enrollment.key)
    result = host.login(code=code)
    assert result.code == 0, result
    entry = host.entry()
    sealed = entry["sealed_secret"]
    key = sealing_key(PASSWORD, entry["salt"], entry["iterations"])
    secret = AESGCM(key).decrypt(sealed[:12], sealed[12:],
                                 f"accounts offline totp {USERNAME}".encode())
    assert base64.b32encode(secret).decode().rstrip("=") == enrollment.key.rstrip("=")
    step = store_query(host.device.db, "SELECT last_step FROM second_factor")[0][0]
    assert entry["last_step"] == step
    unused = store_query(host.device.db, "SELECT code_hash FROM recovery_code WHERE used_at "
                         "IS NULL ORDER BY code_hash")
    assert sorted(entry["codes"]) == sorted(bytes(row[0]) for row in unused) and len(unused) == 10


def test_a_password_changed_on_the_server_removes_the_entry(host):
    host.device.add_user()
    assert host.login(BOB, BOB_PASSWORD).code == 0
    wrong = host.login(BOB, "not the password, but long enough")
    assert wrong.code == 1 and host.entry(BOB) is not None, wrong
    changed = host.run("user", "passwd", BOB, "--password-stdin", input=NEW_PASSWORD + "\n")
    assert changed.code == 0, changed
    old = host.login(BOB, BOB_PASSWORD)
    assert old.code == 1, old
    assert host.entry(BOB) is None


def test_an_account_disabled_on_the_server_loses_its_entry(host):
    host.device.add_user()
    assert host.login(BOB, BOB_PASSWORD).code == 0 and host.entry(BOB) is not None
    assert host.run("user", "disable", BOB).code == 0
    assert host.login(BOB, BOB_PASSWORD).code == 1
    assert host.entry(BOB) is None
