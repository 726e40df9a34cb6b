"""`accounts pam-auth --database PATH`, called directly the way pam_exec calls it: what it is
given and what it ignores. --database required and absolute, a missing file or one that is not
a database; the PAM items (absent, PAM_USER missing or empty, long ones capped in the log); and
the empty environment it starts from but for the PAM items: ACCOUNTS_* settings, HOME and
XDG_*, the caller's OpenSSL configuration, libpq's service and password files in the caller's
HOME, and the key file of the running user, not of HOME."""

import os
import pathlib
import pwd
import secrets
import subprocess

import pytest

from conftest import BIN, CLUSTER, NEW_PASSWORD, PASSWORD, USERNAME, WRONG_PASSWORD, Device
from pamhelp import (INVALID_DETAIL, WHERE, events, failures, iterations, pam_auth, pam_env,
                     sessions, silent, totp)
from secondfactor import enabled

# The front end PAM reaches: pam_exec's environment, input, time limit and items, and what
# pam-auth answers. The store behind it is asked what login asks (the same repository calls,
# run on both stores by test_login.py and the test_session_*.py files), so these run once,
# in the sqlite run, but for the tests about PostgreSQL itself (libpq's files), which run there.
pytestmark = pytest.mark.front_end


# The store named on the command line.

def test_database_flag_required(activated):
    """Without --database: exit 2 (usage) with a message on stderr and nothing on stdout, even
    when ACCOUNTS_DATABASE names the right database; nothing is logged."""
    before = events(activated)
    for env in (pam_env(), pam_env(ACCOUNTS_DATABASE=str(activated.db))):
        result = pam_auth(activated, args=["pam-auth"], env=env)
        assert (result.code, result.stdout) == (2, ""), result
        assert "--database" in result.stderr, result
    assert events(activated) == before


RELATIVE = {"relative": "x/accounts.sqlite3", "dot": "./x/accounts.sqlite3",
            "tilde": "~/accounts.sqlite3", "keywords": "service=accounts password=hunter2"}


@pytest.mark.parametrize("location", RELATIVE.values(), ids=RELATIVE.keys())
def test_relative_database_refused(activated, location):
    """--database not absolute (resolved against the caller's working folder, which holds the
    device's x/accounts.sqlite3 in an SQLite run), nor a postgresql:// URI (libpq's keyword form
    is not one): exit 2, one sentence that does not repeat the value (a keyword form may hold a
    password), nothing logged or counted, nothing made."""
    before = events(activated)
    result = pam_auth(activated, args=["pam-auth", "--database", location])
    assert (result.code, result.stdout, result.stderr) == (
        2, "", "pam-auth needs --database as an absolute path or a postgresql:// URI: a "
        "relative one would depend on the caller's working folder.\n"), result
    assert events(activated) == before
    assert failures(activated) == 0
    assert not (activated.root / RELATIVE["keywords"]).exists()


def test_missing_database_creates_nothing(activated):
    """--database naming a file that does not exist: refused (1, no account there; or 3, a
    storage problem), nothing on stdout, and no file (nor folder) is made there."""
    missing = activated.root / "nowhere" / "accounts.sqlite3"
    result = pam_auth(activated, args=["pam-auth", "--database", str(missing)])
    assert result.code in (1, 3) and result.stdout == "", result
    assert not missing.parent.exists()


def test_not_a_database_exit_3(activated):
    """--database naming a file that is not SQLite: exit 3, one sentence on stderr, nothing on
    stdout, the file untouched."""
    other = activated.root / "notes.txt"
    other.write_text("hello\n")
    result = pam_auth(activated, args=["pam-auth", "--database", str(other)])
    assert (result.code, result.stdout) == (3, ""), result
    assert len(result.err_lines) == 1 and result.err_lines[0].strip() != "", result
    assert other.read_text() == "hello\n"


# The PAM items.

def test_absent_items_left_out(activated):
    """Without PAM_RHOST and PAM_TTY the detail names only the service: `pam service=sshd`;
    a failure gets `invalid user name or password; pam service=sshd`."""
    env = pam_env(PAM_RHOST=None, PAM_TTY=None)
    assert silent(pam_auth(activated, env=env)) == 0
    assert events(activated)[-1] == ("login_success", USERNAME, "password; pam service=sshd")
    assert silent(pam_auth(activated, WRONG_PASSWORD, env=env)) == 1
    assert events(activated)[-1] == (
        "login_failure", USERNAME, f"{INVALID_DETAIL}; pam service=sshd")


