"""`accounts pam-auth --database PATH`: the password check `pam_exec` runs, first
called directly the way pam_exec calls it (PAM_* in the environment, the password on standard
input), then through the real PAM stack with Debian's `pamtester` and a scratch service file.

pam_exec passes no HOME, PATH or ACCOUNTS_* to the program: only PAM_USER, PAM_SERVICE,
PAM_RHOST, PAM_TTY, PAM_TYPE (those set), so the direct runs use exactly that environment, plus
whatever setting a test shows is ignored.

pamtester reads the password with libpam_misc's misc_conv: at a pipe it prints `Password: ` on
stderr and reads one line from standard input with read(2), dropping the newline; no terminal is
needed. pam_exec of Linux-PAM 1.5 then writes the password to the program with no newline and no
NUL. Its success line is `pamtester: successfully authenticated` on stdout; when the program exits
non-zero, pam_exec returns PAM_SYSTEM_ERR and pamtester exits 1."""

import contextlib
import os
import pathlib
import pwd
import secrets
import shutil
import signal
import statistics
import subprocess
import threading
import time

import pyotp
import pytest

from conftest import (BIN, BOB, BOB_EMAIL, BOB_FULL_NAME, BOB_PASSWORD, CLUSTER, NEW_PASSWORD,
                      PASSWORD, USERNAME, WRONG_PASSWORD, Device, Result, changed_env,
                      cpu_seconds)
from test_second_factor import enabled, steady, wrong_code
from totp import code_for_step

# The front end PAM reaches: pam_exec's environment, input, time limit and items, and what
# pam-auth answers. The store behind it is asked what login asks (the same repository calls,
# run on both stores by test_login.py and test_sessions.py), so these run once, in the sqlite
# run, but for the tests about PostgreSQL itself (libpq's files), which run there.
pytestmark = pytest.mark.front_end

# Timings use the release build when there is one, as test_timing.py does.

SERVICE, RHOST, TTY = "sshd", "203.0.113.9", "ssh"
PAM_ENV = {"PAM_USER": USERNAME, "PAM_SERVICE": SERVICE, "PAM_RHOST": RHOST, "PAM_TTY": TTY,
           "PAM_TYPE": "auth"}
WHERE = f"pam service={SERVICE} rhost={RHOST} tty={TTY}"
INVALID_DETAIL = "invalid user name or password"
GUESS = "not the password, but long enough"
MAX_INPUT = 4096
# An account without TOTP whose password ends in six digits: the whole string is its password.
DIGITS_PASSWORD = "purple elephants dance 482913"


# Direct runs, the way pam_exec runs the program.

def pam_env(user=USERNAME, **changes) -> dict:
    """The environment pam_exec gives the program, with `changes` (None removes a variable)."""
    return changed_env(dict(PAM_ENV, PAM_USER=user), changes)


def pam_auth(device, password=PASSWORD, user=USERNAME, ending=b"", env=None, args=None,
             stdin=None, timeout=60) -> Result:
    """`accounts pam-auth --database DB` with pam_exec's environment and the password (then
    `ending`) on standard input; `stdin` (bytes) replaces the whole input when given."""
    data = stdin if stdin is not None else password.encode("utf-8") + ending
    args = ["pam-auth", *device.pam_args()] if args is None else args
    proc = subprocess.run([BIN, *args], input=data, capture_output=True,
                          env=env if env is not None else pam_env(user), cwd=str(device.root),
                          timeout=timeout)
    return Result(proc.returncode, proc.stdout.decode("utf-8", "replace"),
                  proc.stderr.decode("utf-8", "replace"))


def silent(result) -> int:
    """The exit code, after checking that nothing was printed on stdout or stderr."""
    assert (result.stdout, result.stderr) == ("", ""), result
    return result.code


def events(device) -> list:
    return [(e["event"], e["user"], e["detail"]) for e in device.events()]


def failures(device, name=USERNAME) -> int:
    return device.account(name)["failures"]


def iterations(stored_hash: str) -> int:
    algorithm, count, _salt, _key = stored_hash.split("$")
    assert algorithm == "pbkdf2_sha256", stored_hash
    return int(count)


def sessions(device) -> int:
    return device.query("SELECT count(*) FROM session")[0][0]


