"""A stolen host role and the password hashes (PostgreSQL migration v7). The host role reads each
hash sealed: a SHA-256 of the whole hash and the hash with its digest masked, which is enough to
check a typed password and not enough to stand in for one. The steps that act on a checked
password (recording a login, changing one's password, turning one's second factor on or off)
refuse the host role without the whole hash, and take it with.

Oracles: psql as the host role, the administrator role and the owner; Python's hashlib and the
system's libcrypt recomputing the whole hash from the sealed one's setting, as a host does."""

import base64
import ctypes
import ctypes.util
import hashlib
import re
import subprocess

import pytest

from conftest import PASSWORD, USERNAME
from pgcluster import as_role, login
from pgcluster import client, pg, pgdb, roles  # noqa: F401

pytestmark = pytest.mark.postgresql_only

SEALED = re.compile(r"sealed\$([0-9a-f]{64})\$(.+)")


def sha256_hex(text):
    return hashlib.sha256(text.encode()).hexdigest()


def pbkdf2_hash(password, salt, iterations):
    key = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), iterations)
    return f"pbkdf2_sha256${iterations}${salt}${base64.b64encode(key).decode()}"


def libcrypt(password, setting):
    library = ctypes.CDLL(ctypes.util.find_library("crypt"))
    library.crypt.restype = ctypes.c_char_p
    return library.crypt(password.encode(), setting.encode()).decode()


def alice(pg, pgdb, role):
    """(id, last password change, password hash) of alice as `role` reads them."""
    row = pg.psql("SELECT id, accounts.stamp(password_changed_at), password_hash "
                  f"FROM accounts.account_view WHERE username_key = '{USERNAME}'", pgdb, user=role)
    return row.strip().split("|")


def test_the_host_role_reads_each_hash_sealed(pg, pgdb, roles):
    """The host role sees 'sealed$' + the whole hash's SHA-256 + the hash with its key's letters
    masked, through the view and login_facts; recomputing from that setting with the right
    password gives the digest, a wrong one does not. The administrator role reads it whole."""
    admin, host = roles
    whole = pg.value(f"SELECT password_hash FROM accounts.account WHERE username_key = "
                     f"'{USERNAME}'", pgdb)
    _, _, seen = alice(pg, pgdb, host)
    digest, masked = SEALED.fullmatch(seen).groups()
    assert digest == sha256_hex(whole)
    algorithm, iterations, salt, key = whole.split("$")
    assert masked == f"{algorithm}${iterations}${salt}$" + re.sub("[A-Za-z0-9+/]", "A", key)
    assert sha256_hex(pbkdf2_hash(PASSWORD, salt, int(iterations))) == digest
    assert sha256_hex(pbkdf2_hash(PASSWORD + "!", salt, int(iterations))) != digest
    facts = f"SELECT password_hash, reference_hash FROM accounts.login_facts('{USERNAME}')"
    assert pg.psql(facts, pgdb, user=host).strip() == f"{seen}|{seen}"
    assert pg.psql(facts, pgdb, user=admin).strip() == f"{whole}|{whole}"
    assert alice(pg, pgdb, admin)[2] == whole


@pytest.mark.parametrize("scheme", ["yescrypt", "sha-512", "sha-256", "bcrypt"])
def test_crypt_hashes_are_sealed_with_their_setting_kept(pg, pgdb, roles, scheme):
    """A crypt(3) hash sealed: the setting kept, each digest character masked as '.'; libcrypt
    given the masked hash as its setting recomputes the whole hash from the right password."""
    if scheme == "bcrypt":
        whole = subprocess.run(["htpasswd", "-nbBC", "5", "u", PASSWORD], capture_output=True,
                               text=True, check=True).stdout.strip().split(":", 1)[1]
        whole = "$2b$" + whole[4:]
        setting_length = 29
    else:
        whole = subprocess.run(["mkpasswd", "-m", scheme, PASSWORD], capture_output=True,
                               text=True, check=True).stdout.strip()
        setting_length = whole.rindex("$") + 1
    seen = pg.value(f"SELECT accounts.sealed_hash('{whole}')", pgdb)
    digest, masked = SEALED.fullmatch(seen).groups()
    assert digest == sha256_hex(whole)
    assert masked == whole[:setting_length] + "." * (len(whole) - setting_length), masked
    assert libcrypt(PASSWORD, masked) == whole
    assert libcrypt(PASSWORD + "!", masked) != whole


