"""What is loaded only for hashing (OpenSSL's libcrypto) is opened when it is first used,
so no command pays at start for what it does not use. The dynamic loader tells which files it
opens and why when LD_DEBUG=files (written to LD_DEBUG_OUTPUT.<pid>, so the program's own output
stays apart): `needed by` for what the executable links, `dynamically loaded by` for dlopen."""

import os
import subprocess

import pytest

from conftest import BIN, PASSWORD, form

# The front end: the same code on either store, so these run once, in the sqlite run.
pytestmark = pytest.mark.front_end

RELEASE = os.environ.get("ACCOUNTS_RELEASE_BIN", "")
LIBCRYPTO = "libcrypto.so.3"
LIBZXCVBN = "libzxcvbn.so.0"  # zxcvbn, opened only to check a new password


def loader_log(device, *args, binary=BIN, input=None, **extra):
    """Runs the binary under LD_DEBUG=files; returns (exit code, stdout, stderr, loader log)."""
    log = device.root / "ld-debug"
    env = device.env(LD_DEBUG="files", LD_DEBUG_OUTPUT=str(log), **extra)
    proc = subprocess.run([binary, *args], input=input,
                          stdin=subprocess.DEVNULL if input is None else None,
                          capture_output=True, text=True, env=env, cwd=str(device.root),
                          timeout=60)
    written = sorted(device.root.glob("ld-debug.*"))
    assert len(written) == 1, written  # one process, one log
    text = written[0].read_text()
    written[0].unlink()
    assert "file=libsqlite3.so.0 [0];  needed by" in text, text  # the log is really there
    return proc.returncode, proc.stdout, proc.stderr, text


def assert_not_loaded(text):
    assert LIBCRYPTO not in text and "libcrypto" not in text, text


def assert_loaded_on_use(text):
    assert f"file={LIBCRYPTO} [0];  dynamically loaded by" in text, text
    assert f"file={LIBCRYPTO} [0];  needed by" not in text, text


# On a PostgreSQL store libpq itself needs libcrypto (TLS): it is loaded with libpq by every
# command that opens the store, so the promises about libcrypto below are the SQLite store's
# (sqlite_only); --version and --help open no store and keep them on both.
LIBPQ_NEEDS_LIBCRYPTO = pytest.mark.sqlite_only


@pytest.mark.parametrize("args", [
    ["--version"], ["--help"], pytest.param(["status"], marks=LIBPQ_NEEDS_LIBCRYPTO),
    pytest.param(["status", "--json"], marks=LIBPQ_NEEDS_LIBCRYPTO),
    pytest.param(["log"], marks=LIBPQ_NEEDS_LIBCRYPTO)])
def test_commands_that_do_not_hash_never_open_libcrypto(device, args):
    """--version, --help, status and log, on a Public then an Activated device: no libcrypto."""
    code, _, _, text = loader_log(device, *args)
    assert code == 0
    assert_not_loaded(text)
    device.activate()
    code, _, _, text = loader_log(device, *args)
    assert code == 0
    assert_not_loaded(text)


@LIBPQ_NEEDS_LIBCRYPTO
def test_activate_and_login_open_libcrypto_when_they_hash(device):
    """activate (salt, hash) and login (verify) open libcrypto by dlopen, and still work."""
    code, out, err, text = loader_log(device, "activate", input=form())
    assert (code, out, err) == (0, "Device activated for alice.\n", "")
    assert_loaded_on_use(text)
    code, out, err, text = loader_log(device, "login", input=f"alice\n{PASSWORD}\n")
    assert (code, out.splitlines()[0], err) == (0, "Welcome back Alice Liddell!", ""), out
    assert_loaded_on_use(text)


def planted_library_env(device, soname, planted):
    """An environment in which `soname` is found first in a folder of the device's, holding
    `planted` (bytes), or, when it is None, a real library that is not the one asked for (libz)."""
    folder = device.root / "lib"
    folder.mkdir()
    fake = folder / soname
    if planted is None:
        libz = next(p for p in ("/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/libz.so.1",
                                "/lib64/libz.so.1", "/usr/lib64/libz.so.1")
                    if os.path.exists(p))
        fake.write_bytes(open(libz, "rb").read())
    else:
        fake.write_bytes(planted)
    return device.env(LD_LIBRARY_PATH=str(folder))


def activate_refused_for_the_library(device, broken, sentence, advice, reason):
    """`activate` with a broken library: exit 3, one sentence (`sentence` REASON `advice`), no
    crash; nothing stored, and status, which needs no such library, still works."""
    result = device.run("activate", input=form(), env=broken)
    assert result.code == 3, result
    assert result.stderr.startswith(sentence) and result.stderr.endswith(advice), result.stderr
    assert reason in result.stderr and result.stderr.count("\n") == 1, result.stderr
    assert "Fatal error" not in result.stderr
    assert device.run("status", env=broken).out_lines[0] == "State: Public"


