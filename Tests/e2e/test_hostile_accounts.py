"""Bad input to the account commands: every prompt and flag of `user add`,
`user edit`, `user passwd`, `passwd`, `verify` and `log` gets one clear sentence, a non-zero
exit, nothing changed, and nothing echoed back raw."""

import os

import pytest

from conftest import new_store, store_query
from test_hostile_input import BAD_LINES, GOOD, MIB8, run

# The front end: the same code on either store, so these run once, in the sqlite run.
pytestmark = pytest.mark.front_end

CONTROL = "{field} must not contain control or invisible formatting characters!"
NEW_PASSWORD = b"purple lantern meadow window"


def activated(tmp_path):
    db = new_store(tmp_path / "a.sqlite3")
    code, _, err = run(["activate", "--username", "alice", "--full-name", "Alice Liddell",
                        "--email", "alice@example.org", "--password-stdin"],
                       GOOD["password"] + b"\n", db=db)
    assert code == 0, err
    return db


def snapshot(db):
    """Every row of the accounts, tallies and log: what must not change."""
    return [store_query(db, f"SELECT * FROM {t} ORDER BY 1")
            for t in ("account", "login_throttle", "audit_event", "activation")]


def clean(err):
    assert b"\x1b" not in err and b"\x00" not in err and b"\xff" not in err
    return err.decode().strip()


ADD_FIELDS = {"username": "User name", "full_name": "Full name", "email": "E-mail address"}


@pytest.mark.parametrize("field", list(ADD_FIELDS))
@pytest.mark.parametrize("case,bad,template", BAD_LINES, ids=[c[0] for c in BAD_LINES])
def test_user_add_bad_line(tmp_path, field, case, bad, template):
    """A bad line at each `user add` prompt: the form's sentence, exit 1, nothing changed."""
    db = activated(tmp_path)
    before = snapshot(db)
    fields = {"username": b"bob", "full_name": b"Bob Builder", "email": b"bob@example.org"}
    fields[field] = bad
    lines = [fields["username"], fields["full_name"], fields["email"], NEW_PASSWORD,
             NEW_PASSWORD]
    code, out, err = run(["user", "add"], b"\n".join(lines) + b"\n", db=db)
    assert (code, out) == (1, b"")
    text = clean(err)
    name = ADD_FIELDS[field]
    if case in ("empty", "whitespace"):
        assert text == f"Please fill all fields!\nEmpty: {name}."
    else:
        assert text == template.format(field=name)
    assert snapshot(db) == before


@pytest.mark.parametrize("flag,field", [
    ("--username", "User name"), ("--full-name", "Full name"), ("--email", "E-mail address")])
@pytest.mark.parametrize("case,bad,message", [
    ("empty", b"", "Please fill all fields!\nEmpty: {field}."),
    ("invalid-utf8", b"al\xffice", "{field} must be valid UTF-8 text!"),
    ("escape-sequence", b"a\x1b[31mb", CONTROL),
    ("right-to-left-override", "a\u202eb".encode(), CONTROL),
], ids=["empty", "invalid-utf8", "escape", "rlo"])
def test_user_edit_bad_flag(tmp_path, flag, field, case, bad, message):
    """A bad value for each `user edit` flag: one sentence, exit 1, nothing changed."""
    db = activated(tmp_path)
    before = snapshot(db)
    code, out, err = run(["user", "edit", "alice", flag, os.fsdecode(bad)], db=db)
    assert (code, out) == (1, b"")
    assert clean(err) == message.format(field=field)
    assert snapshot(db) == before


@pytest.mark.parametrize("flag,message", [
    ("--username", "User name must be 1 to 64 letters, digits, '.', '_' or '-'!"),
    ("--full-name", "Full name must be at most 256 characters!"),
    ("--email", "E-mail address must look like name@example.org, with no spaces!"),
])
def test_user_edit_huge_flag(tmp_path, flag, message):
    """A 100 KiB value: the field's length rule, exit 1, nothing changed."""
    db = activated(tmp_path)
    before = snapshot(db)
    code, _, err = run(["user", "edit", "alice", flag, "y" * 100_000], db=db)
    assert (code, clean(err)) == (1, message)
    assert snapshot(db) == before


@pytest.mark.parametrize("name", ["\x1b[2Jalice", "al\u202ece", "", "a" * 100_000])
@pytest.mark.parametrize("command", [["user", "show"], ["user", "disable"], ["user", "remove"],
                                     ["unlock"]])
def test_account_name_arguments(tmp_path, command, name):
    """A hostile account name on an administrator command: one sentence, exit 1, no raw echo."""
    db = activated(tmp_path)
    before = snapshot(db)
    extra = ["--yes"] if command == ["user", "remove"] else []
    code, out, err = run([*command, name, *extra], db=db)
    assert (code, out) == (1, b"")
    assert len(clean(err).splitlines()) == (2 if name == "" else 1)
    assert snapshot(db) == before


@pytest.mark.parametrize("case,new,message", [
    ("nul", b"correct\x00horse battery", "New password must not contain control or invisible "
     "formatting characters!"),
    ("invalid-utf8", b"\xff\xfe battery horse staple", "New password must be valid UTF-8 text!"),
    ("8-MiB", MIB8, "Password must be at most 1024 characters!"),
    ("empty", b"", "Please fill all fields!\nEmpty: New password, New password again."),
], ids=["nul", "invalid-utf8", "8MiB", "empty"])
def test_new_password_lines(tmp_path, case, new, message):
    """Bad new passwords to `passwd` and `user passwd`: the sentence, exit 1, nothing changed."""
    db = activated(tmp_path)
    before = snapshot(db)
    code, out, err = run(["user", "passwd", "alice"], new + b"\n" + new + b"\n", db=db)
    assert (code, out, clean(err)) == (1, b"", message)
    assert snapshot(db) == before
    code, out, err = run(["passwd"], b"alice\n" + GOOD["password"] + b"\n" + new + b"\n" + new
                         + b"\n", db=db)
    assert (code, out, clean(err)) == (1, b"", message)


@pytest.mark.parametrize("password", [MIB8, b"\x00" * 40, b"\xff" * 40, b""],
                         ids=["8MiB", "nul", "invalid-utf8", "empty"])
def test_verify_bad_password_line(tmp_path, password):
    """`verify` with a hostile password line: exit 1, nothing on standard output."""
    db = activated(tmp_path)
    code, out, err = run(["verify", "--username", "alice", "--password-stdin"],
                         password + b"\n", db=db)
    assert (code, out) == (1, b"")
    clean(err)


@pytest.mark.parametrize("args", [["--user", "\x1b[2J"], ["--since", "\x1b[2J"],
                                  ["--event", "\x1b]0;x\x07"], ["--since", "9" * 5000 + "d"]])
def test_log_hostile_filters(tmp_path, args):
    """Hostile `log` filters: no raw escape printed; an unusable one is a usage error (exit 2)."""
    db = activated(tmp_path)
    code, out, err = run(["log", *args], db=db)
    assert b"\x1b" not in out and b"\x1b" not in err and b"\x07" not in err
    assert code in (0, 2)
    if args[0] != "--user":
        assert code == 2