@pytest.mark.parametrize("user", [None, ""], ids=["missing", "empty"])
def test_pam_user_missing_or_empty(activated, user):
    """PAM_USER missing or empty: exit 1, nothing on stdout (a sentence on stderr for the
    administrator is allowed: no name was refused), no success logged, nothing counted."""
    result = pam_auth(activated, env=pam_env(PAM_USER=user))
    assert (result.code, result.stdout) == (1, ""), result
    assert "login_success" not in [e[0] for e in events(activated)]
    assert failures(activated) == 0


def test_long_pam_items_capped_in_the_log(activated):
    """PAM_RHOST of 100 KB (two-byte characters), PAM_SERVICE of 256 bytes and PAM_TTY of
    exactly 255: the audit detail keeps 255 bytes of each at most, cut between characters and
    marked with `…`; the one at the limit is whole. Success and failure alike."""
    service, rhost, tty = "s" * 256, "é" * 50_000, "t" * 255
    env = pam_env(PAM_SERVICE=service, PAM_RHOST=rhost, PAM_TTY=tty)
    where_capped = f"pam service={'s' * 255}… rhost={'é' * 127}… tty={tty}"
    assert silent(pam_auth(activated, env=env)) == 0
    assert events(activated)[-1] == ("login_success", USERNAME, f"password; {where_capped}")
    assert silent(pam_auth(activated, WRONG_PASSWORD, env=env)) == 1
    assert events(activated)[-1] == (
        "login_failure", USERNAME, f"{INVALID_DETAIL}; {where_capped}")


# Settings in the environment change nothing: pam-auth starts from an empty environment but for
# the PAM items.

def test_accounts_database_setting_ignored(activated):
    """ACCOUNTS_DATABASE naming another (not existing) file: the --database one is used (exit 0,
    logged there) and the other path is not created."""
    elsewhere = activated.root / "elsewhere" / "accounts.sqlite3"
    env = pam_env(ACCOUNTS_DATABASE=str(elsewhere))
    assert silent(pam_auth(activated, env=env)) == 0
    assert events(activated)[-1] == ("login_success", USERNAME, f"password; {WHERE}")
    assert not elsewhere.exists() and not elsewhere.parent.exists()


def test_accounts_database_of_another_device_ignored(activated, tmp_path_factory):
    """ACCOUNTS_DATABASE naming another activated device where alice has another password: that
    password is refused here, ours passes, and the other device's log is untouched."""
    other = Device(tmp_path_factory.mktemp("other"))
    other.activate(password=NEW_PASSWORD)
    other_events = events(other)
    env = pam_env(ACCOUNTS_DATABASE=str(other.db))
    assert silent(pam_auth(activated, NEW_PASSWORD, env=env)) == 1
    assert silent(pam_auth(activated, env=env)) == 0
    assert events(other) == other_events


def test_unusable_settings_ignored(activated, tmp_path):
    """Settings that make other commands stop (unusable iterations, session lifetime and idle;
    a blocklist file that cannot be opened) change nothing for pam-auth: exit 0, silent."""
    bad = {"ACCOUNTS_PBKDF2_ITERATIONS": "lots", "ACCOUNTS_SESSION_LIFETIME": "1s",
           "ACCOUNTS_SESSION_IDLE": "forever",
           "ACCOUNTS_PASSWORD_BLOCKLIST": str(tmp_path / "no-such-blocklist.txt")}
    # The same settings stop an ordinary command (exit 2: an unusable setting).
    refused = activated.run("verify", "--username", USERNAME, "--password-stdin",
                            input=PASSWORD + "\n", env=activated.env(**bad))
    assert refused.code == 2, refused
    assert silent(pam_auth(activated, env=pam_env(**bad))) == 0


def test_blocklist_setting_ignored(activated, tmp_path):
    """A blocklist that lists alice's password changes nothing: exit 0."""
    blocklist = tmp_path / "blocklist.txt"
    blocklist.write_text(PASSWORD + "\n")
    env = pam_env(ACCOUNTS_PASSWORD_BLOCKLIST=str(blocklist))
    assert silent(pam_auth(activated, env=env)) == 0


def test_iterations_setting_does_not_cheapen_a_strong_hash(device):
    """A hash at the real 1,200,000 iterations is not rewritten by a success with
    ACCOUNTS_PBKDF2_ITERATIONS=1000 (or any rehash): the stored hash is byte for byte the same."""
    device.activate(fast=False)
    stored = device.stored_hash()
    assert iterations(stored) == 1_200_000
    env = pam_env(ACCOUNTS_PBKDF2_ITERATIONS="1000")
    assert silent(pam_auth(device, env=env)) == 0
    assert device.stored_hash() == stored


