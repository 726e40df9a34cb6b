"""The TOTP second factor: enrollment with `2fa enable` (key, URI, QR code, recovery
codes, what the database keeps), logins that need a code, replays and the lockout, recovery codes,
`2fa disable|status|recovery-codes`, `user reset-2fa`, `verify`, the key file beside the database,
and a walk at a terminal.

Oracles: `oathtool` and `pyotp` compute the codes; `zbarimg` reads the printed QR code. The tests
never wait for time to pass: where a code must be fresh, the stored last accepted step is moved back
(as if the code before was typed minutes ago), and where the outcome depends on which 30-second
step the binary sees, the attempt is redone if a step boundary passed while it ran."""

import base64
import json
import os
import pathlib
import queue
import re
import secrets
import shutil
import signal
import socket
import sqlite3
import stat
import subprocess
import threading
import time
import urllib.parse

import pyotp
import pytest
from totp import STEP, code_for_step, step_of

from conftest import (BIN, BOB, BOB_PASSWORD, FILL, FULL_NAME, INVALID, NEW_PASSWORD,
                      NOBODY_UID, PASSWORD, TOO_MANY, USERNAME, WRONG_PASSWORD, Result, answer,
                      answer_secret, finish, form, screen, store_execute)

WELCOME = f"Welcome back {FULL_NAME}!"
AUTHORIZED = "You are successfully authorized."
INVALID_CODE = "Invalid verification code!"
REPLAY = "That code was already used; wait for the next one."
EMPTY_CODE = f"{FILL}\nEmpty: Verification code.\n"
SCAN = "Scan this QR code with your authenticator app, or type the key below into it."
ON = "Two-factor authentication is on for {}."
RECOVERY_HEADER = ("Recovery codes (each works once in place of a code; they are not shown "
                   "again):")
NEW_RECOVERY_HEADER = ("New recovery codes for {} (the old ones no longer work; these are not "
                       "shown again):")
NOT_ON = "Two-factor authentication is not on for {}."
NOT_LOGGED_IN = "Not logged in."
KEY = re.compile(r"^[A-Z2-7]{32}$")
RECOVERY_LINE = re.compile(r"^  ([A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4})$")
ISO_UTC = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"


# Codes.

def oath(key: str, at: float | None = None) -> str:
    """The code `oathtool --totp -b` computes for `key`, now or at the time `at`."""
    args = ["oathtool", "--totp", "-b"]
    if at is not None:
        args += ["-N", f"@{int(at)}"]
    out = subprocess.run(args + [key], capture_output=True, text=True, check=True).stdout
    code = out.strip()
    assert re.fullmatch(r"\d{6}", code), out
    return code


def wrong_code(key: str) -> str:
    """Six digits that are not the code of any step within 25 steps of now."""
    now = step_of(time.time())
    taken = {code_for_step(key, s) for s in range(now - 25, now + 27)}
    return next(c for c in (f"{n:06d}" for n in range(1_000_000)) if c not in taken)


def steady(attempt, tries=4):
    """Calls attempt(step) with the current 30-second step until no step boundary passed while
    it ran (so the binary saw that same step); returns its result."""
    for _ in range(tries):
        step = step_of(time.time())
        result = attempt(step)
        if step_of(time.time()) == step:
            return result
    pytest.fail("a 30-second step boundary passed during every attempt")


# The binary on pipes, for `2fa enable`: the code typed depends on the key it prints.

