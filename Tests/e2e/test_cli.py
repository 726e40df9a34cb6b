"""Command line surface: help, usage errors, storage errors, status and where the database is."""

import json
import os
import re
import signal
import sqlite3
import subprocess

import pytest

from conftest import BIN, form

# The tests here run the program on a device whose store does not exist yet (on PostgreSQL an
# empty database), refusals and read-only commands that must leave it so.
pytestmark = pytest.mark.empty_database

ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def test_help_lists_administrator_group(device):
    """`--help` exits 0 and lists reset, unlock, log, user, group, session and store under an
    ADMINISTRATOR group, and the person-facing passwd and verify with activate, login
    and status."""
    result = device.run("--help")
    assert result.code == 0
    lines = result.stdout.splitlines()
    headers = [i for i, line in enumerate(lines) if line.startswith("ADMINISTRATOR")]
    assert len(headers) == 1, result.stdout

    def section(start):
        names = []
        for line in lines[start + 1:]:
            if not line.strip():
                break
            if line.startswith("  ") and not line.startswith("   "):
                names.append(line.split()[0])
        return names

    assert sorted(section(headers[0])) == ["group", "log", "reset", "session", "store", "unlock",
                                           "user", "userdb"]
    main = lines.index("SUBCOMMANDS:")
    assert sorted(section(main)) == ["2fa", "activate", "login", "logout", "pam-auth",
                                     "pam-helper", "passwd", "status", "verify", "whoami"]


@pytest.mark.parametrize(
    "args",
    [
        ["--bogus"],
        ["login", "--nope"],
        ["activate", "--password", "correct horse battery staple"],
        ["status", "--yaml"],
        ["unlock"],
        ["log", "--limit", "0"],
        ["log", "--limit", "many"],
    ],
    ids=["root-flag", "login-flag", "password-flag", "status-flag", "unlock-no-name",
         "limit-zero", "limit-text"],
)
def test_usage_error_exits_2(device, args):
    """An unknown flag, missing argument or bad option value exits 2 with a message on stderr."""
    result = device.run(*args, input="")
    assert result.code == 2, result
    assert result.stdout == ""
    assert result.stderr.strip() != ""
    assert not device.db.exists()


def test_unknown_flag_message(device):
    """The unknown-flag message names the flag."""
    result = device.run("--bogus")
    assert result.code == 2
    assert "Error: Unknown option '--bogus'" in result.stderr


def test_status_missing_database_is_public_and_not_created(device):
    """status on a missing database says Public, with the absolute path and that no database
    exists there (a mistyped --database must not read as a reset device); creates nothing.
    PostgreSQL: a database without the schema `accounts` holds no store yet."""
    result = device.run("status")
    assert (result.code, result.stderr) == (0, "")
    missing = ("this database holds no accounts store yet" if device.postgresql
               else "no database exists at this path")
    assert result.stdout == f"State: Public\nDatabase: {device.db} ({missing})\n"
    assert device.nothing_created()


def test_status_json_missing_database(device):
    """status --json on a missing database: every key present, exists false, changedAt null."""
    result = device.run("status", "--json")
    assert result.code == 0
    assert json.loads(result.stdout) == {
        "state": "Public", "database": str(device.db), "exists": False, "changedAt": None}
    assert not device.db.exists()


def test_log_on_missing_database_is_empty(device):
    """log on a missing database prints nothing, exits 0 and creates nothing."""
    result = device.run("log")
    assert (result.code, result.stdout, result.stderr) == (0, "", "")
    assert not device.db.exists()


def test_status_after_activation(activated):
    """After activation status says Activated; JSON adds changedAt as a UTC ISO-8601 time."""
    result = activated.run("status")
    assert result.code == 0
    assert result.stdout == f"State: Activated\nDatabase: {activated.db}\n"
    data = activated.status()
    assert set(data) == {"state", "database", "exists", "changedAt"}
    assert data["exists"] is True
    assert data["state"] == "Activated"
    assert data["database"] == str(activated.db)
    assert ISO_UTC.match(data["changedAt"]), data


def test_database_flag_beats_environment(device):
    """--database wins over ACCOUNTS_DATABASE, and a relative path is shown absolute."""
    result = device.run("status", "--database", "rel/accounts.sqlite3")
    assert result.stdout == f"State: Public\nDatabase: {device.root}/rel/accounts.sqlite3 (no database exists at this path)\n"


@pytest.mark.sqlite_only  # what stands at an SQLite path
def test_database_is_a_directory_exits_3(device):
    """A database path that is a directory is a storage error: exit 3 with one sentence."""
    folder = device.root / "dir.sqlite3"
    folder.mkdir()
    result = device.run("status", "--database", str(folder))
    assert result.code == 3
    assert result.stdout == ""
    assert result.stderr == (
        f"Cannot use the database {folder}: it is a directory, not a file.\n")


@pytest.mark.sqlite_only  # what stands at an SQLite path
def test_database_not_sqlite_exits_3(device):
    """A database path holding a text file is a storage error (exit 3) and is left untouched."""
    path = device.root / "notes.txt"
    path.write_text("hello\n")
    path.chmod(0o600)
    result = device.run("activate", "--database", str(path), input=form())
    assert result.code == 3
    assert result.stderr == (
        f"Cannot use the database {path}: it is not an SQLite database. Move it aside or "
        "choose another file with --database.\n")
    assert path.read_text() == "hello\n"


