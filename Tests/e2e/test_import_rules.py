"""`accounts user import`: the rules every format shares. Problems named on their lines (never
printed raw), all or nothing, --dry-run, the format guessed or given, standard input, a Public
device, the audit event."""

import re
import subprocess

import pytest

from conftest import (BIN, BOB, BOB_EMAIL, BOB_FULL_NAME, BOB_PASSWORD, EMAIL_RULE, NOT_ACTIVATED,
                      USERNAME, USERNAME_RULE)

# The helpers' asserts report their values as the tests' own do.
pytest.register_assert_rewrite("importing")
from importing import (CAROL, CAROL_PASSWORD, DAVE, DOMAIN, ERIN, FRANK, csv_file,  # noqa: E402
                       htpasswd, import_, logs_in, mkpasswd, names, nothing_imported, pbkdf2,
                       refused_login, shadow_line, starts, unchanged, write)


def test_hostile_names_are_never_printed_raw(activated, django_hashers):
    """An escape sequence in a user name, a right-to-left override in a full name and invalid
    UTF-8 in a user name are problems on their lines (the first two with the form's sentences);
    stderr holds none of them raw."""
    hash_ = pbkdf2(django_hashers, BOB_PASSWORD)
    (activated.root / "users.csv").write_bytes(
        b"username,full_name,email,password_hash\n"
        + f"\x1b[2J\x1b]0;pwned\x07bob,Bob,{BOB_EMAIL},{hash_}\n".encode()
        + f"{CAROL},Car\u202eol,carol@example.org,{hash_}\n".encode()
        + f"da\xffve,Dave,dave@example.org,{hash_}\n".encode("latin-1"))
    proc = subprocess.run([BIN, "user", "import", "users.csv"], capture_output=True,
                          env=activated.env(), cwd=str(activated.root), stdin=subprocess.DEVNULL)
    assert (proc.returncode, proc.stdout) == (2, b"")
    for raw in (b"\x1b", b"\x07", "\u202e".encode(), b"\xff"):
        assert raw not in proc.stderr, proc.stderr
    lines = proc.stderr.decode().splitlines()
    control = "must not contain control or invisible formatting characters!"
    assert len(lines) == 4, lines
    assert re.fullmatch(r"line 2 \(.*\): User name " + re.escape(control), lines[0]), lines
    assert re.fullmatch(r"line 3 \(carol\): Full name " + re.escape(control), lines[1]), lines
    assert re.fullmatch(r"line 4\b.*UTF-8.*", lines[2]), lines
    assert lines[3] == "Nothing was imported: 3 problems."
    assert names(activated) == [USERNAME]

def test_nul_bytes_are_refused_on_their_lines(activated, django_hashers):
    """A NUL byte is refused wherever it is in a line (after a hash that is whole, inside a
    hash, in another field; shadow, htpasswd and csv, also inside a quoted csv field that spans
    lines), each on its line; nothing is stored."""
    sha = mkpasswd("sha-512", BOB_PASSWORD)
    nul = "the line holds a NUL byte, which no text file has."
    before, events = activated.accounts(), activated.events()
    (activated.root / "shadow").write_bytes(
        (shadow_line(BOB, sha + "\0") + "\n" + shadow_line(CAROL, sha[:20] + "\0" + sha[21:])
         + "\n" + shadow_line(DAVE, sha) + "\n" + f"{ERIN}:{sha}:19000\0:0:99999:7:::\n"
         ).encode())
    nothing_imported(import_(activated, "shadow", "--email-domain", DOMAIN),
                     f"line 1: {nul}", f"line 2: {nul}", f"line 4: {nul}")
    (activated.root / "site.htpasswd").write_bytes(
        (htpasswd("-B", BOB, BOB_PASSWORD) + "\0\n").encode())
    nothing_imported(import_(activated, "site.htpasswd", "--email-domain", DOMAIN),
                     f"line 1: {nul}")
    hash_ = pbkdf2(django_hashers, BOB_PASSWORD)
    (activated.root / "users.csv").write_bytes(
        (csv_file([f"{BOB},Bob\0,{BOB_EMAIL},{hash_}",
                   f'{CAROL},Carol,carol@example.org,{hash_},"two\nli\0nes"',
                   f"{DAVE},Dave,dave@example.org,{hash_}"],
                  "username,full_name,email,password_hash,note").replace(
                      f"{DAVE},Dave,dave@example.org,{hash_}\n",
                      f"{DAVE},Dave,dave@example.org,{hash_},\n")
         ).encode())
    nothing_imported(import_(activated, "users.csv"), f"line 2: {nul}", f"line 3: {nul}")
    unchanged(activated, before, events)