def test_right_password_exit_0(activated):
    """The right password, no newline and no NUL: exit 0, nothing printed, login_success with
    detail `pam service=sshd rhost=203.0.113.9 tty=ssh`."""
    assert silent(pam_auth(activated)) == 0
    assert events(activated)[-1] == ("login_success", USERNAME, WHERE)


@pytest.mark.parametrize("ending", [b"\0", b"\n"], ids=["nul-pam_exec-before-1.4", "newline"])
def test_final_nul_or_newline_dropped(activated, ending):
    """A final NUL (pam_exec before 1.4) or a final newline is not part of the password:
    exit 0, silent, login_success."""
    assert silent(pam_auth(activated, ending=ending)) == 0
    assert events(activated)[-1] == ("login_success", USERNAME, WHERE)


@pytest.mark.parametrize("ending, counted", [(b"\n\n", 0), (b" ", 1), (b"\0\0", 0)],
                         ids=["two-newlines", "space", "two-nuls"])
def test_only_one_final_newline_dropped(activated, ending, counted):
    """Only one final newline and one final NUL are dropped: two newlines, two NULs or a
    trailing space leave a different password, exit 1. A trailing space is a wrong password
    (counted); a control character left in it is refused before anything is counted, as at
    the prompts."""
    assert silent(pam_auth(activated, ending=ending)) == 1
    assert failures(activated) == counted


def test_success_recorded_as_login_without_session(activated):
    """A success after two failures clears the count and sets the last login, as a login does,
    but starts no session (no row, no session file)."""
    assert activated.account(USERNAME)["lastLogin"] is None
    for _ in range(2):
        assert silent(pam_auth(activated, WRONG_PASSWORD)) == 1
    assert failures(activated) == 2
    assert silent(pam_auth(activated)) == 0
    alice = activated.account(USERNAME)
    assert alice["failures"] == 0 and alice["lastLogin"] is not None, alice
    assert sessions(activated) == 0
    assert not activated.session_file.exists()


def test_wrong_password_exit_1(activated):
    """A wrong password: exit 1, silent, login_failure `invalid user name or password; pam
    service=sshd rhost=203.0.113.9 tty=ssh`, one failure counted."""
    assert silent(pam_auth(activated, WRONG_PASSWORD)) == 1
    assert events(activated)[-1] == ("login_failure", USERNAME, f"{INVALID_DETAIL}; {WHERE}")
    assert failures(activated) == 1


def test_unknown_name_exit_1(activated):
    """An unknown PAM_USER: exit 1, silent, logged like a wrong password under the name given."""
    assert silent(pam_auth(activated, user="mallory")) == 1
    assert events(activated)[-1] == ("login_failure", "mallory", f"{INVALID_DETAIL}; {WHERE}")


# Other programs on the host take PAM_USER as it is: another case, full-width letters or
# spaces around the name would log in a user named that way with alice's password.
NAME_VARIANTS = {"upper-case": "ALICE", "title-case": "Alice", "full-width": "ａｌｉｃｅ",
                 "space-before": " alice", "space-after": "alice ", "tab-after": "alice\t"}


@pytest.mark.parametrize("variant", NAME_VARIANTS.values(), ids=NAME_VARIANTS.keys())
def test_name_variant_refused_like_an_unknown_name(activated, variant):
    """A variant of alice's stored name with her right password: exit 1, silent, no success;
    a variant that is a valid name is logged as an unknown name is (`login_failure` under the
    name given), one with spaces (no valid name) not at all. The exact name still passes."""
    before = events(activated)
    assert silent(pam_auth(activated, user=variant)) == 1
    assert silent(pam_auth(activated, user="mallory")) == 1
    logged = events(activated)[len(before):]
    assert "login_success" not in [e[0] for e in logged], logged
    unknown = ("login_failure", "mallory", f"{INVALID_DETAIL}; {WHERE}")
    if variant.strip() == variant:
        assert logged == [("login_failure", variant, f"{INVALID_DETAIL}; {WHERE}"), unknown]
    else:
        assert logged == [unknown]
    assert silent(pam_auth(activated)) == 0
    assert events(activated)[-1] == ("login_success", USERNAME, WHERE)


def test_disabled_account_exit_1(activated):
    """A disabled account's right password: exit 1, silent, `account disabled; pam ...`."""
    activated.add_user()
    assert activated.run("user", "disable", BOB).code == 0
    assert silent(pam_auth(activated, BOB_PASSWORD, user=BOB)) == 1
    assert events(activated)[-1] == ("login_failure", BOB, f"account disabled; {WHERE}")