DENIED = [
    "SELECT password_hash FROM accounts.account",
    "SELECT accounts.password_proven('alice', 10, 'x')",
    "SELECT accounts.change_password_step('alice', now(), 10, 1, 'x', 'x', NULL, NULL, "
    "ARRAY['x'], NULL, NULL, 'h')",
    "SELECT accounts.second_factor_change_step('disable', 'alice', 1, 'x', now(), 10, NULL, "
    "NULL, NULL, ARRAY[]::bytea[], NULL, NULL, ARRAY['x'], NULL, 'h')",
    "SELECT * FROM accounts.login_success_step('alice', 'alice', now(), 10, NULL, NULL, NULL, "
    "false, NULL, NULL, NULL, 60, 60, NULL, 'o', 'g', 'r', 'q', ARRAY['x'], ARRAY['reset'], 'h')",
]


@pytest.mark.parametrize("sql", DENIED, ids=lambda s: s[:40])
def test_the_whole_hash_and_the_unproven_steps_are_out_of_reach(pg, pgdb, roles, sql):
    _, host = roles
    proc = pg.psql(sql, pgdb, user=host, check=False)
    assert proc.returncode != 0 and "permission denied" in proc.stderr, proc


def steps(pg, pgdb, role, proof, new_hash):
    """The three steps that act on a checked password, as `role`, for alice, with `proof` (SQL):
    each one's outcome."""
    account_id, changed, _ = alice(pg, pgdb, role)
    run = lambda sql: pg.psql(sql, pgdb, user=role).strip()  # noqa: E731
    return [
        run(f"SELECT accounts.change_password('{USERNAME}', now(), 100, {account_id}, "
            f"'{changed}', '{new_hash}', NULL, NULL, ARRAY['x'], NULL, NULL, 'h', {proof}, NULL)"),
        run(f"SELECT accounts.second_factor_change('enable', '{USERNAME}', {account_id}, "
            f"'{changed}', now(), 100, '\\x00', 'k', 0, ARRAY[]::bytea[], NULL, NULL, "
            f"ARRAY['x'], NULL, 'h', {proof}, NULL)"),
        run(f"SELECT r_outcome FROM accounts.login_success('{USERNAME}', '{USERNAME}', now(), "
            f"100, {account_id}, '{changed}', '{new_hash}', true, NULL, NULL, sha256('t'), 60, "
            f"60, NULL, 'o', 'gone', 'r', 'q', ARRAY['x'], ARRAY['reset'], 'h', {proof}, NULL)"),
    ]


def test_a_stolen_host_role_cannot_act_on_a_password_it_does_not_know(pg, pgdb, tmp_path,
                                                                      roles):
    """With no proof, the sealed hash or its masked form as proof, each step says 'gone' and
    changes nothing: the password, the sessions and the second factor stay; alice still logs in.
    With the whole hash (what typing the password recomputes) the same change is taken."""
    _, host = roles
    whole = pg.value(f"SELECT password_hash FROM accounts.account WHERE username_key = "
                     f"'{USERNAME}'", pgdb)
    chosen = pbkdf2_hash("the kiosk chose this one", "kioskkioskkioskkiosk", 1000)
    _, _, seen = alice(pg, pgdb, host)
    for proof in ("NULL", f"'{seen}'", f"'{SEALED.fullmatch(seen).group(2)}'"):
        assert steps(pg, pgdb, host, proof, chosen) == ["gone"] * 3, proof
    assert pg.value("SELECT password_hash FROM accounts.account", pgdb) == whole
    assert pg.value("SELECT count(*) FROM accounts.session", pgdb) == "0"
    assert pg.value("SELECT count(*) FROM accounts.second_factor", pgdb) == "0"
    assert login(as_role(pg, pgdb, tmp_path, host, "kiosk")).code == 0
    assert steps(pg, pgdb, host, f"'{whole}'", chosen)[0] == "changed"
    assert pg.value("SELECT password_hash FROM accounts.account", pgdb) == chosen
