"""What PostgreSQL migration v20 hands a host: a secret still sealed under a key file (a store
from before its server kept the second factors, v17) moves into the server's keeping at the
person's next login on a host that still has the key file, nothing enrolled lost, and a host
without it refuses the code as before; a host role's login cache keeps the unused recovery
codes' hashes the server hands its online login, so that one works once offline.

Oracles: oathtool's codes, psql as the owner and as the host role, sqlite3 reading the cache."""

import shutil
import sqlite3
import time

import pytest

from cachehelp import away_uri
from conftest import FULL_NAME, USERNAME
from pgcluster import Client, as_role, client, pg, pgdb, roles  # noqa: F401
from secondfactor import (INVALID_CODE, authorized_home, enable, login, oath, recovered,
                          seal_under_key_file, wrong_code)

pytestmark = pytest.mark.postgresql_only

# Where alice's secret is kept: (sealed under a key file, its key id, encrypted by the server).
KEEPER = ("SELECT sealed_secret IS NOT NULL, key_id IS NOT NULL, server_secret IS NOT NULL "
          "FROM accounts.second_factor")
UNUSED = "SELECT count(*) FROM accounts.recovery_code WHERE used_at IS NULL"


@pytest.fixture
def old_store(pg, pgdb, roles, tmp_path):
    """(enrollment, key file, host role): alice's secret sealed under the key file, as a store
    kept it before v17, on a store whose host role was given its rights."""
    _, host = roles
    sqlite = Client(tmp_path / "sqlite-host", str(tmp_path / "old" / "accounts.sqlite3"))
    enrollment, key_file = seal_under_key_file(pg, pgdb, sqlite)
    return enrollment, key_file, host


def keeping(pg, pgdb, tmp_path, role, name, key_file):
    """A host connecting as `role` that still has the key file, where a host keeps it."""
    host = as_role(pg, pgdb, tmp_path, role, name)
    host.pg_key_file.parent.mkdir(parents=True, mode=0o700)
    shutil.copyfile(key_file, host.pg_key_file)
    host.pg_key_file.chmod(0o600)
    return host


def test_a_login_on_a_host_with_the_key_file_moves_the_secret(pg, pgdb, tmp_path, old_store):
    """alice logs in with password and code on a host with the key file (as the host role):
    the server now keeps her secret encrypted, her last step and recovery codes as they were;
    a second host with no key file then logs her in with the next step's code and with a
    recovery code."""
    enrollment, key_file, role = old_store
    keeper = keeping(pg, pgdb, tmp_path, role, "keeper", key_file)
    assert pg.value(KEEPER, pgdb) == "t|t|f"

    authorized_home(login(keeper, oath(enrollment.key)))

    assert pg.value(KEEPER, pgdb) == "f|f|t"
    assert pg.value(UNUSED, pgdb) == "10"
    kiosk = as_role(pg, pgdb, tmp_path, role, "kiosk")
    assert not kiosk.pg_key_file.exists()
    authorized_home(login(kiosk, oath(enrollment.key, at=time.time() + 30)))
    recovered(login(kiosk, enrollment.codes[0]), 9)


def test_a_host_without_the_key_file_refuses_the_code_as_before(pg, pgdb, tmp_path, old_store):
    """Without the key file the code is refused (`Invalid verification code!`, exit 1), the
    secret still sealed under the key file."""
    enrollment, _, role = old_store
    kiosk = as_role(pg, pgdb, tmp_path, role, "kiosk")

    result = login(kiosk, oath(enrollment.key))

    assert (result.code, result.stdout, result.stderr) == (1, "", INVALID_CODE + "\n"), result
    assert pg.value(KEEPER, pgdb) == "t|t|f"


def test_a_refused_login_moves_nothing(pg, pgdb, tmp_path, old_store):
    """A wrong code on a host with the key file: refused as any wrong code, and the secret is
    sealed under the key file as it was; without the password's proof the host role is given
    no sealed secret."""
    enrollment, key_file, role = old_store
    before = pg.value("SELECT encode(sealed_secret, 'hex'), key_id FROM accounts.second_factor",
                      pgdb)
    keeper = keeping(pg, pgdb, tmp_path, role, "keeper", key_file)

    result = login(keeper, wrong_code(enrollment.key))

    assert (result.code, result.stdout, result.stderr) == (1, "", INVALID_CODE + "\n"), result
    assert pg.value("SELECT encode(sealed_secret, 'hex'), key_id FROM accounts.second_factor",
                    pgdb) == before
    assert pg.value(KEEPER, pgdb) == "t|t|f"
    given = pg.psql(f"SELECT count(*) FROM accounts.second_factor_sealed('{USERNAME}', 1000, "
                    "'pbkdf2_sha256$1$x$y')", pgdb, user=role).strip()
    assert given == "0"


def test_a_host_role_cache_keeps_the_recovery_codes(pg, pgdb, roles, tmp_path):
    """A host connecting as the host role, with a login cache: alice enrols, logs in online
    with a code; the cache keeps her ten unused recovery codes' hashes; with the server away a
    recovery code logs her in once, and the same code is then refused."""
    _, role = roles
    host = as_role(pg, pgdb, tmp_path, role, "kiosk")
    cache = tmp_path / "kiosk-cache" / "login.sqlite3"
    host.settings["ACCOUNTS_LOGIN_CACHE"] = str(cache)
    enabled = host.run("store", "cache", "enable")
    assert (enabled.code, enabled.stderr) == (0, ""), enabled
    enrollment = enable(host)
    assert enrollment.result.code == 0, enrollment.result
    pg.psql("UPDATE accounts.second_factor SET last_step = last_step - 10", pgdb)

    authorized_home(login(host, oath(enrollment.key)))

    with sqlite3.connect(cache) as db:
        kept = db.execute("SELECT count(*) FROM cached_recovery_code").fetchone()[0]
    assert kept == 10
    away = host.env(ACCOUNTS_DATABASE=away_uri(tmp_path / "no-server"))
    offline = login(host, enrollment.codes[0], env=away)
    assert offline.code == 0 and offline.out_lines[0] == f"Welcome back {FULL_NAME}!", offline
    again = login(host, enrollment.codes[0], env=away)
    assert (again.code, again.stdout, again.err_lines) == (1, "", [INVALID_CODE]), again
