"""What the tests of the TOTP second factor share: its sentences, codes computed by `oathtool`
(`wrong_code`, `steady` for a result that depends on the 30-second step), `2fa enable` through a
pipe (`enable`, `enabled`), the stored last accepted step moved back (`rewind`), a login with a
code and what it shows (`login`, `authorized_home`, `recovered`), the log and the failure tally,
the printed QR code read back by `zbarimg` (`qr_modules`, `zbar`), and `2fa enable` in two steps
through pipes (`begin`, `confirm`, `pending_rows`).

The tests never wait for time to pass: where a code must be fresh, the stored last accepted step
is moved back (as if the code before was typed minutes ago), and where the outcome depends on
which 30-second step the binary sees, the attempt is redone if a step boundary passed while it
ran."""

import json
import pathlib
import queue
import re
import socket
import subprocess
import threading
import time
import urllib.parse

import pytest
from totp import code_for_step, step_of

from constants import BIN, FILL, FULL_NAME, PASSWORD, USERNAME
from device import Result, with_program_role
from stores import store_execute, store_query


WELCOME = f"Welcome back {FULL_NAME}!"
AUTHORIZED = "You are successfully authorized."
INVALID_CODE = "Invalid verification code!"
REPLAY = "That code was already used; wait for the next one."
EMPTY_CODE = f"{FILL}\nEmpty: Verification code.\n"
SCAN = "Scan this QR code with your authenticator app, or type the key below into it."
TYPE = "Type the key below into your authenticator app, or open the URI with it."
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
            stderr=subprocess.PIPE,
            env=with_program_role(args, env if env is not None else device.env()),
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


def expected_uri(device, key, username=USERNAME):
    """The entry's label names the person and, on a shared store, its database (the same on
    every host of the fleet); on a device's own store, the device."""
    domain = device.db.name if device.postgresql else socket.gethostname()
    label = urllib.parse.quote(f"{username}@{domain}", safe="")
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


# `2fa enable --begin` and `--confirm` through pipes.

ALREADY_ON = "Two-factor authentication is already on for {}."
NO_PENDING = "No new secret waits for a code for {}: run accounts 2fa enable --begin first."
EXPIRED = ("The new secret for {} expired unconfirmed and was deleted: run accounts 2fa enable "
           "--begin again.")
PENDING_KEPT = re.compile(r"^Two-factor authentication for (\S+) waits for a code from the app "
                          rf"until ({ISO_UTC}): run accounts 2fa enable --confirm\.$")
PENDING_STATUS = ("A new secret for {} waits for its first code until {} "
                  "(accounts 2fa enable --confirm).")


def begin(device, username=USERNAME, password=PASSWORD, args=(), env=None):
    """`accounts 2fa enable --begin --username U --password-stdin ARGS` through a pipe: the
    result and the printed key (None when there is none)."""
    result = device.run("2fa", "enable", "--begin", "--username", username, "--password-stdin",
                        *args, input=f"{password}\n", env=env)
    keys = [line[len("Key: "):] for line in result.out_lines if line.startswith("Key: ")]
    return result, (keys[0] if keys else None)


def confirm(device, code, username=USERNAME, password=PASSWORD, env=None) -> Result:
    """`accounts 2fa enable --confirm --username U --password-stdin` through a pipe: the
    password line, then the code line."""
    return device.run("2fa", "enable", "--confirm", "--username", username, "--password-stdin",
                      input=f"{password}\n{code}\n", env=env)


def pending_rows(device, username=USERNAME) -> list:
    """The account's pending secret rows: (key_id, expires_at) each."""
    return device.query(
        "SELECT p.key_id, p.expires_at FROM pending_second_factor AS p JOIN account AS a "
        "ON a.id = p.account_id WHERE a.username_key = ?", username.lower())


def seal_under_key_file(pg, pgdb, sqlite_client) -> tuple:
    """alice's second factor on the activated PostgreSQL store `pgdb` as a store kept it before
    its server kept them (migration v17): turned on by `2fa enable` on the SQLite store of
    `sqlite_client` (activated here), its sealed secret and recovery codes written into `pgdb`,
    its last step ten steps back. Returns (enrollment, the key file it is sealed under)."""
    from pgcluster import activate
    activate(sqlite_client)
    enrollment = enable(sqlite_client)
    assert enrollment.result.code == 0, enrollment.result
    db = pathlib.Path(sqlite_client.database)
    ((sealed, key_id, last_step),) = store_query(
        db, "SELECT sealed_secret, key_id, last_step FROM second_factor WHERE account_id = 1")
    hashes = [h for (h,) in store_query(db, "SELECT code_hash FROM recovery_code")]
    pg.psql("INSERT INTO accounts.second_factor (account_id, sealed_secret, key_id, last_step, "
            f"enabled_at) VALUES (1, '\\x{sealed.hex()}', '{key_id}', {last_step - 10}, now())",
            pgdb)
    pg.psql("INSERT INTO accounts.recovery_code (account_id, code_hash) VALUES "
            + ", ".join(f"(1, '\\x{h.hex()}')" for h in hashes), pgdb)
    return enrollment, db.with_name(db.name + ".key")