@LIBPQ_NEEDS_LIBCRYPTO
@pytest.mark.parametrize("planted, reason", [
    (b"", f"{LIBCRYPTO}: file too short"),  # not a library at all
    (None, "it has no function EVP_Digest"),  # a library, but not OpenSSL (a copy of libz)
])
def test_a_missing_or_wrong_libcrypto_is_one_sentence(device, planted, reason):
    """When libcrypto cannot be opened or lacks a function: one sentence naming it and what to
    install, exit 3, nothing stored, no crash; login counts no failure; status still works."""
    broken = planted_library_env(device, LIBCRYPTO, planted)
    sentence = (f"OpenSSL's {LIBCRYPTO} is needed for passwords but could not be loaded (")
    advice = ("); install OpenSSL 3 (the libssl3 package on Debian and Ubuntu) and try again.\n")

    activate_refused_for_the_library(device, broken, sentence, advice, reason)

    device.activate()
    result = device.run("login", input=f"alice\n{PASSWORD}\n", env=broken)
    assert result.code == 3 and result.stderr.startswith(sentence), result
    assert [e["event"] for e in device.events()] == ["activation"]  # no failure counted
    assert device.login().code == 0  # with the system's libcrypto it works again


def test_release_binary_does_not_link_libcrypto():
    """The shipped program has no libcrypto in DT_NEEDED (readelf) nor in ldd's list."""
    assert RELEASE and os.access(RELEASE, os.X_OK), "ACCOUNTS_RELEASE_BIN must be set"
    dynamic = subprocess.run(["readelf", "-d", RELEASE], capture_output=True, text=True,
                             check=True).stdout
    needed = [line for line in dynamic.splitlines() if "(NEEDED)" in line]
    assert any("libsqlite3.so.0" in line for line in needed), needed
    # A build directory made before libcrypto was opened at first use may keep objects whose
    # link entries still name it (SwiftPM does not rebuild them): `swift package clean` fixes it.
    assert not any("libcrypto" in line for line in needed), needed
    libraries = subprocess.run(["ldd", RELEASE], capture_output=True, text=True,
                               check=True).stdout
    assert "libcrypto" not in libraries, libraries


@LIBPQ_NEEDS_LIBCRYPTO
def test_release_binary_opens_libcrypto_only_to_hash(device):
    """The same promise for the release build: status does not open it, activate does."""
    code, _, _, text = loader_log(device, "status", binary=RELEASE)
    assert code == 0
    assert_not_loaded(text)
    code, out, _, text = loader_log(device, "activate", binary=RELEASE, input=form())
    assert (code, out) == (0, "Device activated for alice.\n")
    assert_loaded_on_use(text)


@pytest.mark.parametrize("args", [["--version"], ["status"], ["status", "--json"], ["log"]])
def test_commands_that_set_no_password_never_open_libzxcvbn(device, args):
    """--version, status and log, on a Public then an Activated device, and login: no zxcvbn."""
    code, _, _, text = loader_log(device, *args)
    assert code == 0
    assert "libzxcvbn" not in text, text
    device.activate()
    code, _, _, text = loader_log(device, *args)
    assert code == 0
    assert "libzxcvbn" not in text, text
    code, out, _, text = loader_log(device, "login", input=f"alice\n{PASSWORD}\n")
    assert (code, out.splitlines()[0]) == (0, "Welcome back Alice Liddell!"), out
    assert "libzxcvbn" not in text, text


def test_activate_opens_libzxcvbn_to_check_the_password(device):
    """activate opens libzxcvbn by dlopen (never as a needed library), and still works."""
    code, out, err, text = loader_log(device, "activate", input=form())
    assert (code, out, err) == (0, "Device activated for alice.\n", ""), err
    assert f"file={LIBZXCVBN} [0];  dynamically loaded by" in text, text
    assert f"file={LIBZXCVBN} [0];  needed by" not in text, text


@pytest.mark.parametrize("planted, reason", [
    (b"", f"{LIBZXCVBN}: file too short"),  # not a library at all
    (None, "it has no function ZxcvbnMatch"),  # a library, but not zxcvbn (a copy of libz)
])
def test_a_missing_or_wrong_libzxcvbn_is_one_sentence(device, planted, reason):
    """When libzxcvbn cannot be opened or lacks a function: one sentence naming it and what to
    install, exit 3, nothing stored, no crash; status and login do not need it."""
    broken = planted_library_env(device, LIBZXCVBN, planted)
    sentence = f"zxcvbn's {LIBZXCVBN} is needed to check new passwords but could not be loaded ("
    advice = "); install it (the libzxcvbn0 package on Debian and Ubuntu) and try again.\n"

    activate_refused_for_the_library(device, broken, sentence, advice, reason)

    device.activate()
    assert device.run("login", input=f"alice\n{PASSWORD}\n", env=broken).code == 0