def test_second_account(activated):
    """Any account can authenticate, not only the owner; its own password only."""
    activated.add_user()
    assert silent(pam_auth(activated, BOB_PASSWORD, user=BOB)) == 0
    assert silent(pam_auth(activated, PASSWORD, user=BOB)) == 1


def test_five_failures_lock_exit_4(activated):
    """Five wrong passwords: exit 1, 1, 1, 1, 4 (as login); then the right one is refused with
    4 (logged `locked; pam ...`); after unlock it passes again."""
    results = [pam_auth(activated, WRONG_PASSWORD) for _ in range(5)]
    assert [r.code for r in results] == [1, 1, 1, 1, 4], results
    assert events(activated)[-1][:2] == ("lockout", USERNAME)
    assert [silent(r) for r in results] == [1, 1, 1, 1, 4]
    assert silent(pam_auth(activated)) == 4
    assert events(activated)[-1] == ("login_failure", USERNAME, f"locked; {WHERE}")
    assert activated.run("unlock", USERNAME).code == 0
    assert silent(pam_auth(activated)) == 0


def test_unknown_name_locks_like_a_known_one(activated):
    """An unknown name locks after five failures too (exit 4), so locking tells nothing."""
    results = [pam_auth(activated, GUESS, user="mallory") for _ in range(6)]
    assert [r.code for r in results] == [1, 1, 1, 1, 4, 4], results
    assert [silent(r) for r in results] == [1, 1, 1, 1, 4, 4]


def test_shares_the_tally_with_login(activated):
    """Four wrong pam-auth runs and one wrong login lock alice (login exit 4); pam-auth then
    refuses the right password with 4."""
    for _ in range(4):
        assert silent(pam_auth(activated, WRONG_PASSWORD)) == 1
    assert activated.login(USERNAME, WRONG_PASSWORD).code == 4
    assert silent(pam_auth(activated)) == 4


def test_must_change_password_still_succeeds(activated):
    """An account that must change its password still passes (like verify), and still must."""
    activated.add_user()
    assert activated.run("user", "passwd", BOB, "--must-change", "--password-stdin",
                         input=NEW_PASSWORD + "\n").code == 0
    assert silent(pam_auth(activated, NEW_PASSWORD, user=BOB)) == 0
    assert activated.account(BOB)["mustChangePassword"] is True


def test_absent_items_left_out(activated):
    """Without PAM_RHOST and PAM_TTY the detail names only the service: `pam service=sshd`;
    a failure gets `invalid user name or password; pam service=sshd`."""
    env = pam_env(PAM_RHOST=None, PAM_TTY=None)
    assert silent(pam_auth(activated, env=env)) == 0
    assert events(activated)[-1] == ("login_success", USERNAME, "pam service=sshd")
    assert silent(pam_auth(activated, WRONG_PASSWORD, env=env)) == 1
    assert events(activated)[-1] == (
        "login_failure", USERNAME, f"{INVALID_DETAIL}; pam service=sshd")


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
    assert events(activated)[-1] == ("login_success", USERNAME, where_capped)
    assert silent(pam_auth(activated, WRONG_PASSWORD, env=env)) == 1
    assert events(activated)[-1] == (
        "login_failure", USERNAME, f"{INVALID_DETAIL}; {where_capped}")


def test_input_over_4096_bytes_refused_uncounted(activated):
    """4097 bytes of input: exit 1, nothing on stdout, nothing counted or logged; exactly 4096
    bytes is an ordinary wrong password (exit 1, silent, counted). (Input that is no password
    at all is not a credential refusal: a sentence on stderr for the administrator is allowed.)"""
    before = events(activated)
    results = [pam_auth(activated, stdin=b"x" * (MAX_INPUT + 1)),
               pam_auth(activated, stdin=PASSWORD.encode() + b"y" * MAX_INPUT)]
    assert [(r.code, r.stdout) for r in results] == [(1, "")] * 2, results
    assert events(activated) == before
    assert failures(activated) == 0
    assert silent(pam_auth(activated, stdin=b"x" * MAX_INPUT)) == 1
    assert failures(activated) == 1


