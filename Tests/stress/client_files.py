"""The files a client keeps beside the store, read directly: the session file (three lines:
`accounts-session 1`, the database, a 64-hex-digit token, and for a PostgreSQL store a line
naming the store's identity before the token; mode 0600 in a 0700 folder) and the
key file sealing TOTP secrets (64 hex digits and a newline, mode 0600), each either absent or
whole, never half-written."""

from __future__ import annotations

import hashlib
import os
import pathlib
import re
import stat

SESSION_TEXT = re.compile(
    r"accounts-session 1\ndatabase (.+)\n(?:store [0-9a-f]{32}\n)?token ([0-9a-f]{64})\n")
KEY_TEXT = re.compile(r"[0-9a-f]{64}\n")


def session_file(state: pathlib.Path) -> pathlib.Path:
    return state / "accounts" / "session"


def read_session_file(state: pathlib.Path, db: str) -> tuple[str | None, list[str]]:
    """(the file's text or None when absent, why it is not whole and private): the contract's
    three lines naming `db`, mode 0600 in a folder of mode 0700, not a symlink. Other files
    beside it (a temporary file left by a kill) are allowed."""
    path = session_file(state)
    if not os.path.lexists(path):
        return None, []
    problems: list[str] = []
    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode):
        return "", [f"session file is not a regular file (mode {info.st_mode:o})"]
    if info.st_mode & 0o777 != 0o600:
        problems.append(f"session file mode {info.st_mode & 0o777:o}")
    folder_mode = os.stat(path.parent).st_mode & 0o777
    if folder_mode != 0o700:
        problems.append(f"session folder mode {folder_mode:o}")
    text = path.read_text(errors="replace")
    match = SESSION_TEXT.fullmatch(text)
    if not match:
        problems.append(f"session file not whole: {text[:160]!r}")
    elif match.group(1) not in (db, os.path.realpath(db)):
        problems.append(f"session file names {match.group(1)!r}")
    return text, problems


def token_hash(text: str | None) -> bytes | None:
    """SHA-256 of the token bytes a whole session file holds."""
    match = SESSION_TEXT.fullmatch(text or "")
    return hashlib.sha256(bytes.fromhex(match.group(2))).digest() if match else None


def key_file_problems(db: str) -> tuple[str | None, list[str]]:
    """(the key file's text or None, why it is not whole and private): created atomically,
    so whenever it exists it is a regular file of mode 0600 holding 64 lowercase hex
    characters and a newline (65 bytes)."""
    return key_problems(pathlib.Path(db + ".key"))


def key_problems(path: pathlib.Path) -> tuple[str | None, list[str]]:
    """A key file: absent, or a regular file of mode 0600, 64 hex digits and a newline."""
    if not os.path.lexists(path):
        return None, []
    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode):
        return "", [f"key file is not a regular file (mode {info.st_mode:o})"]
    problems = [] if info.st_mode & 0o777 == 0o600 else [f"key file mode {info.st_mode & 0o777:o}"]
    text = path.read_text(errors="replace")
    if info.st_size != 65 or not KEY_TEXT.fullmatch(text):
        problems.append(f"key file not whole: {info.st_size} bytes")
    return text, problems