def test_duplicates_in_the_file_name_both_lines(activated, django_hashers):
    """`Bob` on line 4 after `bob` on line 2: `line 4 (Bob): user name Bob is also on line 2.`"""
    hash_ = pbkdf2(django_hashers, BOB_PASSWORD)
    write(activated, "users.csv", csv_file([f"{BOB},{BOB_FULL_NAME},{BOB_EMAIL},{hash_}",
                                            f"{CAROL},Carol,carol@example.org,{hash_}",
                                            f"Bob,Bob Two,bob2@example.org,{hash_}"]))
    before, events = activated.accounts(), activated.events()
    nothing_imported(import_(activated, "users.csv"),
                     "line 4 (Bob): user name Bob is also on line 2.")
    unchanged(activated, before, events)


@pytest.mark.parametrize("name,reason", [("missing.csv", "No such file or directory"),
                                         ("folder", "it is a folder")])
def test_an_unreadable_import_file_is_a_usage_error(activated, name, reason):
    """An import file that is missing or a folder is the person's input, not the store's: its
    own sentence and exit 2, nothing imported."""
    (activated.root / "folder").mkdir()
    before, events = activated.accounts(), activated.events()
    result = import_(activated, name)
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == (f"Cannot read the import file {name}: {reason}. Name a readable "
                             "file, or - for standard input.\n")
    unchanged(activated, before, events)


def test_name_already_taken(activated):
    """`ALICE` in an htpasswd file where alice exists: `line 2 (ALICE): user name ALICE is
    already taken.`, exit 1 (the file is good; the store's state refuses it, as `user add`
    would)."""
    write(activated, "site.htpasswd", htpasswd("-B", BOB, BOB_PASSWORD) + "\n"
          + htpasswd("-B", "ALICE", CAROL_PASSWORD) + "\n")
    nothing_imported(import_(activated, "site.htpasswd", "--email-domain", DOMAIN),
                     "line 2 (ALICE): user name ALICE is already taken.", code=1)
    assert names(activated) == [USERNAME]


def test_bad_user_name_and_bad_email(activated, django_hashers):
    """A user name with a space and a malformed e-mail are problems on their lines, with the
    Activation Form's rule sentences; nothing imported."""
    hash_ = pbkdf2(django_hashers, BOB_PASSWORD)
    write(activated, "users.csv", csv_file([f"bob builder,{BOB_FULL_NAME},{BOB_EMAIL},{hash_}",
                                            f"{CAROL},Carol,carol at example.org,{hash_}"]))
    nothing_imported(import_(activated, "users.csv"),
                     starts("line 2 (bob builder): ", USERNAME_RULE),
                     starts("line 3 (carol): ", EMAIL_RULE))
    assert names(activated) == [USERNAME]


def test_more_than_twenty_problems(activated, django_hashers):
    """25 bad e-mails: the first 20 problems (lines 2..21), `… and 5 more problems.`, then
    `Nothing was imported: 25 problems.`"""
    hash_ = pbkdf2(django_hashers, BOB_PASSWORD)
    write(activated, "users.csv", csv_file(
        [f"user{n},User {n},no-at-sign-{n},{hash_}" for n in range(25)]))
    nothing_imported(import_(activated, "users.csv"),
                     *[starts(f"line {n + 2} (user{n}): ", EMAIL_RULE) for n in range(20)],
                     "… and 5 more problems.", total=25)
    assert names(activated) == [USERNAME]


def test_all_or_nothing(activated, django_hashers):
    """Three good rows and one bad one: nothing imported, every account and event as before."""
    activated.add_user()
    hash_ = pbkdf2(django_hashers, CAROL_PASSWORD)
    write(activated, "users.csv", csv_file(
        [f"{CAROL},Carol,carol@example.org,{hash_}", f"{DAVE},Dave,dave@example.org,{hash_}",
         f"{ERIN},Erin,erin@example.org,not a hash at all",
         f"{FRANK},Frank,f@example.org,{hash_}"]))
    before, events = activated.accounts(), activated.events()
    nothing_imported(import_(activated, "users.csv"), starts("line 4 (erin): "))
    unchanged(activated, before, events)
    refused_login(activated, CAROL, CAROL_PASSWORD)


def test_dry_run_writes_nothing(activated, django_hashers):
    """--dry-run checks everything, says `Dry run: 2 accounts would be imported from users.csv;
    nothing was written.` and writes nothing (no account, no event); the real run then imports."""
    write(activated, "users.csv", csv_file(
        [f"{BOB},{BOB_FULL_NAME},{BOB_EMAIL},{pbkdf2(django_hashers, BOB_PASSWORD)}",
         f"{CAROL},Carol,carol@example.org,{pbkdf2(django_hashers, CAROL_PASSWORD)}"]))
    before, events = activated.accounts(), activated.events()
    result = import_(activated, "users.csv", "--dry-run")
    assert (result.code, result.stdout, result.stderr) == (
        0, "Dry run: 2 accounts would be imported from users.csv; nothing was written.\n", "")
    unchanged(activated, before, events)
    assert import_(activated, "users.csv").stdout == "Imported 2 accounts from users.csv.\n"
    logs_in(activated, CAROL, CAROL_PASSWORD, "Carol")