def test_release_binary_does_not_link_libzxcvbn(device):
    """The shipped program has no libzxcvbn in DT_NEEDED; status does not open it, activate does."""
    assert RELEASE and os.access(RELEASE, os.X_OK), "ACCOUNTS_RELEASE_BIN must be set"
    dynamic = subprocess.run(["readelf", "-d", RELEASE], capture_output=True, text=True,
                             check=True).stdout
    assert "libzxcvbn" not in dynamic, dynamic
    code, _, _, text = loader_log(device, "status", binary=RELEASE)
    assert code == 0 and "libzxcvbn" not in text, text
    code, out, _, text = loader_log(device, "activate", binary=RELEASE, input=form())
    assert (code, out) == (0, "Device activated for alice.\n")
    assert f"file={LIBZXCVBN} [0];  dynamically loaded by" in text, text


def database_opens(device, *args, input=None):
    """Runs the binary under strace; returns (exit code, how many times it opened the database
    file itself: its -wal, -shm and -journal companions are not counted)."""
    log = device.root / "strace-openat"
    proc = subprocess.run(
        ["strace", "-f", "-qq", "-e", "trace=openat,open", "-o", str(log), BIN, *args],
        input=input, stdin=subprocess.DEVNULL if input is None else None,
        capture_output=True, text=True, env=device.env(), cwd=str(device.root), timeout=60)
    calls = log.read_text().splitlines()
    log.unlink()
    assert any("openat(" in call for call in calls), calls  # the trace is really there
    opens = [call for call in calls if f'"{device.db}"' in call]
    return proc.returncode, len(opens)


@pytest.mark.sqlite_only  # the file itself
def test_every_command_opens_the_database_file_once(activated):
    """`status` reads the state through a bare connection, every other command through the
    store's one connection: no command opens the file twice (a status read, then the store)."""
    assert database_opens(activated, "status") == (0, 1)
    assert database_opens(activated, "log") == (0, 1)
    assert database_opens(activated, "user", "list") == (0, 1)
    assert database_opens(activated, "login", input=f"alice\n{PASSWORD}\n") == (0, 1)
    assert database_opens(
        activated, "user", "add", "--username", "bob", "--full-name", "Bob Builder",
        "--email", "bob@example.com", "--password-stdin", input="Bob-Builds-9-Houses\n") == (0, 1)
    assert [account["username"] for account in activated.accounts()] == ["alice", "bob"]


LIBUTF8PROC = "libutf8proc.so.2"  # utf8proc, opened only for a name or password beyond ASCII
WIDE_ALICE = "\uff41\uff4c\uff49\uff43\uff45"  # ａｌｉｃｅ: full-width, RFC 8265 maps it to alice


def test_only_text_beyond_ascii_opens_libutf8proc(device):
    """The release program does not link utf8proc; status and a login in ASCII never open it;
    a name beyond ASCII opens it by dlopen, and is mapped as RFC 8265 says."""
    dynamic = subprocess.run(["readelf", "-d", RELEASE], capture_output=True, text=True,
                             check=True).stdout
    assert "libutf8proc" not in dynamic, dynamic
    device.activate()
    code, _, _, text = loader_log(device, "status", binary=RELEASE)
    assert code == 0 and "libutf8proc" not in text, text
    code, out, _, text = loader_log(device, "login", binary=RELEASE,
                                    input=f"alice\n{PASSWORD}\n")
    assert (code, out.splitlines()[0]) == (0, "Welcome back Alice Liddell!"), out
    assert "libutf8proc" not in text, text
    code, out, _, text = loader_log(device, "login", binary=RELEASE,
                                    input=f"{WIDE_ALICE}\n{PASSWORD}\n")
    assert (code, out.splitlines()[0]) == (0, "Welcome back Alice Liddell!"), out
    assert f"file={LIBUTF8PROC} [0];  dynamically loaded by" in text, text


@pytest.mark.parametrize("planted, reason", [
    (b"", f"{LIBUTF8PROC}: file too short"),  # not a library at all
    (None, "it has no function utf8proc_map"),  # a library, but not utf8proc (a copy of libz)
])
def test_a_missing_or_wrong_libutf8proc_is_one_sentence(device, planted, reason):
    """When utf8proc cannot be opened (under either soname) or lacks its function: a name
    beyond ASCII gets one sentence naming it and what to install, exit 3, nothing logged, no
    crash; a login in ASCII does not need it."""
    broken = planted_library_env(device, LIBUTF8PROC, planted)
    folder = device.root / "lib"
    (folder / "libutf8proc.so.3").write_bytes((folder / LIBUTF8PROC).read_bytes())
    device.activate()
    assert device.run("login", input=f"alice\n{PASSWORD}\n", env=broken).code == 0
    before = device.run("log", "--json").stdout
    result = device.run("login", input=f"{WIDE_ALICE}\n{PASSWORD}\n", env=broken)
    sentence = (f"utf8proc's {LIBUTF8PROC} is needed to compare names and passwords beyond "
                "ASCII but could not be loaded (")
    advice = ("); install it (the libutf8proc2 or libutf8proc3 package on Debian and Ubuntu) "
              "and try again.\n")
    assert result.code == 3, result
    assert result.stderr.endswith(advice) and reason in result.stderr, result.stderr
    assert result.stderr.splitlines()[-1].startswith(sentence), result.stderr
    assert "Fatal error" not in result.stderr
    assert device.run("log", "--json").stdout == before
