"""Turning the TOTP second factor on with `2fa enable`: the key, the URI and the QR code it prints
(`oathtool` and `pyotp` compute the codes, `zbarimg` reads the QR code), the recovery codes, what
the database and the key file keep, and the enrollments that are refused."""

import base64
import os
import re
import socket
import stat
import time

import pyotp
import pytest
from totp import STEP, code_for_step

from conftest import BOB, BOB_PASSWORD, INVALID, PASSWORD, USERNAME, WRONG_PASSWORD
from secondfactor import (EMPTY_CODE, INVALID_CODE, KEY, ON, RECOVERY_HEADER, RECOVERY_LINE, SCAN,
                          TYPE, WELCOME, Live, authorized_home, enable, enabled, events, expected_uri,
                          failures, login, oath, qr_modules, steady, wrong_code, zbar)


# Enrollment.

def test_enable_prints_exactly_the_contract_lines(activated):
    """A right oathtool code: exit 0, nothing on stderr, stdout is the scan sentence, the QR
    lines, URI, Key, the on sentence, the recovery header and ten codes, in that order."""
    enrollment = enable(activated)
    result = enrollment.result
    assert (result.code, result.stderr) == (0, ""), result
    assert KEY.match(enrollment.key), enrollment.key
    lines = result.out_lines
    qr = enrollment.qr
    assert len(qr) >= 15
    assert lines == ([SCAN] + qr + [f"URI: {expected_uri(activated, enrollment.key)}",
                                    f"Key: {enrollment.key}", ON.format(USERNAME),
                                    RECOVERY_HEADER]
                     + [f"  {code}" for code in enrollment.codes])
    assert len(enrollment.codes) == 10 and len(set(enrollment.codes)) == 10


def test_enable_with_pyotp_code(activated):
    """A code computed by pyotp from the printed key is accepted, and the key is the secret
    of the URI (pyotp parses the URI to the same key, SHA-1, 6 digits, 30 s)."""
    enrollment = enable(activated, code=lambda key: pyotp.TOTP(key).now())
    assert (enrollment.result.code, enrollment.result.stderr) == (0, ""), enrollment.result
    parsed = pyotp.parse_uri(enrollment.uri)
    assert (parsed.secret, parsed.digits, parsed.interval, parsed.issuer) == (
        enrollment.key, 6, 30, "accounts")
    domain = activated.db.name if activated.postgresql else socket.gethostname()
    assert parsed.name == f"{USERNAME}@{domain}"
    assert ON.format(USERNAME) in enrollment.result.out_lines


def test_enable_accepts_one_step_later(activated):
    """At enrollment a code of the next step (a phone up to 30 s ahead) is accepted."""
    enrollment = enable(activated, code=lambda key: oath(key, time.time() + 30))
    assert (enrollment.result.code, enrollment.result.stderr) == (0, ""), enrollment.result


def test_enable_accepts_one_step_earlier(activated):
    """At enrollment a code of the step before (a phone up to 30 s behind) is accepted."""
    def attempt(step):
        if activated.query("SELECT count(*) FROM second_factor") != [(0,)]:
            assert activated.run("user", "reset-2fa", USERNAME).code == 0  # an earlier try
        return enable(activated, code=lambda key: code_for_step(key, step - 1))
    enrollment = steady(attempt)
    assert (enrollment.result.code, enrollment.result.stderr) == (0, ""), enrollment.result


def test_enable_logs_event_and_stores_no_plaintext(activated):
    """After enrollment: a second_factor_enabled event; one second_factor row whose sealed
    secret is a blob; neither the Base32 key, its raw 20 bytes, their hex nor any recovery code
    appears in the database file or its -wal (PostgreSQL: in any value of any table);
    recovery_code holds 10 unused 32-byte blobs."""
    enrollment = enable(activated)
    assert enrollment.result.code == 0, enrollment.result
    assert events(activated)[-1][:2] == ("second_factor_enabled", USERNAME)
    # A blob reads as bytes (text would read as str) from both stores; PostgreSQL's server
    # encrypts the secret itself.
    column = "server_secret" if activated.postgresql else "sealed_secret"
    rows = [(type(secret), len(secret))
            for (secret,) in activated.query(f"SELECT {column} FROM second_factor")]
    assert len(rows) == 1 and rows[0][0] is bytes and rows[0][1] > 20, rows
    hashes = [(type(code_hash), len(code_hash), used_at)
              for code_hash, used_at in activated.query("SELECT code_hash, used_at "
                                                        "FROM recovery_code")]
    assert hashes == [(bytes, 32, None)] * 10
    assert len({h for (h,) in activated.query("SELECT code_hash FROM recovery_code")}) == 10
    raw = base64.b32decode(enrollment.key)
    assert len(raw) == 20
    needles = [enrollment.key.encode(), enrollment.key.lower().encode(), raw,
               raw.hex().encode(), raw.hex().upper().encode()]
    for code in enrollment.codes:
        needles += [code.encode(), code.replace("-", "").encode(),
                    base64.b32decode(code.replace("-", ""))]
    if activated.postgresql:
        tables = [t for (t,) in activated.query(
            "SELECT tablename::text FROM pg_tables WHERE schemaname = 'accounts'")]
        assert "second_factor" in tables, tables
        for table in tables:
            for row in activated.query(f"SELECT * FROM {table}"):
                for value in row:
                    data = value if isinstance(value, bytes) else str(value).encode()
                    for needle in needles:
                        assert needle not in data, f"{needle!r} found in {table}"
        return
    files = [activated.db, activated.db.with_name(activated.db.name + "-wal")]
    for path in files:
        if path.exists():
            data = path.read_bytes()
            for needle in needles:
                assert needle not in data, f"{needle!r} found in {path.name}"


