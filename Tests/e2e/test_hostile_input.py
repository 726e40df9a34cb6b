"""Bad input at every prompt and every flag gets one clear sentence, a non-zero
exit, nothing stored, and is never echoed back raw."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

from conftest import REAPER, new_store

# The front end: the same code on either store, so these run once, in the sqlite run.
pytestmark = pytest.mark.front_end

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("ACCOUNTS_BIN", str(ROOT / ".build" / "debug" / "accounts"))
GOOD = {
    "username": b"alice",
    "full_name": b"Alice Liddell",
    "email": b"alice@example.org",
    "password": b"correct horse battery staple",
}
FIELD_NAMES = {
    "username": "User name",
    "full_name": "Full name",
    "email": "E-mail address",
    "password": "Password",
}
MIB8 = b"x" * (8 << 20)


def run(args, stdin=b"", db=None, timeout=60):
    env = dict(os.environ, TZ="UTC", ACCOUNTS_PBKDF2_ITERATIONS="1000")
    env.pop("ACCOUNTS_DATABASE", None)
    proc = subprocess.Popen(
        [BIN, *args, "--database", str(db)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out, err = proc.communicate(stdin, timeout=timeout)
    return proc.returncode, out, err


def status(db):
    code, out, _ = run(["status"], db=db)
    assert code == 0
    return out.decode().splitlines()[0]


def activation_lines(**override):
    fields = dict(GOOD, **override)
    again = override.get("password_again", fields["password"])
    return b"\n".join(
        [fields["username"], fields["full_name"], fields["email"], fields["password"], again]
    ) + b"\n"


FILL = "Please fill all fields!"
EMPTY_LINE = {"username": "Empty: User name.", "full_name": "Empty: Full name.",
              "email": "Empty: E-mail address.", "password": "Empty: Password, Password again."}


# (case name, bad bytes, expected sentence for a non-password field; {field} is its name)
BAD_LINES = [
    ("empty", b"", FILL),
    ("whitespace", b" \t  ", FILL),
    ("nul", b"al\x00ice", "{field} must not contain control or invisible formatting characters!"),
    ("invalid-utf8", b"al\xff\xfeice", "{field} must be valid UTF-8 text!"),
    ("escape-sequence", b"\x1b[2J\x1b]0;pwned\x07ali",
     "{field} must not contain control or invisible formatting characters!"),
    ("right-to-left-override", "ali\u202ece".encode(),
     "{field} must not contain control or invisible formatting characters!"),
    ("zero-width-space", "ali\u200bce".encode(),
     "{field} must not contain control or invisible formatting characters!"),
    ("8-MiB", MIB8, "{field} is too long!"),
]


def expected_for(field, case, template):
    if template == FILL:
        return FILL + "\n" + EMPTY_LINE[field]
    if field == "username" and case in ("escape-sequence",):
        return template.format(field=FIELD_NAMES[field])
    if field == "password":
        if case == "8-MiB":
            return "Password must be at most 1024 characters!"
        if case in ("right-to-left-override", "zero-width-space"):
            # Invisible characters are allowed in passwords (NIST: any Unicode); this one is
            # refused for being too short instead, still one clear sentence.
            return "Password must be at least 15 characters!"
    return template.format(field=FIELD_NAMES[field])


@pytest.mark.parametrize("field", ["username", "full_name", "email", "password"],
                         ids=["username", "full_name", "email", "password"])
@pytest.mark.parametrize("case,bad,template", BAD_LINES, ids=[c[0] for c in BAD_LINES])
def test_bad_line_at_each_prompt(tmp_path, field, case, bad, template):
    """Each bad line at each activation prompt: its sentence, exit 1, nothing stored, no raw echo."""
    db = new_store(tmp_path / "a.sqlite3")
    override = {field: bad}
    if field == "password":
        override["password_again"] = bad
    code, out, err = run(["activate"], activation_lines(**override), db=db)
    assert code == 1
    assert err.decode().strip() == expected_for(field, case, template)
    assert out == b""
    assert b"\x1b" not in err and b"\x00" not in err and b"\xff" not in err
    assert status(db) == "State: Public"


@pytest.mark.parametrize("flag,field", [
    ("--username", "User name"), ("--full-name", "Full name"), ("--email", "E-mail address")])
@pytest.mark.parametrize("case,bad,message", [
    ("empty", b"", "Please fill all fields!\nEmpty: {field}."),
    ("whitespace", b"   ", "Please fill all fields!\nEmpty: {field}."),
    ("invalid-utf8", b"al\xffice", "{field} must be valid UTF-8 text!"),
    ("escape-sequence", b"a\x1b[31mb", "{field} must not contain control or invisible formatting characters!"),
    ("right-to-left-override", "a\u202eb".encode(), "{field} must not contain control or invisible formatting characters!"),
    ("zero-width-space", "a\u200bb".encode(), "{field} must not contain control or invisible formatting characters!"),
    ("100-KiB", b"y" * 100_000, None),
], ids=["empty", "whitespace", "invalid-utf8", "escape", "rlo", "zwsp", "100KiB"])
def test_bad_flag_values(tmp_path, flag, field, case, bad, message):
    """Each bad flag value: one sentence naming the field, exit 1, nothing stored."""
    db = new_store(tmp_path / "a.sqlite3")
    args = {"--username": b"alice", "--full-name": b"Alice", "--email": b"alice@example.org"}
    args[flag] = bad
    argv = ["activate", "--password-stdin"]
    for name, value in args.items():
        argv += [name, os.fsdecode(value)]
    code, out, err = run(argv, GOOD["password"] + b"\n", db=db)
    assert code == 1
    text = err.decode(errors="replace").strip()
    if message is not None:
        assert text == message.format(field=field)
    else:
        long_messages = {
            "User name": "User name must be 1 to 64 letters, digits, '.', '_' or '-'!",
            "Full name": "Full name must be at most 256 characters!",
            "E-mail address": "E-mail address must look like name@example.org, with no spaces!",
        }
        assert text == long_messages[field]
    assert len(text.splitlines()) == (2 if case in ("empty", "whitespace") else 1)
    assert b"\x1b" not in err
    assert status(db) == "State: Public"


def test_sql_meta_characters_are_data(tmp_path):
    """SQL meta characters are refused in user names and stored verbatim in a full name."""
    db = new_store(tmp_path / "a.sqlite3")
    code, _, err = run(["activate"], activation_lines(username=b"alice'; DROP TABLE user;--"), db=db)
    assert (code, err.decode().strip()) == (
        1, "User name must be 1 to 64 letters, digits, '.', '_' or '-'!")
    name = "Robert'); DROP TABLE user; -- \"%_\\"
    code, _, _ = run(["activate"], activation_lines(full_name=name.encode()), db=db)
    assert code == 0
    code, out, _ = run(["login", "--username", "alice", "--password-stdin"],
                       GOOD["password"] + b"\n", db=db)
    assert code == 0
    assert out.decode().splitlines()[0] == f"Welcome back {name}!"


def test_right_to_left_letters_are_fine(tmp_path):
    """Hebrew and Arabic letters are real names, not hostile: they are stored and shown."""
    db = new_store(tmp_path / "a.sqlite3")
    name = "\u05d0\u05dc\u05d9\u05e1 \u0623\u0644\u064a\u0633"
    code, _, _ = run(["activate"], activation_lines(full_name=name.encode()), db=db)
    assert code == 0
    code, out, _ = run(["login", "--username", "alice", "--password-stdin"],
                       GOOD["password"] + b"\n", db=db)
    assert out.decode().splitlines()[0] == f"Welcome back {name}!"


@pytest.mark.parametrize("case,user,password,message", [
    ("escape-in-name", b"\x1b[2Jalice", GOOD["password"],
     "User name must not contain control or invisible formatting characters!"),
    ("nul-in-password", b"alice", b"correct\x00horse", 
     "Password must not contain control or invisible formatting characters!"),
    ("invalid-utf8-name", b"al\xffice", GOOD["password"], "User name must be valid UTF-8 text!"),
    ("8-MiB-password", b"alice", MIB8, "Password is too long!"),
    ("empty-name", b"", GOOD["password"], "Please fill all fields!\nEmpty: User name."),
], ids=["escape-in-name", "nul-in-password", "invalid-utf8-name", "8-MiB-password", "empty-name"])
def test_bad_login_input(tmp_path, case, user, password, message):
    """Bad login input: one sentence, exit 1, and nothing recorded (no failure, no lock)."""
    db = new_store(tmp_path / "a.sqlite3")
    assert run(["activate"], activation_lines(), db=db)[0] == 0
    code, out, err = run(["login"], user + b"\n" + password + b"\n", db=db)
    assert (code, err.decode().strip(), out) == (1, message, b"")
    code, out, _ = run(["log", "--json"], db=db)
    assert [line for line in out.decode().splitlines() if "login" in line] == []


def test_huge_line_is_not_kept_whole(tmp_path):
    """An over-long line is read with a bound: a 64 MiB line costs far less than 64 MiB."""
    db = new_store(tmp_path / "a.sqlite3")

    def peak_rss_kib(name_length):
        # The input is written to a file, so the payload is never in this process's memory
        # (a forked child counts the parent's resident pages until it execs).
        source = tmp_path / f"input-{name_length}"
        with open(source, "wb") as f:
            f.write(b"alice\n")
            remaining = name_length
            while remaining:
                chunk = min(remaining, 1 << 20)
                f.write(b"x" * chunk)
                remaining -= chunk
            f.write(b"\nalice@example.org\n" + GOOD["password"] + b"\n" + GOOD["password"] + b"\n")
        env = dict(os.environ, ACCOUNTS_PBKDF2_ITERATIONS="1000")
        # Measured by a small process of its own (conftest.REAPER): a child forked from pytest
        # would start with pytest's peak RSS, which can hide what `accounts` itself uses.
        report = tmp_path / "usage.json"
        with open(source, "rb") as stdin:
            proc = subprocess.run(
                [sys.executable, "-c", REAPER, "60", str(report), BIN, "activate",
                 "--database", str(db)], stdin=stdin, capture_output=True, env=env, timeout=90)
        usage = json.loads(report.read_text())
        assert usage["code"] == 1
        assert proc.stderr.decode().strip() == "Full name is too long!"
        return usage["rss_kib"]

    small = peak_rss_kib(16 * 1024)
    huge = peak_rss_kib(64 << 20)
    assert huge < small + 8 * 1024, (small, huge)
    assert status(db) == "State: Public"


# A database named by bytes that are not UTF-8.

def run_bytes(args, tmp_path, env_extra=None):
    """The binary with `args` as bytes (stdin empty), in `tmp_path`."""
    env = {k.encode(): v.encode() for k, v in os.environ.items() if k != "ACCOUNTS_DATABASE"}
    env.update({b"TZ": b"UTC", b"HOME": str(tmp_path).encode(),
                b"XDG_STATE_HOME": str(tmp_path / "state").encode()})
    env.update(env_extra or {})
    proc = subprocess.run([BIN.encode(), *args], stdin=subprocess.DEVNULL, capture_output=True,
                          env=env, cwd=tmp_path, timeout=60)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("args", [
    [b"status", b"--database", b"{folder}/a\xffb/db"],
    [b"status", b"--json", b"--database={folder}/a\xffb/db"],
    [b"--database", b"{folder}/a\xffb/db", b"user", b"list"],
    [b"login", b"--database", b"{folder}/a\xffb/db"],
    [b"store", b"copy", b"--from", b"{folder}/a\xffb/db", b"--to", b"{folder}/copy"],
    [b"store", b"copy", b"--to", b"{folder}/a\xffb/db", b"--from", b"{folder}/copy"],
], ids=["status", "status-json-equals", "user-list", "login", "copy-from", "copy-to"])
def test_database_path_that_is_not_utf8(tmp_path, args):
    """A database path whose bytes are not UTF-8 would name another file than the one meant (its
    text has U+FFFD in their place): refused, exit 2, one sentence showing the bytes escaped as
    `\\xff`, never U+FFFD or the raw byte; nothing made."""
    folder = str(tmp_path).encode()
    code, out, err = run_bytes([a.replace(b"{folder}", folder) for a in args], tmp_path)
    assert (code, out) == (2, b""), err
    assert err == b'A database path must be valid UTF-8, not "' + folder + b'/a\\xffb/db".\n'
    assert sorted(os.listdir(tmp_path)) == []


def test_database_variable_that_is_not_utf8(tmp_path):
    """ACCOUNTS_DATABASE holding bytes that are not UTF-8 (a truncated character, a control
    character among them): refused the same way, naming the variable; each byte shown escaped."""
    value = str(tmp_path).encode() + b"/a\xe2\x82\x1b\xfe/db"
    code, out, err = run_bytes([b"status"], tmp_path, {b"ACCOUNTS_DATABASE": value})
    assert (code, out) == (2, b""), err
    assert err == (b'ACCOUNTS_DATABASE must be valid UTF-8, not "' + str(tmp_path).encode()
                   + b'/a\\xe2\\x82\\u{1b}\\xfe/db".\n')
    assert sorted(os.listdir(tmp_path)) == []


def test_database_path_with_a_real_replacement_character(tmp_path):
    """A path that holds U+FFFD as UTF-8 (EF BF BD) is a path like any other."""
    folder = str(tmp_path).encode()
    code, out, err = run_bytes([b"status", b"--database", folder + b"/\xef\xbf\xbd/db"], tmp_path)
    assert (code, err) == (0, b""), err
    assert out.decode() == (f"State: Public\nDatabase: {tmp_path}/\ufffd/db (no database exists "
                            "at this path)\n")
