"""A PostgreSQL store from before its server kept the second factors (migration v17), its
secrets sealed under a key file every host held: `accounts store second-factors import-key
FILE` hands them all to the server in one transaction, nothing a person enrolled lost, and no
host needs the key file afterwards. The old store is made as such a store was: a secret sealed
under a key file by `2fa enable` on an SQLite file, its row and recovery codes written into the
PostgreSQL store as they were kept before.

Oracles: pyotp's codes, psql as the owner."""

import pyotp
import pytest

from conftest import PASSWORD, USERNAME
from pgcluster import Client, activate, client, pg, pgdb  # noqa: F401
from secondfactor import authorized_home, login, recovered, seal_under_key_file

pytestmark = pytest.mark.postgresql_only

MOVED = ("Moved 1 second factor sealed under the key file {} into the server's keeping; no host "
         "needs that key file any more.\n")


@pytest.fixture
def old_store(pg, pgdb, client, tmp_path):
    """(enrollment, key file) of alice's second factor, sealed under the key file, as a
    PostgreSQL store kept it before v17."""
    activate(client)
    sqlite = Client(tmp_path / "sqlite-host", str(tmp_path / "old" / "accounts.sqlite3"))
    return seal_under_key_file(pg, pgdb, sqlite)


def test_import_key_moves_every_secret_and_the_key_file_is_no_longer_needed(
        pg, pgdb, client, tmp_path, old_store):
    """import-key FILE: one line, exit 0; the row is encrypted by the server (no sealed secret,
    no key id), its last step and recovery codes as they were; a host without any key file then
    logs alice in with a pyotp code, and with a recovery code."""
    enrollment, key_file = old_store
    before = pg.value("SELECT last_step FROM accounts.second_factor", pgdb)
    result = client.run("store", "second-factors", "import-key", str(key_file))
    assert (result.code, result.stdout, result.stderr) == (0, MOVED.format(key_file), ""), result
    assert pg.value("SELECT sealed_secret IS NULL AND key_id IS NULL AND server_secret IS NOT "
                    "NULL, last_step FROM accounts.second_factor", pgdb) == f"t|{before}"
    assert pg.value("SELECT count(*) FROM accounts.recovery_code WHERE used_at IS NULL",
                    pgdb) == "10"
    host = Client(tmp_path / "kiosk", client.database)
    authorized_home(login(host, pyotp.TOTP(enrollment.key).now()))
    recovered(login(host, enrollment.codes[0]), 9)
    assert not host.pg_key_file.exists()


def test_import_key_with_another_key_moves_nothing(pg, pgdb, client, tmp_path, old_store):
    """Another key file: exit 3, one sentence naming it, the secret still sealed as it was."""
    _, key_file = old_store
    other = tmp_path / "other.key"
    other.write_text("ab" * 32 + "\n")
    other.chmod(0o600)
    before = pg.value("SELECT encode(sealed_secret, 'hex') FROM accounts.second_factor", pgdb)
    result = client.run("store", "second-factors", "import-key", str(other))
    assert (result.code, result.stdout) == (3, ""), result
    assert len(result.err_lines) == 1 and f"key file {other}" in result.stderr, result
    assert pg.value("SELECT encode(sealed_secret, 'hex') FROM accounts.second_factor",
                    pgdb) == before


def test_import_key_on_an_sqlite_store_is_a_usage_error(tmp_path):
    """An SQLite store keeps its secrets under its key file: exit 2, the sentence."""
    sqlite = Client(tmp_path / "sqlite-host", str(tmp_path / "accounts.sqlite3"))
    result = sqlite.run("store", "second-factors", "import-key", str(tmp_path / "k.key"))
    assert result.code == 2, result
    assert ("store second-factors needs a PostgreSQL store (a postgresql:// URI in --database or "
            "ACCOUNTS_DATABASE): an SQLite store keeps its secrets under its key file."
            ) in result.stderr