def test_huge_input_refused_uncounted(activated):
    """Eight MiB on standard input: exit 1 within the time limit, nothing counted or logged."""
    before = events(activated)
    result = pam_auth(activated, stdin=b"x" * (8 << 20), timeout=30)
    assert (result.code, result.stdout) == (1, ""), result
    assert events(activated) == before


def test_password_ending_in_digits_without_totp(activated):
    """An account without TOTP whose password ends in six digits: the whole input is the
    password (exit 0); without the digits it is wrong (exit 1)."""
    activated.add_user(password=DIGITS_PASSWORD)
    assert silent(pam_auth(activated, DIGITS_PASSWORD, user=BOB)) == 0
    assert silent(pam_auth(activated, DIGITS_PASSWORD[:-6], user=BOB)) == 1


# Storage problems and the time limit.

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


def test_gives_up_after_5_seconds(activated):
    """With the database held by another writer the whole time, pam-auth gives up within 5
    seconds in total (killed by its own SIGALRM; or, if its store gives up first, exit 3 with
    one sentence), prints nothing on stdout and writes nothing: no failure, no event, file
    intact."""
    before = events(activated)
    with activated.write_lock():
        start = time.monotonic()
        result = pam_auth(activated, WRONG_PASSWORD, timeout=30,
                          args=["pam-auth", *activated.pam_store_args()])
        elapsed = time.monotonic() - start
    assert result.stdout == "", result
    if result.code == 3:
        assert len(result.err_lines) == 1, result
    else:
        assert result.code == -signal.SIGALRM, result
        assert elapsed >= 4.5, elapsed
    assert elapsed < 30, elapsed  # ended by itself: the test's own limit is 30 seconds
    assert events(activated) == before
    assert failures(activated) == 0
    if not activated.postgresql:  # PostgreSQL has no whole-database check to ask for
        assert activated.query("PRAGMA integrity_check") == [("ok",)]


