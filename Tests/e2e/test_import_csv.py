"""`accounts user import` of csv files (RFC 4180): quoting, CRLF line ends, line breaks in
quoted fields, booleans, the header, and the `'` an export puts before a formula."""

import csv
import io
import re

import pytest

from conftest import (BOB, BOB_EMAIL, BOB_FULL_NAME, BOB_PASSWORD, EMAIL_RULE, FULL_NAME,
                      USERNAME)

# The helpers' asserts report their values as the tests' own do.
pytest.register_assert_rewrite("importing")
from importing import (CAROL, CAROL_PASSWORD, DAVE, ERIN, FRANK, csv_file,  # noqa: E402
                       import_, logs_in, names, nothing_imported, other_device, pbkdf2,
                       refused_login, starts, write)


QUOTED_NAME = 'Builder, Bob "The Fixer"'


def test_csv_quoting_booleans_and_extra_columns(activated, django_hashers):
    """RFC 4180 csv: a quoted full name with a comma and doubled quotes reads back as written;
    `disabled` and `must_change_password` (`true`/`false`) are kept; other columns are ignored."""
    rows = [f'{BOB},"Builder, Bob ""The Fixer""",{BOB_EMAIL},'
            f'{pbkdf2(django_hashers, BOB_PASSWORD)},false,true,whatever',
            f'{CAROL},Carol,carol@example.org,{pbkdf2(django_hashers, CAROL_PASSWORD)},true,false,'
            '"x, y"']
    write(activated, "users.csv", csv_file(
        rows, "username,full_name,email,password_hash,disabled,must_change_password,note"))
    result = import_(activated, "users.csv")
    assert (result.code, result.stdout, result.stderr) == (
        0, "Imported 2 accounts from users.csv.\n", ""), result
    bob, carol = activated.account(BOB), activated.account(CAROL)
    assert (bob["fullName"], bob["disabled"], bob["mustChangePassword"]) == (
        QUOTED_NAME, False, True)
    assert (carol["fullName"], carol["disabled"], carol["mustChangePassword"]) == (
        "Carol", True, False)
    refused_login(activated, CAROL, CAROL_PASSWORD)


def python_csv(rows) -> bytes:
    """A csv file as Python's csv module writes it (RFC 4180: CRLF line ends, quoting as
    needed)."""
    out = io.StringIO(newline="")
    csv.writer(out).writerows(rows)
    assert out.getvalue().endswith("\r\n")
    return out.getvalue().encode()


def test_csv_with_crlf_line_ends(activated, django_hashers):
    """A csv written by Python's csv module (CRLF line ends, a quoted full name) imports; both
    accounts log in."""
    (activated.root / "users.csv").write_bytes(python_csv([
        ["username", "full_name", "email", "password_hash"],
        [BOB, QUOTED_NAME, BOB_EMAIL, pbkdf2(django_hashers, BOB_PASSWORD)],
        [CAROL, "Carol", "carol@example.org", pbkdf2(django_hashers, CAROL_PASSWORD)]]))
    result = import_(activated, "users.csv")
    assert (result.code, result.stdout, result.stderr) == (
        0, "Imported 2 accounts from users.csv.\n", ""), result
    logs_in(activated, BOB, BOB_PASSWORD, QUOTED_NAME)
    logs_in(activated, CAROL, CAROL_PASSWORD, "Carol")


def test_csv_quoted_line_break_in_an_ignored_column(activated, django_hashers):
    """RFC 4180 §2.6: a quoted field may hold a line break; in an ignored column (`note`) it
    changes nothing: both records import and log in."""
    (activated.root / "users.csv").write_bytes(python_csv([
        ["username", "full_name", "email", "password_hash", "note"],
        [BOB, BOB_FULL_NAME, BOB_EMAIL, pbkdf2(django_hashers, BOB_PASSWORD),
         "moved from\nthe old server"],
        [CAROL, "Carol", "carol@example.org", pbkdf2(django_hashers, CAROL_PASSWORD), ""]]))
    result = import_(activated, "users.csv")
    assert (result.code, result.stdout, result.stderr) == (
        0, "Imported 2 accounts from users.csv.\n", ""), result
    logs_in(activated, BOB, BOB_PASSWORD, BOB_FULL_NAME)
    logs_in(activated, CAROL, CAROL_PASSWORD, "Carol")


