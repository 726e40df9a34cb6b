"""A fleet's second factors stay on the server (PostgreSQL migration v17): two hosts log in with
the host role and no key file anywhere; one enrols a person, the other logs that person in with
password and code; each code and recovery code is accepted once across the fleet; the host role
reads no secret and no recovery code's hash in any form, and cannot skip the code.

Oracles: oathtool's and pyotp's codes, psql as the host role and as the owner, the hosts' files."""

import base64
import os
import time

import pyotp
import pytest

from conftest import PASSWORD, USERNAME
from pgcluster import as_role, client, pg, pgdb, roles  # noqa: F401
from secondfactor import (INVALID_CODE, REPLAY, authorized_home, begin, confirm, enable, login,
                          oath, recovered, wrong_code)

pytestmark = pytest.mark.postgresql_only

# Every secret column, sealed or not, and every recovery code's hash: none a host role reads.
SECRET_READS = [
    "SELECT sealed_secret FROM accounts.second_factor",
    "SELECT server_secret FROM accounts.second_factor",
    "SELECT encode(server_secret, 'hex') FROM accounts.second_factor",
    "SELECT * FROM accounts.second_factor",
    "SELECT sealed_secret FROM accounts.pending_second_factor",
    "SELECT server_secret FROM accounts.pending_second_factor",
    "SELECT code_hash FROM accounts.recovery_code",
    "SELECT count(*) FROM accounts.recovery_code WHERE code_hash IS NOT NULL",
    "SELECT * FROM accounts.second_factor_key",
    "SELECT accounts.server_open(NULL)",
    "SELECT accounts.second_step_check('alice', '000000', NULL, now(), true)",
]


@pytest.fixture
def fleet(pg, pgdb, roles, tmp_path):
    """Two hosts of the store, each its own home, both logging in with the host role."""
    _, host = roles
    return as_role(pg, pgdb, tmp_path, host, "kiosk-1"), as_role(pg, pgdb, tmp_path, host,
                                                                "kiosk-2")


def enrolled(pg, pgdb, host):
    """alice's second factor turned on from `host`, its last step then moved ten steps back (as
    if five minutes ago), so that a code of this step is fresh."""
    enrollment = enable(host)
    assert enrollment.result.code == 0, enrollment.result
    pg.psql("UPDATE accounts.second_factor SET last_step = last_step - 10", pgdb)
    return enrollment


def files_of(host):
    """Every regular file under the host's folders, with its bytes."""
    for folder, _, names in os.walk(host.root):
        for name in names:
            path = os.path.join(folder, name)
            if os.path.isfile(path) and not os.path.islink(path):
                with open(path, "rb") as handle:
                    yield path, handle.read()


def test_one_host_enrols_and_another_logs_in_with_the_code_once(pg, pgdb, fleet):
    """kiosk-1 enrols alice; kiosk-2, which has no key file, logs her in with password and an
    oathtool code; that code on either host is then a replay (exit 1, counted)."""
    first, second = fleet
    enrollment = enrolled(pg, pgdb, first)
    assert not first.pg_key_file.exists() and not second.pg_key_file.exists()
    code = oath(enrollment.key)
    authorized_home(login(second, code))
    for host in (first, second):
        result = login(host, code)
        assert (result.code, result.stdout, result.stderr) == (1, "", REPLAY + "\n"), result


def test_a_pyotp_code_of_the_next_step_works_and_a_wrong_one_does_not(pg, pgdb, fleet):
    """The server takes a code one step ahead (pyotp's, a phone whose clock runs ahead) and
    refuses six digits of no step near now: `Invalid verification code!`, exit 1."""
    first, second = fleet
    enrollment = enrolled(pg, pgdb, first)
    result = login(second, wrong_code(enrollment.key))
    assert (result.code, result.stdout, result.stderr) == (1, "", INVALID_CODE + "\n"), result
    authorized_home(login(second, pyotp.TOTP(enrollment.key).at(time.time() + 30)))


def test_a_recovery_code_works_on_either_host_once(pg, pgdb, fleet):
    """A recovery code logs alice in on kiosk-2, then is refused on kiosk-1; another one works
    on kiosk-1."""
    first, second = fleet
    enrollment = enrolled(pg, pgdb, first)
    one, two = enrollment.codes[:2]
    recovered(login(second, one), 9)
    result = login(first, one)
    assert (result.code, result.stdout, result.stderr) == (1, "", INVALID_CODE + "\n"), result
    recovered(login(first, two), 8)


