"""A stolen host role and the pending second factor secrets (PostgreSQL migration v12): the host
role writes no pending secret itself; `accounts.second_factor_begin` and
`accounts.second_factor_confirm` refuse it ('gone', nothing written) without the whole password
hash as proof, and with it take the server's clock and no longer wait than 10 minutes.

Oracles: psql as the host role and the owner."""

import re

import pytest

from conftest import USERNAME
from pgcluster import client, pg, pgdb, roles  # noqa: F401

pytestmark = pytest.mark.postgresql_only

SEALED = re.compile(r"sealed\$([0-9a-f]{64})\$(.+)")
SEALED_SECRET = "'\\x" + "ab" * 40 + "'::bytea"
KEY_ID = "'0123456789abcdef'"


def alice(pg, pgdb, role):
    """(id, last password change, password hash) of alice as `role` reads them."""
    row = pg.psql("SELECT id, accounts.stamp(password_changed_at), password_hash "
                  f"FROM accounts.account_view WHERE username_key = '{USERNAME}'", pgdb, user=role)
    return row.strip().split("|")


def begin(pg, pgdb, role, proof, now="now()", lifetime="600"):
    """accounts.second_factor_begin for alice as `role` with `proof` (SQL): its outcome row."""
    account_id, changed, _ = alice(pg, pgdb, role)
    return pg.psql(
        f"SELECT r_outcome, r_until IS NOT NULL FROM accounts.second_factor_begin('{USERNAME}', "
        f"{account_id}, '{changed}', {now}, 100, {SEALED_SECRET}, {KEY_ID}, {lifetime}, "
        f"{proof})", pgdb, user=role).strip()


def confirm(pg, pgdb, role, proof):
    """accounts.second_factor_confirm for alice as `role` with `proof` (SQL): its outcome."""
    account_id, changed, _ = alice(pg, pgdb, role)
    return pg.psql(
        f"SELECT accounts.second_factor_confirm('{USERNAME}', {account_id}, '{changed}', now(), "
        f"100, {SEALED_SECRET}, 1, ARRAY[sha256('c')], NULL, 'h', {proof})", pgdb,
        user=role).strip()


def test_the_host_role_writes_no_pending_secret_itself(pg, pgdb, roles):
    _, host = roles
    proc = pg.psql("INSERT INTO accounts.pending_second_factor (account_id, sealed_secret, key_id,"
                   f" expires_at) SELECT id, {SEALED_SECRET}, {KEY_ID}, now() FROM "
                   "accounts.account", pgdb, user=host, check=False)
    assert proc.returncode != 0 and "permission denied" in proc.stderr, proc


def test_begin_and_confirm_need_the_whole_hash_from_a_host_role(pg, pgdb, roles):
    """No proof, the sealed hash or its masked form: 'gone', nothing pending or turned on. The
    whole hash: the secret is kept, then turned on."""
    _, host = roles
    whole = pg.value(f"SELECT password_hash FROM accounts.account WHERE username_key = "
                     f"'{USERNAME}'", pgdb)
    _, _, seen = alice(pg, pgdb, host)
    for proof in ("NULL", f"'{seen}'", f"'{SEALED.fullmatch(seen).group(2)}'"):
        assert begin(pg, pgdb, host, proof) == "gone|f", proof
        assert pg.value("SELECT count(*) FROM accounts.pending_second_factor", pgdb) == "0"
    assert begin(pg, pgdb, host, f"'{whole}'") == "stored|t"
    for proof in ("NULL", f"'{seen}'"):
        assert confirm(pg, pgdb, host, proof) == "gone", proof
    assert pg.value("SELECT count(*) FROM accounts.second_factor", pgdb) == "0"
    assert confirm(pg, pgdb, host, f"'{whole}'") == "changed"
    assert pg.value("SELECT count(*) FROM accounts.second_factor", pgdb) == "1"
    assert pg.value("SELECT count(*) FROM accounts.pending_second_factor", pgdb) == "0"


def test_a_host_role_takes_the_servers_clock_and_waits_at_most_10_minutes(pg, pgdb, roles):
    """A time years ahead and a wait of a day asked by the host role: the pending secret expires
    within 10 minutes of the server's clock."""
    _, host = roles
    whole = pg.value(f"SELECT password_hash FROM accounts.account WHERE username_key = "
                     f"'{USERNAME}'", pgdb)
    assert begin(pg, pgdb, host, f"'{whole}'", now="'2099-01-01'", lifetime="86400") == "stored|t"
    late = pg.value("SELECT expires_at > now() + interval '10 minutes' OR expires_at <= now() "
                    "FROM accounts.pending_second_factor", pgdb)
    assert late == "f", late