def test_weak_hash_rehashed_at_the_policy_not_the_setting(activated, django_hashers):
    """A 1,000-iteration hash: a success is a login, so the hash is replaced, at 1,200,000
    iterations whatever ACCOUNTS_PBKDF2_ITERATIONS=1000 says; the new one is Django-valid."""
    assert iterations(activated.stored_hash()) == 1000
    env = pam_env(ACCOUNTS_PBKDF2_ITERATIONS="1000")
    assert silent(pam_auth(activated, env=env)) == 0
    upgraded = activated.stored_hash()
    assert iterations(upgraded) == 1_200_000
    assert django_hashers.check_password(PASSWORD, upgraded)


def test_home_and_xdg_ignored(activated, tmp_path):
    """HOME and XDG_* pointing at empty folders (or HOME at nothing): exit 0 each time, nothing
    made in any of them (no session file, no database), no session row."""
    folders = {name: tmp_path / "pam-env" / name.lower() for name in
               ("HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME",
                "XDG_RUNTIME_DIR")}
    for folder in folders.values():
        folder.mkdir(mode=0o700, parents=True)
    env = pam_env(**{name: str(folder) for name, folder in folders.items()})
    assert silent(pam_auth(activated, env=env)) == 0
    assert silent(pam_auth(activated, env=pam_env(HOME="/nonexistent/home",
                                                   XDG_STATE_HOME="relative/state"))) == 0
    assert {name: sorted(os.listdir(folder)) for name, folder in folders.items()} == {
        name: [] for name in folders}
    assert sessions(activated) == 0


def shared_object(folder, name, marker) -> str:
    """A shared object compiled with cc whose constructor creates `marker` when it is loaded."""
    source = folder / f"{name}.c"
    source.write_text('#include <fcntl.h>\n#include <unistd.h>\n'
                      '__attribute__((constructor)) static void loaded(void) {\n'
                      f'  int fd = open("{marker}", O_WRONLY | O_CREAT, 0600);\n'
                      '  if (fd >= 0) close(fd);\n}\n')
    library = folder / f"{name}.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    return str(library)


def openssl_settings(folder, marker, how) -> dict:
    """The variables that make OpenSSL load a shared object of the caller's: a configuration
    (OPENSSL_CONF) naming it by path as a provider, or by name in OPENSSL_MODULES' folder as a
    provider, or by name in OPENSSL_ENGINES' folder as an engine."""
    library = shared_object(folder, "planted", marker)
    config = folder / "openssl.cnf"
    if how == "engines":
        sections = "engines = engine_sect\n[engine_sect]\nplanted = planted_sect\n" \
                   "[planted_sect]\ninit = 1\n"
    else:
        module = library if how == "conf" else "planted.so"
        sections = "providers = provider_sect\n[provider_sect]\nplanted = planted_sect\n" \
                   f"[planted_sect]\nmodule = {module}\nactivate = 1\n"
    config.write_text(f"openssl_conf = init\n[init]\n{sections}")
    settings = {"OPENSSL_CONF": str(config)}
    if how == "modules":
        settings["OPENSSL_MODULES"] = str(folder)
    if how == "engines":
        settings["OPENSSL_ENGINES"] = str(folder)
    return settings


@pytest.mark.parametrize("how", ["conf", "modules", "engines"])
def test_openssl_settings_of_the_caller_not_read(activated, tmp_path, how):
    """An OpenSSL configuration named by the caller (OPENSSL_CONF, with OPENSSL_MODULES or
    OPENSSL_ENGINES for a library named without its folder) that loads a shared object: the
    object is never loaded into pam-auth (its constructor's marker file does not appear) and the
    check answers as usual (exit 0, silent)."""
    marker = tmp_path / "loaded"
    env = pam_env(**openssl_settings(tmp_path, marker, how))
    result = pam_auth(activated, env=env)
    assert not marker.exists(), result
    assert silent(result) == 0


def own_home() -> pathlib.Path:
    """The running user's home folder, from the user database (not HOME)."""
    return pathlib.Path(pwd.getpwuid(os.geteuid()).pw_dir)