def test_csv_field_of_20000_lines_imports(activated, django_hashers, tmp_path):
    """A quoted field in an ignored column holding 200 KB over 20,000 lines (read once, not
    again for each line it spans) imports; the record after it keeps its line number in a
    problem."""
    hash_ = pbkdf2(django_hashers, BOB_PASSWORD)
    note = "\n".join(f"note line {n:05d}" for n in range(20_000))  # 16 bytes a line
    assert len(note) > 200_000 and note.count("\n") == 19_999
    rows = [["username", "full_name", "email", "password_hash", "note"],
            [BOB, BOB_FULL_NAME, BOB_EMAIL, hash_, note],
            [CAROL, "Carol", "carol@example.org", hash_, ""]]
    (activated.root / "users.csv").write_bytes(python_csv(rows))
    result = import_(activated, "users.csv")
    assert (result.code, result.stdout, result.stderr) == (
        0, "Imported 2 accounts from users.csv.\n", ""), result
    logs_in(activated, BOB, BOB_PASSWORD, BOB_FULL_NAME)
    rows[2][2] = "not an address"
    other = other_device(tmp_path)
    (other.root / "users.csv").write_bytes(python_csv(rows))
    nothing_imported(import_(other, "users.csv"), starts("line 20002 (carol): ", EMAIL_RULE))


def test_csv_without_header_is_a_problem(activated, django_hashers):
    """With --format csv, a file whose first line is data (no header) is refused; nothing
    imported."""
    write(activated, "users.csv",
          f"{BOB},{BOB_FULL_NAME},{BOB_EMAIL},{pbkdf2(django_hashers, BOB_PASSWORD)}\n")
    nothing_imported(import_(activated, "users.csv", "--format", "csv"), re.compile(".+"))
    assert names(activated) == [USERNAME]


def test_csv_header_without_password_hash_is_a_problem(activated):
    """A header lacking `password_hash` is refused; nothing imported."""
    write(activated, "users.csv", csv_file([f"{BOB},{BOB_FULL_NAME},{BOB_EMAIL}"],
                                           "username,full_name,email"))
    nothing_imported(import_(activated, "users.csv"), re.compile(".+"))
    assert names(activated) == [USERNAME]


def test_csv_boolean_must_be_true_or_false(activated, django_hashers):
    """`disabled` of `maybe` (neither `true` nor `false`) is a problem on its line."""
    write(activated, "users.csv", csv_file(
        [f"{BOB},{BOB_FULL_NAME},{BOB_EMAIL},{pbkdf2(django_hashers, BOB_PASSWORD)},maybe"],
        "username,full_name,email,password_hash,disabled"))
    nothing_imported(import_(activated, "users.csv"), starts("line 2 (bob): "))
    assert names(activated) == [USERNAME]


# The `'` an export puts before a cell a spreadsheet would run as a formula.

def test_import_csv_takes_off_the_quote_before_a_formula(activated, django_hashers):
    """A CSV written by hand: a `'` is taken off only where it comes before `'`s and then `=`,
    `+`, `-` or `@` (what an export writes); anywhere else it is the name's own."""
    hash_ = pbkdf2(django_hashers, BOB_PASSWORD)
    write(activated, "users.csv", csv_file([
        f"bob,'=1+1,bob@example.org,{hash_}",
        f"carol,\"''-x\",carol@example.org,{hash_}",
        f"dave,'Dave',dave@example.org,{hash_}",
        f"erin,'',erin@example.org,{hash_}",
        f"frank,=plain,frank@example.org,{hash_}",
    ]))
    result = import_(activated, "users.csv")
    assert (result.code, result.stderr) == (0, ""), result
    assert {a["username"]: a["fullName"] for a in activated.accounts()} == {
        USERNAME: FULL_NAME, BOB: "=1+1", CAROL: "'-x", DAVE: "'Dave'", ERIN: "''",
        FRANK: "=plain"}