def test_enable_makes_the_key_file(activated):
    """Before enrollment there is no key file; after it `<database>.key` is a regular file of
    ours, mode 0600, 64 lowercase hex characters and a newline. PostgreSQL: none is made
    (~/.config/accounts/postgresql.key), the server keeps the secret."""
    assert not activated.key_file.exists()
    assert enable(activated).result.code == 0
    if activated.postgresql:
        assert not activated.key_file.exists()
        return
    info = os.lstat(activated.key_file)
    assert stat.S_ISREG(info.st_mode)
    assert stat.S_IMODE(info.st_mode) == 0o600
    assert info.st_uid == os.geteuid()
    assert re.fullmatch(rb"[0-9a-f]{64}\n", activated.key_file.read_bytes())


@pytest.mark.sqlite_only
def test_second_enrollment_keeps_the_key_file(activated):
    """A second account's enrollment reuses the key file: same bytes, still 0600 (an SQLite
    store's: a PostgreSQL store's host has none)."""
    activated.add_user()
    assert enable(activated).result.code == 0
    before = activated.key_file.read_bytes()
    enrollment = enable(activated, username=BOB, password=BOB_PASSWORD)
    assert enrollment.result.code == 0, enrollment.result
    assert activated.key_file.read_bytes() == before
    assert stat.S_IMODE(os.stat(activated.key_file).st_mode) == 0o600


def test_enable_qr_none(activated):
    """`--qr none`: the sentence to type the key (none to scan), URI and Key, no QR line, then
    the usual end."""
    enrollment = enable(activated, args=("--qr", "none"))
    result = enrollment.result
    assert (result.code, result.stderr) == (0, ""), result
    assert result.out_lines == ([TYPE, f"URI: {expected_uri(activated, enrollment.key)}",
                                 f"Key: {enrollment.key}", ON.format(USERNAME), RECOVERY_HEADER]
                                + [f"  {code}" for code in enrollment.codes])
    assert not any(ch in result.stdout for ch in "▀▄█\x1b")


def test_enable_qr_bad_value(activated):
    """`--qr` other than terminal or none is a usage error: exit 2, nothing printed on stdout,
    nothing stored."""
    result = activated.run("2fa", "enable", "--username", USERNAME, "--qr", "png",
                           input=PASSWORD + "\n")
    assert (result.code, result.stdout) == (2, "")
    assert "--qr" in result.stderr
    assert activated.query("SELECT count(*) FROM second_factor") == [(0,)]


def test_enable_reads_the_user_name_line(activated):
    """Without --username, `2fa enable` through a pipe reads the user name, the password, then
    (after printing the key) the code."""
    live = Live(activated, "2fa", "enable", "--qr", "none")
    live.send(USERNAME)
    live.send(PASSWORD)
    key = live.read_until("Key: ")[-1][len("Key: "):]
    live.send(oath(key))
    result = live.finish()
    assert (result.code, result.stderr) == (0, ""), result
    assert result.out_lines[:4] == [TYPE, f"URI: {expected_uri(activated, key)}", f"Key: {key}",
                                    ON.format(USERNAME)]


def test_enable_with_password_stdin(activated):
    """`2fa enable --username U --password-stdin`: the password line, then the code line."""
    enrollment = enable(activated, args=("--password-stdin",))
    assert (enrollment.result.code, enrollment.result.stderr) == (0, ""), enrollment.result
    assert ON.format(USERNAME) in enrollment.result.out_lines


# The QR code, read back by zbarimg.