def test_the_host_role_reads_no_secret_in_any_form(pg, pgdb, roles, fleet):
    """After an enrolment and a pending one: every read of a secret column (sealed or not), of a
    recovery code's hash or of the server's key is refused to the host role; login_facts gives
    it no secret; it still reads what a host needs (the last step, the codes left)."""
    _, host = roles
    first, _ = fleet
    enrolled(pg, pgdb, first)
    pg.psql("INSERT INTO accounts.account (username, username_key, full_name, email, "
            "password_hash, created_at, updated_at, password_changed_at) SELECT 'bob', 'bob', "
            "full_name, email, password_hash, now(), now(), now() FROM accounts.account", pgdb)
    pg.psql("INSERT INTO accounts.pending_second_factor (account_id, sealed_secret, key_id, "
            "expires_at) SELECT id, '\\x3132333435363738393031323334353637383930', "
            "'server-encrypted', now() + interval '5 minutes' FROM accounts.account "
            "WHERE username_key = 'bob'", pgdb)
    for sql in SECRET_READS:
        proc = pg.psql(sql, pgdb, user=host, check=False)
        assert proc.returncode != 0 and "permission denied" in proc.stderr, (sql, proc)
    facts = pg.psql(f"SELECT sealed_secret IS NULL, key_id, last_step > 0 FROM "
                    f"accounts.login_facts('{USERNAME}')", pgdb, user=host).strip()
    assert facts == "t|server-encrypted|t"
    assert pg.psql("SELECT count(*) FROM accounts.recovery_code WHERE used_at IS NULL", pgdb,
                   user=host).strip() == "10"


def test_the_host_role_cannot_skip_the_code(pg, pgdb, roles, fleet):
    """With alice's whole password hash (a host that saw her password), a host role's
    login_success without a code, or naming a step itself, is refused ('code_wrong'): no
    session, no step stored."""
    _, host = roles
    first, _ = fleet
    enrolled(pg, pgdb, first)
    whole = pg.value(f"SELECT password_hash FROM accounts.account WHERE username_key = "
                     f"'{USERNAME}'", pgdb)
    before = pg.value("SELECT last_step FROM accounts.second_factor", pgdb)
    for step in ("NULL", "99999999999"):
        outcome = pg.psql(
            f"SELECT r_outcome FROM accounts.login_success('{USERNAME}', '{USERNAME}', now(), "
            f"100, NULL, NULL, NULL, false, {step}, NULL, sha256('t'), 60, 60, NULL, 'o', 'g', "
            f"'r', 'q', ARRAY['l'], ARRAY['unlock'], 'h', '{whole}', NULL)", pgdb,
            user=host).strip()
        assert outcome == "code_wrong", step
    assert pg.value("SELECT count(*) FROM accounts.session", pgdb) == "0"
    assert pg.value("SELECT last_step FROM accounts.second_factor", pgdb) == before


def test_the_enrolling_host_keeps_no_key_file_and_no_secret(pg, pgdb, fleet):
    """After `2fa enable` on kiosk-1: no key file, and neither the key (Base32, raw, hex) nor a
    recovery code in any file of its home or folders; the server holds it encrypted only."""
    first, _ = fleet
    enrollment = enrolled(pg, pgdb, first)
    assert not first.pg_key_file.exists()
    raw = base64.b32decode(enrollment.key)
    needles = [enrollment.key.encode(), raw, raw.hex().encode()] + [
        code.encode() for code in enrollment.codes]
    for path, data in files_of(first):
        for needle in needles:
            assert needle not in data, (needle, path)
    stored = pg.value("SELECT encode(server_secret, 'hex') FROM accounts.second_factor", pgdb)
    assert raw.hex() not in stored
    assert pg.value("SELECT sealed_secret IS NULL AND key_id IS NULL FROM "
                    "accounts.second_factor", pgdb) == "t"


def test_one_host_begins_and_another_confirms(pg, pgdb, fleet):
    """`2fa enable --begin` on kiosk-1 keeps the secret pending on the server, encrypted; kiosk-2
    confirms it with a code (a wrong one first: refused, kept), and neither host has a key
    file; a login on kiosk-1 then takes a code."""
    first, second = fleet
    result, key = begin(first)
    assert (result.code, result.stderr) == (0, ""), result
    assert pg.value("SELECT sealed_secret IS NULL AND key_id IS NULL AND server_secret IS NOT "
                    "NULL FROM accounts.pending_second_factor", pgdb) == "t"
    refused = confirm(second, wrong_code(key))
    assert (refused.code, refused.stderr) == (1, INVALID_CODE + "\n"), refused
    confirmed = confirm(second, oath(key))
    assert (confirmed.code, confirmed.stderr) == (0, ""), confirmed
    assert not first.pg_key_file.exists() and not second.pg_key_file.exists()
    pg.psql("UPDATE accounts.second_factor SET last_step = last_step - 10", pgdb)
    authorized_home(login(first, oath(key)))