class Live:
    """The binary with stdin, stdout and stderr on pipes; stdout is read as it is written."""

    def __init__(self, device, *args, env=None):
        self.proc = subprocess.Popen(
            [BIN, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=env if env is not None else device.env(),
            cwd=str(device.root))
        self.lines = queue.Queue()
        self.out = []
        self.err = []
        self.readers = [threading.Thread(target=self._read_out, daemon=True),
                        threading.Thread(target=self._read_err, daemon=True)]
        for reader in self.readers:
            reader.start()

    def _read_out(self):
        for raw in self.proc.stdout:
            line = raw.decode("utf-8")
            self.out.append(line)
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def _read_err(self):
        self.err.append(self.proc.stderr.read().decode("utf-8"))

    def send(self, line: str):
        self.proc.stdin.write((line + "\n").encode("utf-8"))
        self.proc.stdin.flush()

    def read_until(self, prefix: str, timeout=20, may_end=False) -> list:
        """The stdout lines up to and including the first that starts with `prefix` (or, with
        `may_end`, all of them if the program ends first)."""
        seen = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.proc.kill()
                pytest.fail(f"no stdout line starting with {prefix!r} before the prompt for "
                            f"the code (stdout not flushed?); saw {seen!r}")
            if line is None:
                if may_end:
                    return seen
                self.finish()
                pytest.fail(f"the program ended before printing {prefix!r}: exit "
                            f"{self.proc.returncode}, stdout {''.join(self.out)!r}, "
                            f"stderr {''.join(self.err)!r}")
            seen.append(line)
            if line.startswith(prefix):
                return seen

    def finish(self, timeout=30) -> Result:
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        code = self.proc.wait(timeout=timeout)
        for reader in self.readers:
            reader.join(timeout=timeout)
        return Result(code, "".join(self.out), "".join(self.err))


class Enrollment:
    """What one `2fa enable` through a pipe printed, read apart."""

    def __init__(self, result: Result, key: str):
        self.result = result
        self.key = key
        lines = result.out_lines
        uris = [line for line in lines if line.startswith("URI: ")]
        self.uri = uris[0][len("URI: "):] if uris else None
        self.qr = lines[1:lines.index(f"URI: {self.uri}")] if uris else []
        self.codes = [m.group(1) for m in map(RECOVERY_LINE.match, lines) if m]


def enable(device, code=lambda key: oath(key), username=USERNAME, password=PASSWORD, args=(),
           env=None) -> Enrollment:
    """`accounts 2fa enable --username U ARGS` through a pipe: the password line, then (once the
    Key line is out) the line `code(key)`, or end of input if that is None."""
    live = Live(device, "2fa", "enable", "--username", username, *args, env=env)
    live.send(password)
    key = live.read_until("Key: ")[-1][len("Key: "):]
    line = code(key)
    if line is not None:
        live.send(line)
    return Enrollment(live.finish(), key)


def expected_uri(key, username=USERNAME):
    label = urllib.parse.quote(f"{username}@{socket.gethostname()}", safe="")
    return (f"otpauth://totp/accounts:{label}?secret={key}&issuer=accounts&algorithm=SHA1"
            f"&digits=6&period=30")


def enabled(device, username=USERNAME, password=PASSWORD) -> Enrollment:
    """Second factor turned on with a right code, then the last accepted step moved ten steps
    back (as if that was five minutes ago), so a code of this step is fresh."""
    enrollment = enable(device, username=username, password=password)
    assert enrollment.result.code == 0, enrollment.result
    rewind(device, username)
    return enrollment


def rewind(device, username=USERNAME, steps=10, db=None):
    """Moves the account's last accepted step `steps` back."""
    changed = store_execute(
        db or device.db, "UPDATE second_factor SET last_step = last_step - ? WHERE account_id = "
        "(SELECT id FROM account WHERE username_key = ?)", steps, username.lower())
    assert changed == 1


def login(device, code, username=USERNAME, password=PASSWORD, args=(), env=None) -> Result:
    """`accounts login ARGS` through a pipe: user name, password and code lines."""
    return device.run("login", *args, input=f"{username}\n{password}\n{code}\n", env=env)


def events(device, env=None):
    result = device.run("log", "--json", env=env)
    assert result.code == 0, result
    return [(e["event"], e["user"], e["detail"]) for e in map(json.loads, result.out_lines)]


def failures(device, name=USERNAME, env=None) -> int:
    result = device.run("user", "show", name, "--json", env=env)
    assert result.code == 0, result
    return json.loads(result.stdout)["failures"]


def authorized_home(result):
    """A login with the second factor succeeded: exit 0, the one sentence on stderr, Home."""
    assert (result.code, result.stderr) == (0, AUTHORIZED + "\n"), result
    assert result.out_lines[0] == WELCOME, result


def recovered(result, left, warning=None):
    """A login with a recovery code succeeded: Home, and stderr says how many are left (the
    contract does not say whether `You are successfully authorized.` comes first: either way)."""
    assert result.code == 0, result
    assert result.out_lines[0] == WELCOME, result
    lines = result.err_lines
    if lines and lines[0] == AUTHORIZED:
        lines = lines[1:]
    expected = [f"Recovery code accepted; {left} left."] + ([warning] if warning else [])
    assert lines == expected, result


def only_left(n):
    codes = "recovery code" if n == 1 else "recovery codes"
    return f"Only {n} {codes} left: make new ones with accounts 2fa recovery-codes."


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
    assert lines == ([SCAN] + qr + [f"URI: {expected_uri(enrollment.key)}",
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
    assert parsed.name == f"{USERNAME}@{socket.gethostname()}"
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
    # A blob reads as bytes (text would read as str) from both stores.
    rows = [(type(secret), len(secret))
            for (secret,) in activated.query("SELECT sealed_secret FROM second_factor")]
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
    """Before enrollment there is no key file; after it `<database>.key` (PostgreSQL:
    ~/.config/accounts/postgresql.key) is a regular file of ours, mode 0600, 64 lowercase hex
    characters and a newline."""
    assert not activated.key_file.exists()
    assert enable(activated).result.code == 0
    info = os.lstat(activated.key_file)
    assert stat.S_ISREG(info.st_mode)
    assert stat.S_IMODE(info.st_mode) == 0o600
    assert info.st_uid == os.geteuid()
    assert re.fullmatch(rb"[0-9a-f]{64}\n", activated.key_file.read_bytes())


def test_second_enrollment_keeps_the_key_file(activated):
    """A second account's enrollment reuses the key file: same bytes, still 0600."""
    activated.add_user()
    assert enable(activated).result.code == 0
    before = activated.key_file.read_bytes()
    enrollment = enable(activated, username=BOB, password=BOB_PASSWORD)
    assert enrollment.result.code == 0, enrollment.result
    assert activated.key_file.read_bytes() == before
    assert stat.S_IMODE(os.stat(activated.key_file).st_mode) == 0o600


def test_enable_qr_none(activated):
    """`--qr none`: the scan sentence, URI and Key, no QR line, then the usual end."""
    enrollment = enable(activated, args=("--qr", "none"))
    result = enrollment.result
    assert (result.code, result.stderr) == (0, ""), result
    assert result.out_lines == ([SCAN, f"URI: {expected_uri(enrollment.key)}",
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


# The QR code, read back by zbarimg.

SGR = re.compile(r"(\x1b\[[0-9;]*m)")
BASIC = {0: True, 7: False}          # black is dark, white is light; other colours are not allowed
PALETTE = {0: True, 16: True, 7: False, 15: False, 231: False}


def _sgr(params, state):
    """Applies one SGR sequence to state = [fg, bg, reverse] (None = the terminal's default)."""
    codes = [int(p) if p else 0 for p in params.split(";")] if params else [0]
    i = 0
    while i < len(codes):
        c = codes[i]
        if c == 0:
            state[:] = [None, None, False]
        elif c == 7:
            state[2] = True
        elif c == 27:
            state[2] = False
        elif 30 <= c <= 37 or 90 <= c <= 97:
            assert (c % 10) in BASIC, f"foreground colour {c} is neither black nor white"
            assert c != 90, "bright black (grey) is not black"
            state[0] = BASIC[c % 10]
        elif 40 <= c <= 47 or 100 <= c <= 107:
            assert (c % 10) in BASIC, f"background colour {c} is neither black nor white"
            assert c != 100, "bright black (grey) is not black"
            state[1] = BASIC[c % 10]
        elif c in (39, 49):
            state[0 if c == 39 else 1] = None
        elif c in (38, 48):
            slot = 0 if c == 38 else 1
            if codes[i + 1] == 5:
                assert codes[i + 2] in PALETTE, f"palette colour {codes[i + 2]}"
                state[slot] = PALETTE[codes[i + 2]]
                i += 2
            else:
                r, g, b = codes[i + 2:i + 5]
                assert len({r, g, b}) == 1 and r in (0, 255), f"colour {(r, g, b)}"
                state[slot] = r == 0
                i += 4
        i += 1


def qr_modules(lines) -> list:
    """The printed half-block lines back to rows of modules (True = dark): `▀` is the upper
    module in the foreground colour and the lower in the background colour, `▄` the other way
    round, `█` both foreground, a space both background. Colours carry over from line to line
    as on a terminal; every module must be drawn in an explicit black or white."""
    state = [None, None, False]
    rows = []
    for line in lines:
        upper, lower = [], []
        for piece in SGR.split(line):
            if SGR.fullmatch(piece):
                _sgr(piece[2:-1], state)
                continue
            for ch in piece:
                fg, bg = (state[1], state[0]) if state[2] else (state[0], state[1])
                halves = {"▀": (fg, bg), "▄": (bg, fg), "█": (fg, fg), " ": (bg, bg)}
                assert ch in halves, f"unexpected character {ch!r} in a QR line"
                top, bottom = halves[ch]
                assert top is not None and bottom is not None, \
                    f"a module in the terminal's default colour in {line!r}"
                upper.append(top)
                lower.append(bottom)
        rows += [upper, lower]
    return rows


def zbar(rows, folder: pathlib.Path, scale=8) -> str:
    """What `zbarimg --raw -q` reads from the modules, as a PGM image scaled up."""
    width = len(rows[0]) * scale
    image = bytearray(f"P5\n{width} {len(rows) * scale}\n255\n".encode())
    for row in rows:
        line = b"".join((b"\x00" if dark else b"\xff") * scale for dark in row)
        image += line * scale
    path = folder / "qr.pgm"
    path.write_bytes(bytes(image))
    result = subprocess.run(["zbarimg", "--raw", "-q", str(path)], capture_output=True,
                            text=True)
    assert result.returncode == 0, result
    return result.stdout.rstrip("\n")


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
    assert zbar(rows, activated.root) == enrollment.uri == expected_uri(enrollment.key)


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


# Logging in with the second factor.

def test_login_needs_the_code(activated):
    """With 2FA on, login reads a third line: the right oathtool code gives `You are successfully
    authorized.` on stderr and Home on stdout, and a login_success event."""
    enrollment = enabled(activated)
    result = login(activated, oath(enrollment.key))
    authorized_home(result)
    assert events(activated)[-1][:2] == ("login_success", USERNAME)
    whoami = activated.run("whoami", "--json")
    assert whoami.code == 0, whoami
    assert json.loads(whoami.stdout)["secondFactor"] is True


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
    assert result.out_lines[:4] == [SCAN, f"URI: {expected_uri(key)}", f"Key: {key}",
                                    ON.format(USERNAME)]


def test_enable_with_password_stdin(activated):
    """`2fa enable --username U --password-stdin`: the password line, then the code line."""
    enrollment = enable(activated, args=("--password-stdin",))
    assert (enrollment.result.code, enrollment.result.stderr) == (0, ""), enrollment.result
    assert ON.format(USERNAME) in enrollment.result.out_lines


def test_login_with_flags_reads_code_line(activated):
    """`login --username U --password-stdin`: the password line, then the code line."""
    enrollment = enabled(activated)
    result = activated.run("login", "--username", USERNAME, "--password-stdin",
                           input=f"{PASSWORD}\n{oath(enrollment.key)}\n")
    authorized_home(result)


def test_login_without_the_code_line(activated):
    """Input ending before the code: not logged in, exit 1, the usual sentence."""
    enabled(activated)
    result = activated.run("login", input=f"{USERNAME}\n{PASSWORD}\n")
    assert (result.code, result.stdout, result.stderr) == (
        1, "", "Input ended before the login was complete; you are not logged in.\n")


def test_bare_flow_through_a_pipe(activated):
    """Bare `accounts` (no session) through a pipe asks the code too, then shows Home."""
    enrollment = enabled(activated)
    result = activated.run(input=f"{USERNAME}\n{PASSWORD}\n{oath(enrollment.key)}\n")
    authorized_home(result)


def test_code_one_step_later_accepted(activated):
    """A code of the next step (pyotp at now+30) is accepted."""
    enrollment = enabled(activated)
    authorized_home(login(activated, pyotp.TOTP(enrollment.key).at(time.time() + 30)))


def test_code_one_step_earlier_accepted(activated):
    """A code of the step before (pyotp at now-30) is accepted."""
    enrollment = enabled(activated)
    result = steady(lambda step: login(activated, code_for_step(enrollment.key, step - 1)))
    assert (result.code, result.stderr) == (0, AUTHORIZED + "\n"), result
    assert result.out_lines[0] == WELCOME


def test_each_accepted_code_must_be_later(activated):
    """After a code of this step was accepted, the next one must be of a later step: the code
    of now+30 is accepted, then this step's code is a replay (an earlier step)."""
    enrollment = enabled(activated)
    totp = pyotp.TOTP(enrollment.key)
    t = time.time()
    authorized_home(login(activated, totp.at(t)))
    authorized_home(login(activated, totp.at(t + 30)))
    result = login(activated, totp.at(t))
    assert (result.code, result.stdout, result.stderr) == (1, "", REPLAY + "\n")


@pytest.mark.parametrize("offset", [3, -3])
def test_code_three_steps_away_refused(activated, offset):
    """A code three steps from now is wrong at login (only one step of skew): exit 1,
    `Invalid verification code!`, counted."""
    enrollment = enabled(activated)
    result = login(activated, pyotp.TOTP(enrollment.key).at(time.time() + offset * STEP))
    assert (result.code, result.stdout, result.stderr) == (1, "", INVALID_CODE + "\n")
    assert failures(activated) == 1


def test_same_code_twice_is_a_replay(activated):
    """The same code a second time: `That code was already used; wait for the next one.` exit 1,
    logged as `verification code replayed` and counted."""
    enrollment = enabled(activated)
    code = oath(enrollment.key)
    authorized_home(login(activated, code))
    result = login(activated, code)
    assert (result.code, result.stdout, result.stderr) == (1, "", REPLAY + "\n")
    assert events(activated)[-1] == ("login_failure", USERNAME, "verification code replayed")
    assert failures(activated) == 1


def test_enrollment_code_cannot_log_in(activated):
    """The code typed at enrollment has its step stored: logging in with it is a replay."""
    typed = []

    def remembered(key):
        typed.append(oath(key))
        return typed[-1]
    assert enable(activated, code=remembered).result.code == 0
    result = login(activated, typed[0])
    assert (result.code, result.stderr) == (1, REPLAY + "\n"), result


def test_wrong_code(activated):
    """A wrong code after the right password: exit 1, `Invalid verification code!`, a
    login_failure `wrong verification code`, one failure counted, no session."""
    enrollment = enabled(activated)
    result = login(activated, wrong_code(enrollment.key))
    assert (result.code, result.stdout, result.stderr) == (1, "", INVALID_CODE + "\n")
    assert events(activated)[-1] == ("login_failure", USERNAME, "wrong verification code")
    assert failures(activated) == 1
    assert not activated.session_file.exists()


def test_five_wrong_codes_lock(activated):
    """Five wrong codes in a row: exit 1, 1, 1, 1, then 4 with the lock sentence; then even the
    right password and code exit 4."""
    enrollment = enabled(activated)
    results = [login(activated, wrong_code(enrollment.key)) for _ in range(5)]
    assert [r.code for r in results] == [1, 1, 1, 1, 4]
    last = results[-1]
    assert last.stdout == "" and len(last.err_lines) == 2, last
    assert last.err_lines[0] == INVALID_CODE and TOO_MANY in last.err_lines[1], last
    assert events(activated)[-1][:2] == ("lockout", USERNAME)
    locked = login(activated, oath(enrollment.key))
    assert locked.code == 4 and TOO_MANY in locked.stderr, locked


def test_wrong_codes_and_passwords_share_the_tally(activated):
    """Three wrong codes and two wrong passwords lock the name."""
    enrollment = enabled(activated)
    codes = [login(activated, wrong_code(enrollment.key)).code for _ in range(3)]
    codes += [activated.login(USERNAME, WRONG_PASSWORD).code for _ in range(2)]
    assert codes == [1, 1, 1, 1, 4]


def _blocked_reading_stdin(pid: int) -> bool:
    """The process's main thread waits in read(2) on its standard input (fd 0)."""
    fields = pathlib.Path(f"/proc/{pid}/syscall").read_text().split()
    return len(fields) > 2 and fields[0] == "0" and int(fields[1], 16) == 0


def _cpu_ticks(pid: int) -> int:
    """User plus system CPU time the process has used, in clock ticks."""
    after_name = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(after_name[11]) + int(after_name[12])


def _wait_for(condition, what, timeout=60):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting until {what}")
        time.sleep(0.001)


def _ended(proc) -> tuple:
    """Waits for a process whose input is closed; its (small) output."""
    proc.wait(timeout=120)
    return proc.stdout.read(), proc.stderr.read()


def test_logins_at_once_tell_the_locked_nothing(device):
    """Eight logins at once on an account with a second factor, seven with wrong passwords and
    one with the right one. Barrier: every process is blocked reading its password before any
    password is sent. The right one is held (SIGSTOP) once it is hashing, that is after it read
    the lock, and let go once the seven have ended: by then they have locked the name (five
    failures counted, two refused), so the right password gets the lock's answer, exit 4, and
    never the code question that would tell it is right."""
    # A stored hash of 3,000,000 iterations: each check takes long enough to be caught hashing.
    result = device.run("activate", input=form(),
                        env=device.env(ACCOUNTS_PBKDF2_ITERATIONS="3000000"))
    assert result.code == 0, result
    enabled(device)
    args = [BIN, "login", "--username", USERNAME, "--no-session"]
    procs = [subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=device.env(), cwd=str(device.root))
             for _ in range(8)]
    right, wrong = procs[0], procs[1:]
    try:
        for proc in procs:
            _wait_for(lambda: _blocked_reading_stdin(proc.pid), "every login waits for input")
        start = _cpu_ticks(right.pid)
        for proc in procs:
            proc.stdin.write(((PASSWORD if proc is right else WRONG_PASSWORD) + "\n").encode())
            proc.stdin.close()
        # Five ticks (50 ms) of CPU past the read: the lock was read, the hash is under way.
        _wait_for(lambda: _cpu_ticks(right.pid) >= start + 5, "the right login is hashing")
        right.send_signal(signal.SIGSTOP)
        ended = [_ended(proc) for proc in wrong]
        codes = sorted(proc.returncode for proc in wrong)
        assert codes == [1, 1, 1, 1, 4, 4, 4], (codes, ended)
        right.send_signal(signal.SIGCONT)
        out, err = _ended(right)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.kill()
                proc.wait()
    assert right.returncode == 4, (right.returncode, out, err)
    assert out == b"" and TOO_MANY in err.decode(), (out, err)
    assert b"Verification code" not in out + err
    logged = events(device)
    counted = [e for e in logged if e[0] == "login_failure" and e[2] == "invalid user name or password"]
    assert len(counted) == 5, logged
    assert [e[0] for e in logged].count("lockout") == 1, logged
    assert logged[-1] == ("login_failure", USERNAME, "locked"), logged


def test_empty_code(activated):
    """An empty code line: `Please fill all fields!` / `Empty: Verification code.`, exit 1, not
    counted."""
    enabled(activated)
    result = login(activated, "")
    assert (result.code, result.stdout, result.stderr) == (1, "", EMPTY_CODE)
    assert failures(activated) == 0


def test_code_with_spaces(activated):
    """A code typed as `123 456` is read without its space."""
    enrollment = enabled(activated)
    code = oath(enrollment.key)
    authorized_home(login(activated, f"{code[:3]} {code[3:]}"))


# Recovery codes.

def test_recovery_code_accepted_once(activated):
    """A recovery code at the code prompt logs in (`Recovery code accepted; 9 left.`, event
    recovery_code_used); the same code again is `Invalid verification code!`."""
    enrollment = enabled(activated)
    first = enrollment.codes[0]
    recovered(login(activated, first), 9)
    assert ("recovery_code_used", USERNAME) in [e[:2] for e in events(activated)]
    again = login(activated, first)
    assert (again.code, again.stdout, again.stderr) == (1, "", INVALID_CODE + "\n")
    assert activated.query("SELECT count(*) FROM recovery_code WHERE used_at IS NOT NULL") == [(1,)]


def test_recovery_code_case_spaces_hyphens(activated):
    """Case, spaces and hyphens of a recovery code do not matter."""
    enrollment = enabled(activated)
    typed = " ".join(enrollment.codes[1].replace("-", "").lower())
    recovered(login(activated, typed), 9)


def test_recovery_codes_run_down_with_warnings(activated):
    """Ten recovery codes: 9..3 left say only that; 2, 1, 0 left add `Only N recovery code(s)
    left: ...`; a TOTP login with 0 left warns too; an eleventh (used) code is refused."""
    enrollment = enabled(activated)
    for i, code in enumerate(enrollment.codes):
        left = 9 - i
        recovered(login(activated, code), left, only_left(left) if left <= 2 else None)
    result = login(activated, oath(enrollment.key))
    assert (result.code, result.err_lines) == (0, [AUTHORIZED, only_left(0)]), result
    assert login(activated, enrollment.codes[0]).code == 1
    status = activated.run("2fa", "status", "--user", USERNAME)
    assert status.stdout.endswith("; 0 recovery codes left.\n"), status


def test_unknown_recovery_code_is_wrong(activated):
    """A well-formed recovery code that was never issued is a wrong code, counted."""
    enabled(activated)
    result = login(activated, "AAAA-BBBB-CCCC-DDDD")
    assert (result.code, result.stderr) == (1, INVALID_CODE + "\n")
    assert failures(activated) == 1


def test_new_recovery_codes_replace_the_old(activated):
    """`2fa recovery-codes` (password, then a code) prints a new set of ten; the old codes stop
    working, the new ones work; event recovery_codes_made."""
    enrollment = enabled(activated)
    result = activated.run("2fa", "recovery-codes", "--username", USERNAME,
                           input=f"{PASSWORD}\n{oath(enrollment.key)}\n")
    assert result.code == 0, result
    lines = result.out_lines
    assert lines[0] == NEW_RECOVERY_HEADER.format(USERNAME)
    fresh = [RECOVERY_LINE.match(line).group(1) for line in lines[1:]]
    assert len(fresh) == 10 and len(lines) == 11 and not set(fresh) & set(enrollment.codes)
    assert ("recovery_codes_made", USERNAME) in [e[:2] for e in events(activated)]
    old = login(activated, enrollment.codes[0])
    assert (old.code, old.stderr) == (1, INVALID_CODE + "\n")
    recovered(login(activated, fresh[0]), 9)
    assert activated.query("SELECT count(*) FROM recovery_code WHERE used_at IS NULL") == [(9,)]


def test_recovery_codes_with_a_recovery_code(activated):
    """`2fa recovery-codes` takes a recovery code at the code prompt too."""
    enrollment = enabled(activated)
    result = activated.run("2fa", "recovery-codes", "--username", USERNAME,
                           input=f"{PASSWORD}\n{enrollment.codes[0]}\n")
    assert result.code == 0, result
    assert result.out_lines[0] == NEW_RECOVERY_HEADER.format(USERNAME)


def test_recovery_codes_wrong_code(activated):
    """`2fa recovery-codes` with a wrong code: exit 1, the old codes still work."""
    enrollment = enabled(activated)
    result = activated.run("2fa", "recovery-codes", "--username", USERNAME,
                           input=f"{PASSWORD}\n{wrong_code(enrollment.key)}\n")
    assert (result.code, result.stdout, result.stderr) == (1, "", INVALID_CODE + "\n")
    recovered(login(activated, enrollment.codes[0]), 9)


def test_recovery_codes_when_off(activated):
    """`2fa recovery-codes` without 2FA: after the right password, the not-on sentence, exit 1."""
    result = activated.run("2fa", "recovery-codes", "--username", USERNAME,
                           input=PASSWORD + "\n")
    assert (result.code, result.stdout, result.stderr) == (1, "", NOT_ON.format(USERNAME) + "\n")


# disable, status, reset-2fa, user show.

def test_enable_and_disable_end_other_sessions(activated):
    """A session of alice on another client ends when she turns 2FA on, and again (after a new
    login with a code there) when she turns it off."""
    elsewhere = activated.root / "other-state"
    elsewhere.mkdir(mode=0o700)
    other = activated.env(XDG_STATE_HOME=str(elsewhere))
    assert activated.run("login", input=f"{USERNAME}\n{PASSWORD}\n", env=other).code == 0
    assert activated.run("whoami", env=other).code == 0
    enrollment = enabled(activated)
    whoami = activated.run("whoami", env=other)
    assert (whoami.code, whoami.stderr) == (1, NOT_LOGGED_IN + "\n")
    authorized_home(login(activated, oath(enrollment.key), env=other))
    assert activated.run("whoami", env=other).code == 0
    result = activated.run("2fa", "disable", "--username", USERNAME,
                           input=f"{PASSWORD}\n{enrollment.codes[0]}\n")
    assert result.code == 0, result
    whoami = activated.run("whoami", env=other)
    assert (whoami.code, whoami.stderr) == (1, NOT_LOGGED_IN + "\n")


def test_disable(activated):
    """`2fa disable` (password, code): the off sentence, event second_factor_disabled; login then
    asks no code; status says off."""
    enrollment = enabled(activated)
    result = activated.run("2fa", "disable", "--username", USERNAME,
                           input=f"{PASSWORD}\n{oath(enrollment.key)}\n")
    assert (result.code, result.stdout, result.stderr) == (
        0, f"Two-factor authentication is off for {USERNAME}.\n", ""), result
    assert ("second_factor_disabled", USERNAME) in [e[:2] for e in events(activated)]
    plain = activated.login()
    assert (plain.code, plain.stderr) == (0, ""), plain
    assert plain.out_lines[0] == WELCOME
    status = activated.run("2fa", "status", "--user", USERNAME, "--json")
    assert (status.code, json.loads(status.stdout)) == (0, {
        "username": USERNAME, "enabled": False, "enabledAt": None, "recoveryCodesLeft": 0})


def test_disable_with_recovery_code(activated):
    """`2fa disable` takes a recovery code at the code prompt."""
    enrollment = enabled(activated)
    result = activated.run("2fa", "disable", "--username", USERNAME,
                           input=f"{PASSWORD}\n{enrollment.codes[3]}\n")
    assert result.code == 0, result
    assert f"Two-factor authentication is off for {USERNAME}." in result.out_lines


def test_disable_wrong_code_keeps_it_on(activated):
    """`2fa disable` with a wrong code: exit 1, still on."""
    enrollment = enabled(activated)
    result = activated.run("2fa", "disable", "--username", USERNAME,
                           input=f"{PASSWORD}\n{wrong_code(enrollment.key)}\n")
    assert (result.code, result.stdout, result.stderr) == (1, "", INVALID_CODE + "\n")
    status = activated.run("2fa", "status", "--user", USERNAME, "--json")
    assert json.loads(status.stdout)["enabled"] is True


def test_disable_when_off(activated):
    """`2fa disable` without 2FA: the not-on sentence after the right password, exit 1; a wrong
    password still says only `Invalid user name or password!`."""
    result = activated.run("2fa", "disable", "--username", USERNAME, input=PASSWORD + "\n")
    assert (result.code, result.stdout, result.stderr) == (1, "", NOT_ON.format(USERNAME) + "\n")
    result = activated.run("2fa", "disable", "--username", USERNAME,
                           input=WRONG_PASSWORD + "\n")
    assert (result.code, result.stdout, result.stderr) == (1, "", INVALID + "\n")


def test_enable_again_after_disable_gives_a_new_key(activated):
    """After disable, enable works again with a new key; the old key's codes no longer log in."""
    first = enabled(activated)
    assert activated.run("2fa", "disable", "--username", USERNAME,
                         input=f"{PASSWORD}\n{oath(first.key)}\n").code == 0
    second = enable(activated)
    assert second.result.code == 0, second.result
    assert second.key != first.key
    rewind(activated)
    old = login(activated, oath(first.key))
    assert (old.code, old.stderr) == (1, INVALID_CODE + "\n")
    authorized_home(login(activated, oath(second.key, time.time() + 30)))


def test_status_through_the_session(activated):
    """`2fa status` without --user speaks of the logged-in account: text and JSON agree on when
    it was turned on; 10 codes left."""
    enrollment = enabled(activated)
    authorized_home(login(activated, oath(enrollment.key)))
    text = activated.run("2fa", "status")
    assert text.code == 0 and text.stderr == "", text
    match = re.fullmatch(rf"Two-factor authentication is on for {USERNAME} since ({ISO_UTC}); "
                         r"10 recovery codes left\.\n", text.stdout)
    assert match, text.stdout
    js = activated.run("2fa", "status", "--json")
    assert js.code == 0, js
    assert json.loads(js.stdout) == {"username": USERNAME, "enabled": True,
                                     "enabledAt": match.group(1), "recoveryCodesLeft": 10}
    assert len(js.out_lines) == 1
    stored = activated.query("SELECT enabled_at FROM second_factor")
    assert stored == [(match.group(1),)]


def test_status_with_user_flag(activated):
    """`2fa status --user NAME` needs no session: on for alice, off for bob (text and JSON)."""
    enabled(activated)
    activated.add_user()
    alice = activated.run("2fa", "status", "--user", USERNAME)
    assert alice.code == 0 and re.fullmatch(
        rf"Two-factor authentication is on for {USERNAME} since {ISO_UTC}; 10 recovery codes "
        r"left\.\n", alice.stdout), alice
    bob = activated.run("2fa", "status", "--user", BOB)
    assert (bob.code, bob.stdout, bob.stderr) == (
        0, f"Two-factor authentication is off for {BOB}.\n", "")
    bob = activated.run("2fa", "status", "--user", BOB, "--json")
    assert (bob.code, json.loads(bob.stdout)) == (0, {
        "username": BOB, "enabled": False, "enabledAt": None, "recoveryCodesLeft": 0})


def test_status_not_logged_in(activated):
    """`2fa status` without a session: `Not logged in.` exit 1; unknown --user: exit 5."""
    enabled(activated)
    result = activated.run("2fa", "status")
    assert (result.code, result.stdout, result.stderr) == (1, "", NOT_LOGGED_IN + "\n")
    result = activated.run("2fa", "status", "--user", "nobody")
    assert (result.code, result.stdout) == (5, "")
    assert result.stderr == "No account named nobody.\n"


def test_status_after_no_session_login(activated):
    """A `login --no-session` with the code starts no session: status still `Not logged in.`"""
    enrollment = enabled(activated)
    authorized_home(login(activated, oath(enrollment.key), args=("--no-session",)))
    result = activated.run("2fa", "status")
    assert (result.code, result.stderr) == (1, NOT_LOGGED_IN + "\n")


def test_reset_2fa(activated):
    """`user reset-2fa alice`: the sentence, exit 0, event second_factor_reset, her session ends,
    and login needs no code."""
    enrollment = enabled(activated)
    authorized_home(login(activated, oath(enrollment.key)))
    assert activated.run("whoami").code == 0
    result = activated.run("user", "reset-2fa", USERNAME)
    assert (result.code, result.stdout, result.stderr) == (
        0, f"Two-factor authentication turned off for {USERNAME}; their sessions ended.\n", "")
    assert ("second_factor_reset", USERNAME) in [e[:2] for e in events(activated)]
    whoami = activated.run("whoami")
    assert (whoami.code, whoami.stderr) == (1, NOT_LOGGED_IN + "\n")
    plain = activated.login()
    assert (plain.code, plain.stderr) == (0, ""), plain
    assert plain.out_lines[0] == WELCOME


def test_reset_2fa_refusals(activated):
    """`user reset-2fa` for an account without 2FA: the not-on sentence, exit 1; unknown: exit 5."""
    activated.add_user()
    result = activated.run("user", "reset-2fa", BOB)
    assert (result.code, result.stdout, result.stderr) == (1, "", NOT_ON.format(BOB) + "\n")
    result = activated.run("user", "reset-2fa", "nobody")
    assert (result.code, result.stdout, result.stderr) == (5, "", "No account named nobody.\n")


def test_reset_2fa_event_in_log_json(activated):
    """The reset's event is in `accounts log --json` with the account's name."""
    enabled(activated)
    assert activated.run("user", "reset-2fa", USERNAME).code == 0
    logged = [json.loads(line) for line in activated.run("log", "--json").out_lines]
    resets = [e for e in logged if e["event"] == "second_factor_reset"]
    assert len(resets) == 1 and resets[0]["user"] == USERNAME, logged


def test_user_show_two_factor_lines(activated):
    """`user show` ends with `Two-factor: on since <ts> (N recovery codes left)` and
    `Sessions: N`; an account without 2FA shows `Two-factor: off`."""
    enrollment = enabled(activated)
    activated.add_user()
    recovered(login(activated, enrollment.codes[0]), 9)
    alice = activated.run("user", "show", USERNAME)
    assert alice.code == 0, alice
    enabled_at = activated.query("SELECT enabled_at FROM second_factor")[0][0]
    assert alice.out_lines[-2:] == [
        f"Two-factor: on since {enabled_at} (9 recovery codes left)", "Sessions: 1"]
    assert re.fullmatch(ISO_UTC, enabled_at)
    bob = activated.run("user", "show", BOB)
    assert bob.out_lines[-2:] == ["Two-factor: off", "Sessions: 0"]
    assert len(bob.out_lines) == 12


# verify and passwd with the second factor.

def test_verify_reads_the_code_line(activated):
    """`verify --username alice --password-stdin` with 2FA on: the right code on the next line
    exits 0 silently; the same code again and a wrong one exit 1 silently (verify prints
    nothing for right, wrong or locked), logged `verification code replayed` and `wrong
    verification code`; no code line exits 1 without a login_success."""
    enrollment = enabled(activated)
    args = ("verify", "--username", USERNAME, "--password-stdin")
    code = oath(enrollment.key)
    right = activated.run(*args, input=f"{PASSWORD}\n{code}\n")
    assert (right.code, right.stdout, right.stderr) == (0, "", "")
    replay = activated.run(*args, input=f"{PASSWORD}\n{code}\n")
    assert (replay.code, replay.stdout, replay.stderr) == (1, "", "")
    assert events(activated)[-1] == ("login_failure", USERNAME, "verification code replayed")
    wrong = activated.run(*args, input=f"{PASSWORD}\n{wrong_code(enrollment.key)}\n")
    assert (wrong.code, wrong.stdout, wrong.stderr) == (1, "", "")
    assert events(activated)[-1] == ("login_failure", USERNAME, "wrong verification code")
    successes = [e for e in events(activated) if e[0] == "login_success"]
    missing = activated.run(*args, input=f"{PASSWORD}\n")
    assert (missing.code, missing.stdout) == (1, "")
    assert [e for e in events(activated) if e[0] == "login_success"] == successes


def test_passwd_needs_the_code(activated):
    """`passwd` with 2FA on asks the code after the current password: a wrong one keeps the
    password; the right one changes it."""
    enrollment = enabled(activated)
    wrong = activated.run("passwd", "--username", USERNAME, input=(
        f"{PASSWORD}\n{wrong_code(enrollment.key)}\n{NEW_PASSWORD}\n{NEW_PASSWORD}\n"))
    assert (wrong.code, wrong.stdout, wrong.stderr) == (1, "", INVALID_CODE + "\n")
    right = activated.run("passwd", "--username", USERNAME, input=(
        f"{PASSWORD}\n{oath(enrollment.key)}\n{NEW_PASSWORD}\n{NEW_PASSWORD}\n"))
    assert (right.code, right.stdout) == (0, f"Password changed for {USERNAME}.\n"), right
    authorized_home(login(activated, oath(enrollment.key, time.time() + 30),
                          password=NEW_PASSWORD))


# The key file.

def copy_database(device, folder: pathlib.Path) -> pathlib.Path:
    """A consistent copy of the database (SQLite's backup) in another folder, private like the
    original, without the key file."""
    folder.mkdir(mode=0o700)
    copy = folder / "accounts.sqlite3"
    source = sqlite3.connect(device.db)
    target = sqlite3.connect(copy)
    try:
        source.backup(target)
    finally:
        target.close()
        source.close()
    os.chmod(copy, 0o600)
    return copy


def key_file_error(result, key_path):
    """Exit 3 with one sentence on stderr that names the key file."""
    assert (result.code, result.stdout) == (3, ""), result
    assert len(result.err_lines) == 1, result
    assert f"key file {key_path}" in result.stderr, result


def test_copied_database_without_key_file(activated):
    """A database copied without its key file: a TOTP code cannot be checked (exit 3 naming the
    key file, nothing counted); a recovery code still logs in; a different key of the right form
    is refused too; with the key file copied as well the TOTP login works. PostgreSQL: the same
    for another host of the same store (another HOME, so no ~/.config/accounts/postgresql.key)."""
    enrollment = enabled(activated)
    if activated.postgresql:
        other_home = activated.root / "other-host"
        other_home.mkdir(mode=0o700)
        env = activated.env(HOME=str(other_home))
        key_path = other_home / ".config" / "accounts" / "postgresql.key"
        assert not key_path.exists()
        key_path.parent.mkdir(mode=0o700, parents=True)
    else:
        copy = copy_database(activated, activated.root / "elsewhere")
        env = activated.env(ACCOUNTS_DATABASE=str(copy))
        key_path = pathlib.Path(str(copy) + ".key")
        assert not key_path.exists()

    result = login(activated, oath(enrollment.key), env=env)
    key_file_error(result, key_path)
    assert failures(activated, env=env) == 0

    recovered(login(activated, enrollment.codes[0], env=env), 9)

    key_path.write_text(secrets.token_hex(32) + "\n")
    os.chmod(key_path, 0o600)
    key_file_error(login(activated, oath(enrollment.key), env=env), key_path)

    shutil.copy2(activated.key_file, key_path)
    assert stat.S_IMODE(os.stat(key_path).st_mode) == 0o600
    authorized_home(login(activated, oath(enrollment.key), env=env))


def test_key_file_readable_by_others_refused(activated):
    """The key file made mode 0644: a TOTP login fails exit 3 naming it; back to 0600 it works."""
    enrollment = enabled(activated)
    os.chmod(activated.key_file, 0o644)
    key_file_error(login(activated, oath(enrollment.key)), activated.key_file)
    assert failures(activated) == 0
    os.chmod(activated.key_file, 0o600)
    authorized_home(login(activated, oath(enrollment.key)))


def enable_bob_refused(device, env=None) -> Result:
    """bob's `2fa enable` where the key file cannot be used: his password, then a right code if
    a key is shown at all (a refusal may come before it or after the code)."""
    live = Live(device, "2fa", "enable", "--username", BOB, "--qr", "none", env=env)
    live.send(BOB_PASSWORD)
    shown = live.read_until("Key: ", may_end=True)
    if shown and shown[-1].startswith("Key: "):
        live.send(oath(shown[-1][len("Key: "):]))
    return live.finish()


def test_enrollment_with_a_key_file_readable_by_others(activated):
    """With the key file made 0644, a second account's enrollment is refused: exit 3 naming the
    key file, nothing stored for bob (whether it stops before showing a key or after the
    code)."""
    enabled(activated)
    activated.add_user()
    os.chmod(activated.key_file, 0o644)
    result = enable_bob_refused(activated)
    assert result.code == 3, result
    assert len(result.err_lines) == 1 and f"key file {activated.key_file}" in result.stderr, \
        result
    assert ON.format(BOB) not in result.stdout
    assert activated.query("SELECT count(*) FROM second_factor") == [(1,)]


def test_damaged_key_file_refused(activated):
    """A key file that is not 64 hex characters: exit 3 naming it."""
    enrollment = enabled(activated)
    activated.key_file.write_text("not a key\n")
    key_file_error(login(activated, oath(enrollment.key)), activated.key_file)


def test_key_file_symlink_refused(activated):
    """A symlink in place of the key file (to the real key's bytes) is not a regular file:
    exit 3 naming the key file."""
    enrollment = enabled(activated)
    real = activated.root / "real.key"
    shutil.copy2(activated.key_file, real)
    activated.key_file.unlink()
    activated.key_file.symlink_to(real)
    key_file_error(login(activated, oath(enrollment.key)), activated.key_file)


def test_key_file_in_a_folder_others_may_write_refused(activated):
    """A key file (ACCOUNTS_KEY_FILE) in a folder others may write that is not sticky, or in a
    folder another user owns, is refused as the database would be there: a TOTP login exits 3
    with the sentence naming the folder and the fix, nothing counted; in a sticky folder (like
    /tmp) it is used. A second factor is not turned on with a key file to be made under such a
    folder, and nothing is made there."""
    enrollment = enabled(activated)
    shared = activated.root / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    key_path = shared / "accounts.key"
    shutil.copy2(activated.key_file, key_path)
    env = activated.env(ACCOUNTS_KEY_FILE=str(key_path))
    result = login(activated, oath(enrollment.key), env=env)
    assert (result.code, result.stdout, result.stderr) == (
        3, "", f"Cannot use the key file {key_path}: other users may write its folder {shared} "
        f"(mode 777, not sticky) and replace the file. Run `chmod go-w {shared}` or keep it in a "
        "private folder.\n"), result
    assert failures(activated) == 0
    shared.chmod(0o1777)
    authorized_home(login(activated, oath(enrollment.key), env=env))

    rewind(activated)
    theirs = activated.root / "theirs"
    theirs.mkdir()
    shutil.copy2(activated.key_file, theirs / "accounts.key")
    os.chown(theirs, NOBODY_UID, NOBODY_UID)
    env = activated.env(ACCOUNTS_KEY_FILE=str(theirs / "accounts.key"))
    result = login(activated, oath(enrollment.key), env=env)
    assert (result.code, result.stdout, result.stderr) == (
        3, "", f"Cannot use the key file {theirs}/accounts.key: its folder {theirs} belongs to "
        "the user nobody, who could replace the file. Keep it in a folder of your own.\n"), result
    assert failures(activated) == 0

    activated.add_user()
    open_folder = activated.root / "open"
    open_folder.mkdir()
    open_folder.chmod(0o777)
    new_key = open_folder / "keys" / "accounts.key"
    result = enable_bob_refused(activated, env=activated.env(ACCOUNTS_KEY_FILE=str(new_key)))
    assert result.code == 3, result
    assert result.err_lines == [
        f"Cannot use the key file {new_key}: other users may write its folder {open_folder} "
        f"(mode 777, not sticky) and replace the file. Run `chmod go-w {open_folder}` or keep "
        "it in a private folder."], result
    assert ON.format(BOB) not in result.stdout
    assert list(open_folder.iterdir()) == []
    assert activated.query("SELECT count(*) FROM second_factor") == [(1,)]


# At a terminal.

def test_terminal_enable_login_logout(activated):
    """At a terminal: `2fa enable` (key read off the screen, an oathtool code typed with echo
    on), `login` with a code, bare `accounts` shows Home with no prompt, `logout`, then bare
    `accounts` asks the user name again and takes a recovery code."""
    child = activated.spawn("2fa", "enable")
    answer(child, "User name: ", USERNAME)
    answer_secret(child, "Password: ", PASSWORD)
    child.expect(r"Key: ([A-Z2-7]{32})\r\n")
    key = child.match.group(1)
    code = oath(key)
    answer(child, "Verification code: ", code)
    child.expect_exact(ON.format(USERNAME))
    assert finish(child) == 0
    shown = screen(child)
    assert f"URI: {expected_uri(key)}\nKey: {key}\nVerification code: {code}\n" \
           f"{ON.format(USERNAME)}\n{RECOVERY_HEADER}\n" in shown, shown
    codes = [m.group(1) for m in map(RECOVERY_LINE.match, shown.splitlines()) if m]
    assert len(codes) == 10
    assert PASSWORD not in shown

    child = activated.spawn("login")
    answer(child, "User name: ", USERNAME)
    answer_secret(child, "Password: ", PASSWORD)
    later = oath(key, time.time() + 30)
    answer(child, "Verification code: ", later)
    assert finish(child) == 0
    shown = screen(child)
    assert shown.startswith(f"User name: {USERNAME}\nPassword: \nVerification code: {later}\n"
                            f"{AUTHORIZED}\n{WELCOME}\n"), shown

    child = activated.spawn()
    assert finish(child) == 0
    lines = screen(child).splitlines()
    assert lines[0] == WELCOME and lines[1].startswith("Last login: "), lines

    child = activated.spawn("logout")
    assert finish(child) == 0
    assert screen(child) == "Logged out.\n"
    assert not activated.session_file.exists()

    child = activated.spawn()
    answer(child, "User name: ", USERNAME)
    answer_secret(child, "Password: ", PASSWORD)
    answer(child, "Verification code: ", codes[0])
    assert finish(child) == 0
    shown = screen(child)
    assert f"Recovery code accepted; 9 left.\n{WELCOME}\n" in shown, shown


def test_terminal_qr_code_decodes(activated):
    """At a terminal the QR code on the screen (real SGR colours, black on white) reads back
    through zbarimg as exactly the URI shown under it."""
    child = activated.spawn("2fa", "enable", "--username", USERNAME)
    answer_secret(child, "Password: ", PASSWORD)
    child.expect(r"Key: ([A-Z2-7]{32})\r\n")
    key = child.match.group(1)
    answer(child, "Verification code: ", oath(key))
    assert finish(child) == 0
    lines = screen(child).splitlines()
    qr = lines[lines.index(SCAN) + 1:lines.index(f"URI: {expected_uri(key)}")]
    assert zbar(qr_modules(qr), activated.root) == expected_uri(key)


def test_terminal_enable_asks_again_after_a_wrong_code(activated):
    """At a terminal a wrong enrollment code says `Invalid verification code!` and asks again;
    the right code then turns it on."""
    child = activated.spawn("2fa", "enable", "--username", USERNAME, "--qr", "none")
    answer_secret(child, "Password: ", PASSWORD)
    child.expect(r"Key: ([A-Z2-7]{32})\r\n")
    key = child.match.group(1)
    answer(child, "Verification code: ", wrong_code(key))
    child.expect_exact(INVALID_CODE)
    answer(child, "Verification code: ", oath(key))
    assert finish(child) == 0
    assert f"{INVALID_CODE}\nVerification code: " in screen(child)
    assert ON.format(USERNAME) in screen(child)


def test_terminal_enable_three_wrong_codes_store_nothing(activated):
    """At a terminal three wrong enrollment codes end it: exit 1, nothing stored."""
    child = activated.spawn("2fa", "enable", "--username", USERNAME, "--qr", "none")
    answer_secret(child, "Password: ", PASSWORD)
    child.expect(r"Key: ([A-Z2-7]{32})\r\n")
    key = child.match.group(1)
    for _ in range(3):
        answer(child, "Verification code: ", wrong_code(key))
        child.expect_exact(INVALID_CODE)
    assert finish(child) == 1
    assert screen(child).count("Verification code: ") == 3
    assert activated.query("SELECT count(*) FROM second_factor") == [(0,)]
    assert ON.format(USERNAME) not in screen(child)


def test_terminal_enable_clock_off_asks_again(activated):
    """At a terminal a code four steps ahead says the clock sentence and asks again; a right
    code then turns it on."""
    child = activated.spawn("2fa", "enable", "--username", USERNAME, "--qr", "none")
    answer_secret(child, "Password: ", PASSWORD)
    child.expect(r"Key: ([A-Z2-7]{32})\r\n")
    key = child.match.group(1)
    answer(child, "Verification code: ", oath(key, time.time() + 4 * STEP))
    child.expect_exact("That code is for a time about ")
    child.expect_exact("seconds ahead of this device's clock: set the clock right and try "
                       "again.")
    answer(child, "Verification code: ", oath(key))
    assert finish(child) == 0
    assert ON.format(USERNAME) in screen(child)


def test_terminal_bare_flow_wrong_and_empty_code_go_back_to_login(activated):
    """In the bare flow at a terminal, a wrong code and then an empty one each go back to the
    User name prompt; the third attempt with a right code reaches Home, which counts the one
    wrong code (the empty one is not counted). A login without a session comes first, so Home
    counts since it."""
    plain = activated.run("login", "--no-session", input=f"{USERNAME}\n{PASSWORD}\n")
    assert plain.code == 0, plain
    enrollment = enabled(activated)
    child = activated.spawn()
    bad = wrong_code(enrollment.key)
    for typed in (bad, ""):
        answer(child, "User name: ", USERNAME)
        answer_secret(child, "Password: ", PASSWORD)
        answer(child, "Verification code: ", typed)
    answer(child, "User name: ", USERNAME)
    answer_secret(child, "Password: ", PASSWORD)
    code = oath(enrollment.key)
    answer(child, "Verification code: ", code)
    assert finish(child) == 0
    shown = screen(child)
    attempt = f"User name: {USERNAME}\nPassword: \nVerification code: "
    assert shown.startswith(
        f"{attempt}{bad}\n{INVALID_CODE}\n{attempt}\n{EMPTY_CODE}{attempt}{code}\n{AUTHORIZED}\n"
        f"{WELCOME}\n"), shown
    assert shown.endswith("1 failed attempt since your last login\n"), shown