def test_dry_run_reports_the_same_problems(activated, django_hashers):
    """--dry-run with problems prints exactly what the real run prints (exit 1) and writes
    nothing."""
    hash_ = pbkdf2(django_hashers, BOB_PASSWORD)
    write(activated, "users.csv", csv_file([f"{BOB},{BOB_FULL_NAME},{BOB_EMAIL},{hash_}",
                                            f"{USERNAME},Again,a@example.org,{hash_}"]))
    before, events = activated.accounts(), activated.events()
    dry = import_(activated, "users.csv", "--dry-run")
    nothing_imported(dry, "line 3 (alice): user name alice is already taken.", code=1)
    real = import_(activated, "users.csv")
    assert (dry.code, dry.stdout, dry.stderr) == (real.code, real.stdout, real.stderr)
    unchanged(activated, before, events)


def test_format_cannot_be_told(activated):
    """Content of no known shape: `Cannot tell the format of notes.txt: give --format django,
    shadow, htpasswd or csv.` exit 2."""
    write(activated, "notes.txt", "just some words\nand more words\n")
    result = import_(activated, "notes.txt")
    assert (result.code, result.stdout, result.stderr) == (
        2, "", "Cannot tell the format of notes.txt: give --format django, shadow, htpasswd or "
               "csv.\n")
    assert names(activated) == [USERNAME]


def test_format_flag_overrides_guessing(activated, django_hashers):
    """A csv whose header does not start with `username,` cannot be guessed (exit 2); with
    --format csv it imports (columns found by name)."""
    write(activated, "people", csv_file(
        [f"{BOB_EMAIL},{pbkdf2(django_hashers, BOB_PASSWORD)},{BOB},{BOB_FULL_NAME}"],
        "email,password_hash,username,full_name"))
    guessed = import_(activated, "people")
    assert (guessed.code, guessed.stderr) == (
        2, "Cannot tell the format of people: give --format django, shadow, htpasswd or csv.\n")
    result = import_(activated, "people", "--format", "csv")
    assert (result.code, result.stdout, result.stderr) == (
        0, "Imported 1 account from people.\n", ""), result
    logs_in(activated, BOB, BOB_PASSWORD, BOB_FULL_NAME)


def test_unknown_format_is_a_usage_error(activated):
    """`--format ldif` is a usage error (exit 2)."""
    write(activated, "site.htpasswd", htpasswd("-B", BOB, BOB_PASSWORD) + "\n")
    result = import_(activated, "site.htpasswd", "--format", "ldif", "--email-domain", DOMAIN)
    assert (result.code, result.stdout) == (2, "")
    assert names(activated) == [USERNAME]


def test_dash_reads_standard_input(activated):
    """FILE `-` reads standard input (format guessed from it too)."""
    text = htpasswd("-B", BOB, BOB_PASSWORD) + "\n" + htpasswd("-B", CAROL, CAROL_PASSWORD) + "\n"
    result = import_(activated, "-", "--email-domain", DOMAIN, input=text)
    assert (result.code, result.stderr) == (0, ""), result
    assert re.fullmatch(r"Imported 2 accounts from (-|standard input)\.\n", result.stdout), result
    logs_in(activated, CAROL, CAROL_PASSWORD)


def test_public_device_is_refused(device):
    """On a Public device import says to activate first, exit 1."""
    device.activate()
    assert device.run("reset", "--yes").code == 0
    write(device, "site.htpasswd", htpasswd("-B", BOB, BOB_PASSWORD) + "\n")
    result = import_(device, "site.htpasswd", "--email-domain", DOMAIN)
    assert (result.code, result.stdout, result.stderr) == (1, "", NOT_ACTIVATED + "\n")
    assert device.status()["state"] == "Public"
    assert device.accounts() == []


def test_import_audit_event(activated, django_hashers):
    """One `accounts_imported` event per import, detail `N accounts (csv)`."""
    write(activated, "users.csv", csv_file(
        [f"{BOB},{BOB_FULL_NAME},{BOB_EMAIL},{pbkdf2(django_hashers, BOB_PASSWORD)}",
         f"{CAROL},Carol,carol@example.org,{pbkdf2(django_hashers, CAROL_PASSWORD)}"]))
    assert import_(activated, "users.csv").code == 0
    assert [(e["event"], e["detail"]) for e in activated.events()] == [
        ("activation", None), ("accounts_imported", "2 accounts (csv)")]