def test_qr_decodes_to_the_printed_uri(activated):
    """The QR lines (black on white, a 4-module quiet zone on every side) read by zbarimg give
    exactly the printed URI."""
    enrollment = enable(activated)
    assert enrollment.result.code == 0, enrollment.result
    rows = qr_modules(enrollment.qr)
    widths = {len(row) for row in rows}
    assert len(widths) == 1, widths
    width = widths.pop()
    size = width - 8
    assert size >= 21 and (size - 21) % 4 == 0, f"{size} is not a QR code's size"
    assert len(rows) in (width, width + 1)
    drawn = rows[:width]
    for row in drawn[:4] + drawn[-4:]:
        assert not any(row), "the quiet zone has a dark module"
    for row in rows:
        assert not any(row[:4]) and not any(row[-4:]), "the quiet zone has a dark module"
    assert any(any(row) for row in drawn)
    assert drawn[4][4:11] == [True] * 7, "no finder pattern in the top left corner"
    assert zbar(rows, activated.root) == enrollment.uri == expected_uri(activated, enrollment.key)


# Enrollment refused.

def test_enable_wrong_code_stores_nothing(activated):
    """A wrong code: exit 1, `Invalid verification code!`, no second_factor or recovery_code row,
    no event, status off, and login needs no code."""
    enrollment = enable(activated, code=wrong_code)
    result = enrollment.result
    assert (result.code, result.stderr) == (1, INVALID_CODE + "\n"), result
    assert ON.format(USERNAME) not in result.stdout
    assert not any(RECOVERY_LINE.match(line) for line in result.out_lines)
    assert activated.query("SELECT count(*) FROM second_factor") == [(0,)]
    assert activated.query("SELECT count(*) FROM recovery_code") == [(0,)]
    assert [e for e in events(activated) if e[0].startswith("second_factor")] == []
    status = activated.run("2fa", "status", "--user", USERNAME)
    assert (status.code, status.stdout) == (0, f"Two-factor authentication is off for {USERNAME}.\n")
    plain = activated.login()
    assert (plain.code, plain.stdout, plain.stderr) == (0, WELCOME + "\n", "")


def test_enable_wrong_code_makes_no_key_file(activated):
    """The key file is made the first time a second factor is enabled: a refused enrollment
    leaves none."""
    assert enable(activated, code=wrong_code).result.code == 1
    assert not activated.key_file.exists()


@pytest.mark.parametrize("offset,words", [(4, "120 seconds ahead of"), (2, "60 seconds ahead of"),
                                          (-4, "120 seconds behind"), (-20, "600 seconds behind")])
def test_enable_clock_off(activated, offset, words):
    """A code of a step 2..20 steps from now: the clock sentence with the sign and the whole
    seconds, exit 1 at a pipe, nothing stored."""
    def attempt(step):
        return enable(activated, code=lambda key: code_for_step(key, step + offset))
    result = steady(attempt).result
    assert (result.code, result.stderr) == (
        1, f"That code is for a time about {words} this device's clock: set the clock right "
           "and try again.\n"), result
    assert activated.query("SELECT count(*) FROM second_factor") == [(0,)]


def test_enable_code_from_the_pyotp_future(activated):
    """pyotp's code for two minutes from now says the phone is about 120 seconds ahead."""
    def attempt(step):
        return enable(activated, code=lambda key: pyotp.TOTP(key).at(step * STEP + 120))
    result = steady(attempt).result
    assert result.code == 1
    assert result.stderr == ("That code is for a time about 120 seconds ahead of this device's "
                             "clock: set the clock right and try again.\n")


def test_enable_code_too_far_away_is_wrong(activated):
    """A code 25 steps away is not told as a clock: `Invalid verification code!`, exit 1."""
    result = enable(activated, code=lambda key: oath(key, time.time() + 25 * STEP)).result
    assert (result.code, result.stderr) == (1, INVALID_CODE + "\n"), result


def test_enable_empty_code(activated):
    """An empty code line: `Please fill all fields!` / `Empty: Verification code.`, exit 1,
    nothing stored."""
    result = enable(activated, code=lambda key: "").result
    assert (result.code, result.stderr) == (1, EMPTY_CODE), result
    assert activated.query("SELECT count(*) FROM second_factor") == [(0,)]


def test_enable_wrong_password(activated):
    """A wrong password: `Invalid user name or password!` exit 1, counted as a failure, no key
    shown."""
    result = activated.run("2fa", "enable", "--username", USERNAME,
                           input=WRONG_PASSWORD + "\n123456\n")
    assert (result.code, result.stdout, result.stderr) == (1, "", INVALID + "\n")
    assert failures(activated) == 1


def test_enable_already_on(activated):
    """Enabling again: after the right password, `Two-factor authentication is already on for
    alice.` exit 1, no key shown, the old key still works."""
    enrollment = enabled(activated)
    result = activated.run("2fa", "enable", "--username", USERNAME, input=PASSWORD + "\n")
    assert (result.code, result.stdout, result.stderr) == (
        1, "", f"Two-factor authentication is already on for {USERNAME}.\n")
    authorized_home(login(activated, oath(enrollment.key)))