def test_unreadable_blocklist_exits_3(device):
    """A configured blocklist that cannot be opened is an environment error: exit 3."""
    missing = device.root / "no-such-blocklist.txt"
    env = device.env(ACCOUNTS_PASSWORD_BLOCKLIST=str(missing))
    result = device.run("activate", input=form(), env=env)
    assert result.code == 3
    assert result.stderr == f"Cannot read the password blocklist {missing}: it cannot be opened.\n"
    assert device.status()["state"] == "Public"
    # A command that fails creates nothing: no empty database is left behind.
    assert device.nothing_created()


def test_version(device):
    """--version prints the version on stdout, exit 0."""
    result = device.run("--version")
    assert (result.code, result.stdout, result.stderr) == (0, "1.2.0\n", "")


@pytest.mark.parametrize("shell,marker", [("bash", "-F _accounts accounts"), ("zsh", "#compdef accounts"),
                                          ("fish", "complete -c 'accounts'")])
def test_shell_completions(device, shell, marker):
    """Shell completion scripts are generated for bash, zsh and fish and name every command."""
    result = device.run("--generate-completion-script", shell)
    assert result.code == 0
    assert marker in result.stdout
    for command in ("activate", "login", "status", "reset", "unlock", "log"):
        assert command in result.stdout


def test_root_usage_shows_the_subcommand_as_optional(device):
    """A bare `accounts` is the whole flow, so the usage line says [<subcommand>] (and the
    database is a path or a URI)."""
    result = device.run("--help")
    assert result.code == 0
    assert "USAGE: accounts [--database <path-or-uri>] [<subcommand>]\n" in result.stdout


# Standard output that refuses the result.

# Every command that prints a result, on an activated device with a live session.
RESULT_COMMANDS = [
    ["user", "export"], ["user", "export", "--format", "json"],
    ["user", "export", "--format", "csv"], ["user", "list"], ["user", "list", "--json"],
    ["user", "show", "alice"], ["user", "show", "alice", "--json"], ["log"], ["log", "--json"],
    ["status"], ["status", "--json"], ["session", "list"], ["session", "list", "--json"],
    ["whoami"], ["whoami", "--json"], ["2fa", "status"], ["2fa", "status", "--json"], [],
    ["--help"], ["user", "export", "--help"], ["--version"],
    ["--generate-completion-script", "bash"],
]


def run_with_stdout(device, args, stdout, preexec_fn=None):
    """Runs the binary with standard output on `stdout` (a file object), stdin /dev/null."""
    proc = subprocess.run([BIN, *args], stdin=subprocess.DEVNULL, stdout=stdout,
                          stderr=subprocess.PIPE, text=True, env=device.env(),
                          cwd=str(device.root), timeout=60, preexec_fn=preexec_fn)
    return proc.returncode, proc.stderr


@pytest.mark.parametrize("args", RESULT_COMMANDS, ids=lambda a: "-".join(a) or "bare")
def test_a_full_standard_output_fails(activated, args):
    """Standard output on /dev/full (every write fails with ENOSPC): exit 3 and one sentence on
    standard error, never a success that wrote nothing. An export that did not arrive is not
    logged as made."""
    assert activated.login().code == 0
    with open("/dev/full", "w") as full:
        code, stderr = run_with_stdout(activated, args, full)
    assert (code, stderr) == (
        3, "Could not write to standard output: No space left on device.\n")
    assert "accounts_exported" not in [e["event"] for e in activated.events()]


@pytest.mark.parametrize("args", [["log"], ["user", "export"], ["status"]],
                         ids=lambda a: "-".join(a))
@pytest.mark.parametrize("sigpipe", ["default", "ignored"])
def test_a_reader_gone_ends_quietly(activated, args, sigpipe):
    """`accounts log | head -1`, the reader gone before anything was written (the pipe's read
    end closed before the program starts, so the outcome does not depend on timing): exit 141,
    as SIGPIPE itself gives, and nothing said, whether SIGPIPE ends the program or is ignored
    (then the write fails with EPIPE)."""
    disposition = signal.SIG_DFL if sigpipe == "default" else signal.SIG_IGN
    read_end, write_end = os.pipe()
    os.close(read_end)
    with os.fdopen(write_end, "w") as pipe:
        code, stderr = run_with_stdout(
            activated, args, pipe, preexec_fn=lambda: signal.signal(signal.SIGPIPE, disposition))
    assert (code, stderr) == (141, "")


def test_file_uri_flag_is_a_plain_file_name(device):
    """`--database 'file:x?nolock=1'` names a file called that in the current folder."""
    result = device.run("activate", "--database", "file:x?nolock=1", input=form())
    assert result.code == 0, result
    plain = device.root / "file:x?nolock=1"
    assert plain.is_file()
    assert not (device.root / "x").exists()
    with sqlite3.connect(f"file:{plain}?mode=ro".replace("?nolock", "%3Fnolock"), uri=True) as db:
        assert db.execute("SELECT state FROM activation").fetchone() == ("Activated",)


def test_paths_are_escaped(device, tmp_path):
    folder = tmp_path / "a\x1b[31m\nb"
    result = device.run("status", "--database", str(folder / "db"))
    assert result.code == 0
    assert "\x1b" not in result.stdout and "a\\u{1b}[31m\\u{a}b" in result.stdout
    assert len(result.out_lines) == 2  # the newline in the path forges no line


@pytest.mark.parametrize("value", ["5", "abc", "1e6", "-1000", "100000001"])
@pytest.mark.parametrize("args", [["activate"], ["status"]])
def test_unusable_iteration_setting_is_a_usage_error(device, value, args):
    env = device.env(ACCOUNTS_PBKDF2_ITERATIONS=value)
    result = device.run(*args, input=form(), env=env)
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == (
        f'ACCOUNTS_PBKDF2_ITERATIONS must be a whole number from 1000 to 100000000, not "{value}".\n')
    assert not device.db.exists()