def test_gives_up_on_input_that_never_ends(activated):
    """Standard input left open and silent: pam-auth gives up at its --time-limit (1 second
    here), killed by its own SIGALRM, nothing on stdout, nothing counted or logged."""
    before = events(activated)
    proc = subprocess.Popen([BIN, "pam-auth", *activated.pam_store_args(), "--time-limit", "1"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=pam_env(), cwd=str(activated.root))
    start = time.monotonic()
    watchdog = threading.Timer(30, proc.kill)
    watchdog.start()
    try:
        proc.stdin.write(PASSWORD.encode())
        proc.stdin.flush()
        stdout = proc.stdout.read()  # until the program ends; its standard input stays open
        code = proc.wait()
        elapsed = time.monotonic() - start
    finally:
        watchdog.cancel()
        proc.stdin.close()
    assert code == -signal.SIGALRM, code
    assert stdout == b""
    assert 0.9 <= elapsed < 30, elapsed  # ended by itself: the watchdog kills at 30 seconds
    assert events(activated) == before
    assert failures(activated) == 0


@pytest.mark.parametrize("limit", ["0", "301", "-1", "5s", ""])
def test_time_limit_out_of_range_refused(activated, limit):
    """--time-limit takes whole seconds from 1 to 300: anything else is a usage error (exit 2)
    before anything is read or checked."""
    result = pam_auth(activated, args=["pam-auth", *activated.pam_store_args(),
                                       "--time-limit", limit])
    assert (result.code, result.stdout) == (2, ""), result
    assert "--time-limit" in result.stderr, result
    assert failures(activated) == 0


@pytest.mark.parametrize("inherited", ["ignored", "blocked", "ignored-and-blocked"])
def test_time_limit_holds_whatever_sigalrm_state_it_inherits(activated, inherited):
    """SIGALRM ignored and/or blocked by the caller (both survive exec), standard input left open
    and silent: pam-auth still ends itself, killed by its own SIGALRM, within a generous wait;
    nothing on stdout, nothing counted or logged."""
    def inherit():
        if "ignored" in inherited:
            signal.signal(signal.SIGALRM, signal.SIG_IGN)
        if "blocked" in inherited:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})

    before = events(activated)
    proc = subprocess.Popen([BIN, "pam-auth", *activated.pam_store_args(), "--time-limit", "1"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=pam_env(), cwd=str(activated.root),
                            preexec_fn=inherit)
    try:
        proc.stdin.write(PASSWORD.encode())
        proc.stdin.flush()
        code = proc.wait(timeout=30)
        stdout = proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdin.close()
        proc.stdout.close()
    assert code == -signal.SIGALRM, code
    assert stdout == b""
    assert events(activated) == before
    assert failures(activated) == 0


# Settings in the environment change nothing: pam-auth starts from an empty environment but for
# the PAM items.

def test_accounts_database_setting_ignored(activated):
    """ACCOUNTS_DATABASE naming another (not existing) file: the --database one is used (exit 0,
    logged there) and the other path is not created."""
    elsewhere = activated.root / "elsewhere" / "accounts.sqlite3"
    env = pam_env(ACCOUNTS_DATABASE=str(elsewhere))
    assert silent(pam_auth(activated, env=env)) == 0
    assert events(activated)[-1] == ("login_success", USERNAME, WHERE)
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
def test_default_key_file_is_the_running_users(activated, real_uid):
    """Without --key-file, the key for a PostgreSQL store is ~/.config/accounts/postgresql.key
    of the running (effective) user, its home from the user database: not HOME's (the caller
    sets HOME to this device's home, which holds the right key) nor XDG_CONFIG_HOME's, nor the
    real user's when it differs (as under su). A TOTP account's right password and code: exit 3,
    one sentence naming that path, nothing counted."""
    enrollment = enabled(activated)
    expected = own_home() / ".config" / "accounts" / "postgresql.key"
    assert not expected.exists(), f"{expected} exists: this test needs it absent"
    env = pam_env(HOME=str(activated.home), XDG_CONFIG_HOME=str(activated.home / ".config"))
    nobody = pwd.getpwnam("nobody").pw_uid
    proc = subprocess.run(
        [BIN, "pam-auth", "--database", activated.db.explicit_uri],
        input=(PASSWORD + totp(enrollment)).encode(), capture_output=True, env=env,
        cwd="/", timeout=60,
        preexec_fn=(lambda: os.setreuid(nobody, 0)) if real_uid == "other" else None)
    stderr = proc.stderr.decode()
    assert (proc.returncode, proc.stdout) == (3, b""), (proc, stderr)
    assert len(stderr.splitlines()) == 1 and str(expected) in stderr, stderr
    assert str(activated.key_file) not in stderr, stderr
    assert failures(activated) == 0


# Accounts with the TOTP second factor: the password, then the code, in one string.

def totp(enrollment) -> str:
    return pyotp.TOTP(enrollment.key).now()


def test_totp_password_and_code(activated):
    """Password followed directly by the current code (pyotp): exit 0, silent, login_success
    with the pam detail, and no session."""
    enrollment = enabled(activated)
    assert silent(pam_auth(activated, PASSWORD + totp(enrollment))) == 0
    assert events(activated)[-1] == ("login_success", USERNAME, WHERE)
    assert sessions(activated) == 0


def test_totp_password_and_code_with_newline(activated):
    """Password and code followed by a newline: the newline is dropped, exit 0."""
    enrollment = enabled(activated)
    assert silent(pam_auth(activated, PASSWORD + totp(enrollment), ending=b"\n")) == 0


def test_totp_code_of_the_step_before_accepted(activated):
    """The code of the previous 30-second step is accepted (±1 step, as at login); one two steps
    back is a wrong code (exit 1, `wrong verification code; pam ...`)."""
    enrollment = enabled(activated)

    def attempt(step):
        return (pam_auth(activated, PASSWORD + code_for_step(enrollment.key, step - 2)),
                pam_auth(activated, PASSWORD + code_for_step(enrollment.key, step - 1)))
    too_old, previous = steady(attempt)
    assert silent(too_old) == 1
    assert silent(previous) == 0
    kinds = events(activated)[-2:]
    assert kinds == [("login_failure", USERNAME, f"wrong verification code; {WHERE}"),
                     ("login_success", USERNAME, WHERE)]


def test_totp_code_raced_once(activated):
    """Five pam-auth runs started together with the same password and code: exactly one exits
    0, the other four 1 (replay; four failures lock nothing), all silent; one success and four
    `verification code replayed`."""
    enrollment = enabled(activated)
    line = (PASSWORD + totp(enrollment)).encode()
    procs = [subprocess.Popen([BIN, "pam-auth", *activated.pam_args()],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=pam_env(), cwd=str(activated.root))
             for _ in range(5)]
    results = []
    for proc in procs:
        out, err = proc.communicate(line, timeout=30)
        results.append(Result(proc.returncode, out.decode(), err.decode()))
    assert sorted(silent(r) for r in results) == [0, 1, 1, 1, 1], results
    logged = [e for e in events(activated) if e[0] in ("login_success", "login_failure")]
    assert sorted(logged) == sorted(
        [("login_success", USERNAME, WHERE)]
        + [("login_failure", USERNAME, f"verification code replayed; {WHERE}")] * 4)


def test_totp_password_alone_refused(activated):
    """A TOTP account's password without the code: exit 1, silent, counted, detail
    `no verification code; pam ...`."""
    enabled(activated)
    assert silent(pam_auth(activated)) == 1
    assert events(activated)[-1] == ("login_failure", USERNAME, f"no verification code; {WHERE}")
    assert failures(activated) == 1


def test_totp_code_replay_refused(activated):
    """The same password and code twice: 0, then 1 (replay), counted, detail
    `verification code replayed; pam ...`."""
    enrollment = enabled(activated)
    line = PASSWORD + totp(enrollment)
    assert silent(pam_auth(activated, line)) == 0
    assert silent(pam_auth(activated, line)) == 1
    assert events(activated)[-1] == (
        "login_failure", USERNAME, f"verification code replayed; {WHERE}")
    assert failures(activated) == 1


def test_totp_code_used_at_login_is_replay(activated):
    """A code accepted by `accounts login` is refused afterwards by pam-auth (one store of the
    last step for both)."""
    enrollment = enabled(activated)
    code = totp(enrollment)
    assert activated.run("login", "--no-session",
                         input=f"{USERNAME}\n{PASSWORD}\n{code}\n").code == 0
    assert silent(pam_auth(activated, PASSWORD + code)) == 1
    assert events(activated)[-1][2] == f"verification code replayed; {WHERE}"


def test_totp_wrong_code_refused(activated):
    """Password and a wrong code: exit 1, silent, counted, `wrong verification code; pam ...`."""
    enrollment = enabled(activated)
    assert silent(pam_auth(activated, PASSWORD + wrong_code(enrollment.key))) == 1
    assert events(activated)[-1] == (
        "login_failure", USERNAME, f"wrong verification code; {WHERE}")
    assert failures(activated) == 1


def test_totp_wrong_password_does_not_use_the_code(activated):
    """Wrong password with the right code: exit 1 (`invalid user name or password`), and the
    code is not used up: the right password with it then passes."""
    enrollment = enabled(activated)
    code = totp(enrollment)
    assert silent(pam_auth(activated, WRONG_PASSWORD + code)) == 1
    assert events(activated)[-1] == ("login_failure", USERNAME, f"{INVALID_DETAIL}; {WHERE}")
    assert silent(pam_auth(activated, PASSWORD + code)) == 0


def test_totp_failures_lock(activated):
    """Four wrong codes and a missing one lock alice (the fifth exits 4); then even the right
    password and code exit 4."""
    enrollment = enabled(activated)
    bad = PASSWORD + wrong_code(enrollment.key)
    results = [pam_auth(activated, bad) for _ in range(4)] + [pam_auth(activated)]
    results.append(pam_auth(activated, PASSWORD + totp(enrollment)))
    assert [r.code for r in results] == [1, 1, 1, 1, 4, 4], results
    assert [silent(r) for r in results] == [1, 1, 1, 1, 4, 4]


def test_totp_key_file_missing_exit_3(activated):
    """The key file moved away: password and code exit 3 with one sentence naming the key file,
    nothing on stdout, nothing counted."""
    enrollment = enabled(activated)
    activated.key_file.rename(activated.root / "moved.key")
    result = pam_auth(activated, PASSWORD + totp(enrollment))
    assert (result.code, result.stdout) == (3, ""), result
    assert len(result.err_lines) == 1 and str(activated.key_file) in result.stderr, result
    assert failures(activated) == 0


# Cost: an unknown name costs what a wrong password costs, at the real iteration count.

def pam_cpu(device, user, password, expected=1) -> float:
    """CPU seconds of one direct pam-auth run."""
    return cpu_seconds(["pam-auth", *device.pam_args()], password, pam_env(user), expected)


def within_2x(wrong, other):
    wrong_median, other_median = statistics.median(wrong), statistics.median(other)
    assert wrong_median > 0.02, wrong
    assert 0.5 < other_median / wrong_median < 2.0, (wrong, other)


def real_count_device(device):
    """Activated at the real 1,200,000 iterations, with bob (same count) disabled."""
    device.activate(fast=False)
    added = device.run("user", "add", "--username", BOB, "--full-name", BOB_FULL_NAME,
                       "--email", BOB_EMAIL, "--password-stdin", input=BOB_PASSWORD + "\n",
                       fast=False)
    assert added.code == 0, added
    assert device.run("user", "disable", BOB).code == 0
    assert iterations(device.stored_hash()) == 1_200_000
    return device


def test_unknown_name_costs_a_wrong_password(device):
    """Unknown name vs wrong password, 3 alternated runs each at 1,200,000 iterations: CPU
    medians within 2× of each other (no ACCOUNTS_PBKDF2_ITERATIONS: pam-auth ignores it)."""
    real_count_device(device)
    wrong, unknown = [], []
    for turn in range(3):
        wrong.append(pam_cpu(device, USERNAME, GUESS))
        unknown.append(pam_cpu(device, f"nobody{turn}", GUESS))
    within_2x(wrong, unknown)


def test_name_variant_costs_an_unknown_name(device):
    """ALICE with alice's right password vs an unknown name, 3 alternated runs each at 1,200,000
    iterations: both refused (exit 1), CPU medians within 2× of each other."""
    real_count_device(device)
    variant, unknown = [], []
    for turn in range(3):
        variant.append(pam_cpu(device, "ALICE", PASSWORD))
        unknown.append(pam_cpu(device, f"nobody{turn}", PASSWORD))
    within_2x(unknown, variant)


def test_disabled_account_costs_a_wrong_password(device):
    """A disabled account's right password vs alice's wrong one: CPU medians within 2×."""
    real_count_device(device)
    wrong, disabled = [], []
    for _ in range(3):
        wrong.append(pam_cpu(device, USERNAME, GUESS))
        disabled.append(pam_cpu(device, BOB, BOB_PASSWORD))
    within_2x(wrong, disabled)


# Through the real PAM stack: pamtester, pam_exec and a scratch service file.

PAM_ITEMS = {"rhost": "198.51.100.7", "tty": "pts/3"}


@contextlib.contextmanager
def pam_service(device):
    """A scratch PAM service `accounts-test-<random>` in /etc/pam.d whose auth runs pam-auth on
    the device's store through pam_exec; removed afterwards. Needs root and pamtester (Scripts/setup --test)."""
    if os.geteuid() != 0:
        pytest.fail("the PAM tests must run as root: they write a service file into /etc/pam.d "
                    f"(running as uid {os.geteuid()})")
    if shutil.which("pamtester") is None:
        pytest.fail("pamtester is not installed: run Scripts/setup --test")
    name = f"accounts-test-{secrets.token_hex(6)}"
    path = f"/etc/pam.d/{name}"
    try:
        with open(path, "x") as f:
            f.write(f"auth required pam_exec.so expose_authtok quiet {os.path.abspath(BIN)} "
                    f"pam-auth {' '.join(device.pam_args())}\n"
                    "account required pam_permit.so\n")
        yield name
    finally:
        if os.path.exists(path):
            os.unlink(path)


@pytest.fixture
def service(activated):
    """The scratch PAM service on the activated device's database."""
    with pam_service(activated) as name:
        yield name


def where(service_name):
    return f"pam service={service_name} rhost={PAM_ITEMS['rhost']} tty={PAM_ITEMS['tty']}"


def pamtester(service_name, password, user=USERNAME) -> Result:
    """`pamtester -I rhost=… -I tty=… SERVICE USER authenticate`, the password as one line on a
    pipe (misc_conv reads it without a terminal)."""
    items = [arg for key, value in PAM_ITEMS.items() for arg in ("-I", f"{key}={value}")]
    proc = subprocess.run(["pamtester", *items, service_name, user, "authenticate"],
                          input=(password + "\n").encode(), capture_output=True, timeout=60)
    return Result(proc.returncode, proc.stdout.decode("utf-8", "replace"),
                  proc.stderr.decode("utf-8", "replace"))


def authenticated(result) -> bool:
    """pamtester's verdict, after checking the prompt was read from the pipe."""
    assert result.stderr.startswith("Password: "), result
    if result.code == 0:
        assert result.stdout == "pamtester: successfully authenticated\n", result
        return True
    assert result.stdout == "", result
    return False


def test_pamtester_right_password(activated, service):
    """Through PAM the right password authenticates (pamtester exit 0); the log names the
    service, rhost and tty pamtester set."""
    result = pamtester(service, PASSWORD)
    assert result.code == 0 and authenticated(result)
    assert events(activated)[-1] == ("login_success", USERNAME, where(service))


def test_pamtester_wrong_password(activated, service):
    """Through PAM a wrong password is refused (pamtester exit 1), logged with the pam detail."""
    result = pamtester(service, WRONG_PASSWORD)
    assert result.code == 1 and not authenticated(result)
    assert events(activated)[-1] == (
        "login_failure", USERNAME, f"{INVALID_DETAIL}; {where(service)}")


def test_pamtester_unknown_name(activated, service):
    """Through PAM an unknown user is refused (pamtester exit 1), logged under that name."""
    result = pamtester(service, PASSWORD, user="mallory")
    assert result.code == 1 and not authenticated(result)
    assert events(activated)[-1] == (
        "login_failure", "mallory", f"{INVALID_DETAIL}; {where(service)}")


def test_pamtester_locked(activated, service):
    """Through PAM, five wrong passwords lock alice: the right one is then refused (exit 1)
    and logged `locked; pam ...`."""
    for _ in range(5):
        assert not authenticated(pamtester(service, WRONG_PASSWORD))
    assert activated.account(USERNAME)["locked"] is True
    result = pamtester(service, PASSWORD)
    assert result.code == 1 and not authenticated(result)
    assert events(activated)[-1] == ("login_failure", USERNAME, f"locked; {where(service)}")


def test_pamtester_totp(activated, service):
    """Through PAM a TOTP account passes with password+code in one answer (exit 0); the
    password alone is refused (exit 1, `no verification code; pam ...`)."""
    enrollment = enabled(activated)
    refused = pamtester(service, PASSWORD)
    assert refused.code == 1 and not authenticated(refused)
    assert events(activated)[-1] == (
        "login_failure", USERNAME, f"no verification code; {where(service)}")
    result = pamtester(service, PASSWORD + totp(enrollment))
    assert result.code == 0 and authenticated(result)
    assert events(activated)[-1] == ("login_success", USERNAME, where(service))


def test_pamtester_disabled(activated, service):
    """Through PAM a disabled account's right password is refused (exit 1)."""
    activated.add_user()
    assert activated.run("user", "disable", BOB).code == 0
    result = pamtester(service, BOB_PASSWORD, user=BOB)
    assert result.code == 1 and not authenticated(result)
    assert events(activated)[-1] == ("login_failure", BOB, f"account disabled; {where(service)}")


def pamtester_cpu(service_name, user, password) -> float:
    """CPU seconds of one whole pamtester run, pam_exec's child (reaped by it) included."""
    proc = subprocess.Popen(["pamtester", service_name, user, "authenticate"],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    proc.stdin.write((password + "\n").encode())
    proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 1, (user, password)
    return usage.ru_utime + usage.ru_stime


def test_pamtester_unknown_name_not_cheaper(device):
    """Through PAM at 1,200,000 iterations an unknown name costs no less than half of what a
    wrong password costs (CPU of the whole pamtester run, 3 alternated runs each; the direct
    runs above hold the 2x bound); all six attempts reached pam-auth (logged with the service)."""
    device.activate(fast=False)
    with pam_service(device) as name:
        wrong, unknown = [], []
        for turn in range(3):
            wrong.append(pamtester_cpu(name, USERNAME, GUESS))
            unknown.append(pamtester_cpu(name, f"nobody{turn}", GUESS))
    logged = [e for e in events(device)
              if e[0] == "login_failure" and e[2] == f"{INVALID_DETAIL}; pam service={name}"]
    assert len(logged) == 6, events(device)
    assert statistics.median(wrong) > 0.02, wrong
    assert statistics.median(unknown) > 0.5 * statistics.median(wrong), (wrong, unknown)