@pytest.mark.postgresql_only
def test_service_file_in_callers_home_not_read(activated, tmp_path, tmp_path_factory):
    """`--database postgresql:///?service=NAME` where only the caller's files define NAME (in
    HOME's .pg_service.conf, PGSERVICEFILE, PGSYSCONFDIR), naming another store where alice has
    another password: that password is not accepted there (exit 3, the service is unknown to
    the running user; one sentence) and the other store's log is untouched."""
    name = f"accounts-pam-{secrets.token_hex(4)}"
    other = Device(tmp_path_factory.mktemp("other"))
    other.activate(password=NEW_PASSWORD)
    other_events = events(other)
    home = tmp_path / "caller"
    home.mkdir()
    definition = (f"[{name}]\nhost={os.environ.get('PGHOST', '/var/run/postgresql')}\n"
                  f"port={os.environ.get('PGPORT', '5432')}\n"
                  f"user={os.environ.get('PGUSER', 'postgres')}\ndbname={other.db.name}\n")
    for path in (home / ".pg_service.conf", tmp_path / "services.conf",
                 tmp_path / "pg_service.conf"):
        path.write_text(definition)
    env = pam_env(HOME=str(home), PGSERVICEFILE=str(tmp_path / "services.conf"),
                  PGSYSCONFDIR=str(tmp_path))
    location = f"postgresql:///?service={name}"
    result = pam_auth(activated, NEW_PASSWORD, env=env, args=[
        "pam-auth", "--database", location, "--key-file", str(activated.key_file)])
    assert (result.code, result.stdout, result.stderr) == (
        3, "", f"Cannot connect to the PostgreSQL server for the database {location}: "
        f'definition of service "{name}" not found.\n'), result
    assert events(other) == other_events


@pytest.fixture
def password_role():
    """A login role with a SCRAM password (over TCP the shared cluster asks for it), allowed
    into every test database: (role, password); dropped afterwards."""
    role, password = f"pam_{secrets.token_hex(4)}", secrets.token_hex(12)
    CLUSTER.admin().execute(f"CREATE ROLE {role} LOGIN SUPERUSER PASSWORD '{password}'")
    yield role, password
    CLUSTER.admin().execute(f"DROP ROLE {role}")


@pytest.mark.postgresql_only
def test_password_file_in_callers_home_not_read(activated, tmp_path, password_role):
    """Over TCP, where the server asks a password: the role's password in a ~/.pgpass of a HOME
    the caller sets (mode 0600; and in PGPASSFILE) is not read, so the connection is refused
    (exit 3, one sentence: no password found) and nothing is logged; the same location
    with the password in it passes (exit 0), so only the caller's file was left out."""
    role, password = password_role
    port = os.environ["PGTCPPORT"]
    location = f"postgresql://{role}@127.0.0.1:{port}/{activated.db.name}"
    home = tmp_path / "caller"
    home.mkdir()
    for path in (home / ".pgpass", tmp_path / "passwords"):
        path.write_text(f"127.0.0.1:{port}:{activated.db.name}:{role}:{password}\n")
        path.chmod(0o600)
    key = ["--key-file", str(activated.key_file)]
    before = events(activated)
    result = pam_auth(activated, env=pam_env(HOME=str(home), PGPASSFILE=str(tmp_path / "passwords")),
                      args=["pam-auth", "--database", location, *key])
    assert (result.code, result.stdout, result.stderr) == (
        3, "", f"Cannot connect to the PostgreSQL server at 127.0.0.1:{port} for the database "
        f"{location}: the server asks for a password and none was found (keep it in "
        "~/.pgpass).\n"), result
    assert events(activated) == before
    with_password = f"postgresql://{role}:{password}@127.0.0.1:{port}/{activated.db.name}"
    assert silent(pam_auth(activated, args=["pam-auth", "--database", with_password, *key])) == 0


@pytest.mark.postgresql_only
@pytest.mark.parametrize("real_uid", ["same", "other"], ids=["as-root", "su-like"])
def test_a_postgresql_store_needs_no_key_file(activated, real_uid):
    """A PostgreSQL store's server keeps and checks the second factors: pam-auth without
    --key-file, with no key file in the running user's home nor in the device's (nor the real
    user's, as under su), logs a TOTP account in with its right password and code: exit 0,
    silent, nothing counted."""
    enrollment = enabled(activated)
    default = own_home() / ".config" / "accounts" / "postgresql.key"
    assert not default.exists(), f"{default} exists: this test needs it absent"
    assert not activated.key_file.exists(), f"{activated.key_file} was made"
    env = pam_env(HOME=str(activated.home), XDG_CONFIG_HOME=str(activated.home / ".config"))
    nobody = pwd.getpwnam("nobody").pw_uid
    proc = subprocess.run(
        [BIN, "pam-auth", "--database", activated.db.explicit_uri],
        input=(PASSWORD + totp(enrollment)).encode(), capture_output=True, env=env,
        cwd="/", timeout=60,
        preexec_fn=(lambda: os.setreuid(nobody, 0)) if real_uid == "other" else None)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b""), proc
    assert failures(activated) == 0
