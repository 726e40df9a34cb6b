"""The SQLite store read directly (Python's sqlite3, never the binary under test): integrity,
the schema's rules and the rows' wholeness, the audit log against the rows, sessions and second
factors (the files beside the store: client_files.py). Every check of an SQLite file in the
suite reads these rules:
Public => no account and activation.owner_id NULL; Activated => at least one account and
owner_id naming one; and on a fully migrated file the v3 rows are whole: every session, second
factor and recovery code belongs to an existing account, token and code hashes are 32 bytes,
session times are stored times with idle_until = last_seen_at + idle_seconds.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
import os
import re
import sqlite3
import unicodedata
from dataclasses import dataclass, field

import totp
from client_files import key_file_problems
from runner import KILL_ITERATIONS, Sandbox, activate, login, user_add


V2_TABLES = {"account", "activation", "login_throttle", "audit_event", "audit_kind"}
V3_TABLES = {"session", "second_factor", "recovery_code"}  # migration "v3"
V5_TABLES = {"account_group", "group_member"}  # migration "v5"
V6_TABLES = {"posix_id", "userdb_setting", "userdb_host", "ssh_key"}  # migration "v6"
V8_TABLES = {"home_path"}  # migration "v8"
V10_TABLES = {"pending_second_factor"}  # migration "v10"
V12_TABLES = {"userdb_generation", "userdb_change"}  # migration "v12" (there is no SQLite v11)
LATEST_TABLES = (V2_TABLES | V3_TABLES | V5_TABLES | V6_TABLES | V8_TABLES | V10_TABLES
                 | V12_TABLES)
# A fully migrated file (v4 rebuilt account; v5 added groups and account.expires_at; v6 the
# user record tables and account.uid, home, shell).
MIGRATIONS = ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v12", "v13", "v14"]
V1_TABLES = {"user", "activation", "login_throttle", "audit_event"}
STORED_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
STORED_HASH = re.compile(r"^pbkdf2_sha256\$([1-9][0-9]*)\$([A-Za-z0-9./+]{8,})\$([A-Za-z0-9+/]{43}=)$")
ACCOUNT_COLUMNS = ("id", "username", "username_key", "full_name", "email", "password_hash",
                   "must_change_password", "disabled_at", "created_at", "updated_at",
                   "password_changed_at", "last_login_at")


FACTOR_EVENTS = ("second_factor_enabled", "second_factor_disabled", "second_factor_reset")


@dataclass
class Snapshot:
    problems: list[str]
    state: str  # 'Public', 'Activated', 'empty' (no tables: reads as Public), 'missing', 'broken'
    username: str | None  # the owner's
    accounts: dict[str, dict] = field(default_factory=dict)  # by username_key
    schema: str = "v3"  # 'v1' or 'v2' when a new file was killed between two migrations


def whole_hash(value: object) -> str | None:
    """Why `value` is not a whole stored hash, or None."""
    match = STORED_HASH.match(value) if isinstance(value, str) else None
    if not match:
        return f"password_hash {str(value)[:60]!r} is not pbkdf2_sha256$N$SALT$KEY"
    if int(match.group(1)) < 1000 or len(base64.b64decode(match.group(3))) != 32:
        return f"password_hash {value[:60]!r}: iterations or key length wrong"
    return None


def hash_matches(stored: str, password: str) -> bool:
    """What the stored hash says of `password` (computed here, so no login is tallied)."""
    _, iterations, salt, key = stored.split("$")
    derived = hashlib.pbkdf2_hmac("sha256", unicodedata.normalize("NFKC", password).encode(),
                                  salt.encode(), int(iterations))
    return hmac.compare_digest(derived, base64.b64decode(key))


def row_problems(row: dict) -> list[str]:
    """Why an account row is not whole (every column valid), if it is not."""
    bad: list[str] = []
    name, key = row["username"], row["username_key"]
    if not (isinstance(name, str) and 1 <= len(name) <= 64):
        bad.append(f"username {name!r}")
    elif key != name.lower():  # the names used here are ASCII: the key is the lowercase
        bad.append(f"username_key {key!r} for {name!r}")
    full = row["full_name"]
    if not (isinstance(full, str) and 1 <= len(full.strip()) <= 256):
        bad.append(f"full_name {full!r}")
    email = row["email"]
    if not (isinstance(email, str) and re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", email)):
        bad.append(f"email {email!r}")
    if (why := whole_hash(row["password_hash"])):
        bad.append(why)
    if row.get("must_change_password", 0) not in (0, 1):
        bad.append(f"must_change_password {row['must_change_password']!r}")
    for column in ("created_at", "updated_at", "password_changed_at", "disabled_at",
                   "last_login_at"):
        value = row.get(column)
        if value is None and column in ("disabled_at", "last_login_at"):
            continue
        if not (isinstance(value, str) and STORED_TIME.match(value)):
            bad.append(f"{column} {value!r}")
    if (isinstance(row["created_at"], str) and isinstance(row["updated_at"], str)
            and row["updated_at"] < row["created_at"]):
        bad.append("updated_at before created_at")
    return [f"account {name!r}: {b}" for b in bad]


def inspect(db: str) -> Snapshot:
    """Integrity and invariants, read with Python's sqlite3 (never creates the file):
    integrity_check ok, foreign_key_check empty; Public with no account and owner_id NULL, or
    Activated with at least one account and owner_id naming one; every account row whole."""
    if not os.path.exists(db):
        return Snapshot([], "missing", None)
    problems: list[str] = []
    con = sqlite3.connect(f"file:{db}?mode=rw", uri=True, timeout=10, isolation_level=None)
    con.row_factory = sqlite3.Row
    try:
        integrity = [row[0] for row in con.execute("PRAGMA integrity_check")]
        if integrity != ["ok"]:
            problems.append(f"integrity_check: {integrity[:3]}")
        foreign = [tuple(row) for row in con.execute("PRAGMA foreign_key_check")]
        if foreign:
            problems.append(f"foreign_key_check: {foreign[:3]}")
        tables = {row[0] for row in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")}
        migrations = {row[0] for row in con.execute("SELECT identifier FROM grdb_migrations")} \
            if "grdb_migrations" in tables else set()
        if not tables - {"grdb_migrations"} and not migrations:
            # Never migrated (killed while creating it): `accounts` reads it as Public.
            return Snapshot(problems, "empty", None)
        if migrations == {"v1"} and tables == V1_TABLES | {"grdb_migrations"}:
            # A new file killed after migration v1 and before v2 (a whole v1 file).
            return v1_snapshot(con, problems)
        # Each migration commits on its own: a file killed after v2 and before v3 is a whole
        # v2 file, read by the v2 rules; otherwise it must be whole and fully migrated.
        schema = "v2" if migrations == {"v1", "v2"} and tables == V2_TABLES | {
            "grdb_migrations"} else "v3"
        # (A file killed between v3 and v4 is a whole v3 file: same tables, older rules; one
        # killed between v4 and v5 a whole v4 file, without v5's tables; between v5 and v6 a
        # whole v5 file, without v6's; between v6 and v7 a whole v6 file: v7 adds columns only;
        # between v7 and v8 a whole v7 file, without v8's table; between v8 and v9 a whole v8
        # file, without v10's; between v9 and v10 the same (v9 adds kinds of events only).)
        # (Between v10 and v12 a whole v10 file, without v12's tables; between v12 and v13 a
        # whole v12 file: v13 adds kinds of events only; between v13 and v14 a whole v13 file:
        # v14 adds a column only.)
        earlier = LATEST_TABLES - V12_TABLES
        whole = LATEST_TABLES if migrations >= set(MIGRATIONS[:11]) else (
            earlier if migrations == set(MIGRATIONS[:10])
            else earlier - V10_TABLES if migrations >= set(MIGRATIONS[:8])
            else earlier - V8_TABLES - V10_TABLES if migrations >= set(MIGRATIONS[:6])
            else earlier - V6_TABLES - V8_TABLES - V10_TABLES
            if migrations == set(MIGRATIONS[:5])
            else earlier - V5_TABLES - V6_TABLES - V8_TABLES - V10_TABLES)
        missing = whole - tables if schema == "v3" else set()
        extra = tables - whole - {"grdb_migrations"}
        if missing or extra or (schema == "v3" and migrations not in (
                set(MIGRATIONS), set(MIGRATIONS[:12]), set(MIGRATIONS[:11]), set(MIGRATIONS[:10]),
                set(MIGRATIONS[:8]), set(MIGRATIONS[:7]),
                set(MIGRATIONS[:6]),
                set(MIGRATIONS[:9]), set(MIGRATIONS[:5]), set(MIGRATIONS[:4]),
                set(MIGRATIONS[:3]))):
            problems.append(f"not a whole {MIGRATIONS[-1]} file: migrations {sorted(migrations)}, "
                            f"tables missing {sorted(missing)}, unexpected {sorted(extra)}")
            return Snapshot(problems, "broken", None)
        if schema == "v3":
            problems += v3_problems(con)
        rows = con.execute("SELECT state, owner_id FROM activation").fetchall()
        accounts = {row["username_key"]: dict(row) for row in con.execute(
            f"SELECT {', '.join(ACCOUNT_COLUMNS)} FROM account")}
        for row in accounts.values():
            problems += row_problems(row)
        problems += log_problems(con, set(accounts))
        if len(rows) != 1:
            problems.append(f"{len(rows)} activation rows")
            return Snapshot(problems, "broken", None, accounts)
        state, owner_id = rows[0]
        if state == "Public":
            if accounts or owner_id is not None:
                problems.append(f"Public with {len(accounts)} account(s), owner_id={owner_id}")
            return Snapshot(problems, "Public", None, accounts, schema)
        if state == "Activated":
            owners = [row["username"] for row in accounts.values() if row["id"] == owner_id]
            if not accounts:
                problems.append("Activated with no account")
            elif not owners:
                problems.append(f"activation.owner_id {owner_id} names no account")
            return Snapshot(problems, "Activated", owners[0] if owners else None, accounts,
                            schema)
        problems.append(f"unknown state {state!r}")
        return Snapshot(problems, "broken", None, accounts)
    finally:
        con.close()


def parse_time(text: str) -> datetime.datetime:
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ")


def v3_problems(con: sqlite3.Connection) -> list[str]:
    """The rows of migration v3 are whole: every session, second factor and recovery code
    belongs to an existing account; a session's token hash is 32 bytes, its times are stored
    times with idle_until = last_seen_at + idle_seconds and a lifetime of 5 min..24 h; a
    recovery code's hash is 32 bytes."""
    bad: list[str] = []
    ids = {row[0] for row in con.execute("SELECT id FROM main.account")}
    for row in con.execute(
            "SELECT id, token_hash, account_id, created_at, last_seen_at, expires_at, "
            "idle_seconds, idle_until, second_factor FROM main.session"):
        sid, hashed, account_id, created, seen, expires, idle, idle_until, factor = row
        why = []
        if not (isinstance(hashed, bytes) and len(hashed) == 32):
            why.append(f"token_hash {hashed!r:.40}")
        if account_id not in ids:
            why.append(f"account_id {account_id} names no account")
        times = {"created_at": created, "last_seen_at": seen, "expires_at": expires,
                 "idle_until": idle_until}
        wrong_times = [f"{k} {v!r}" for k, v in times.items()
                       if not (isinstance(v, str) and STORED_TIME.match(v))]
        why += wrong_times
        if not (isinstance(idle, int) and 300 <= idle <= 3600):
            why.append(f"idle_seconds {idle!r}")
        elif not wrong_times:
            lifetime = (parse_time(expires) - parse_time(created)).total_seconds()
            gap = (parse_time(idle_until) - parse_time(seen)).total_seconds()
            if not 300 - 0.002 <= lifetime <= 86_400 + 0.002:  # each time rounded to ms
                why.append(f"lifetime {lifetime} s")
            if abs(gap - idle) > 0.002:
                why.append(f"idle_until - last_seen_at = {gap} s, idle_seconds {idle}")
            if seen < created:
                why.append("last_seen_at before created_at")
        if factor not in (0, 1):
            why.append(f"second_factor {factor!r}")
        bad += [f"session {sid}: {w}" for w in why]
    for account_id, sealed, last_step, enabled_at in con.execute(
            "SELECT account_id, sealed_secret, last_step, enabled_at FROM main.second_factor"):
        if account_id not in ids:
            bad.append(f"second_factor of account_id {account_id}: no such account")
        if not (isinstance(sealed, bytes) and len(sealed) >= 20):
            bad.append(f"second_factor of {account_id}: sealed_secret {sealed!r:.40}")
        if not (isinstance(last_step, int) and last_step >= 0):
            bad.append(f"second_factor of {account_id}: last_step {last_step!r}")
        if not (isinstance(enabled_at, str) and STORED_TIME.match(enabled_at)):
            bad.append(f"second_factor of {account_id}: enabled_at {enabled_at!r}")
    for account_id, code_hash, used_at in con.execute(
            "SELECT account_id, code_hash, used_at FROM main.recovery_code"):
        if account_id not in ids:
            bad.append(f"recovery_code of account_id {account_id}: no such account")
        if not (isinstance(code_hash, bytes) and len(code_hash) == 32):
            bad.append(f"recovery_code of {account_id}: code_hash {code_hash!r:.40}")
        if used_at is not None and not (isinstance(used_at, str) and STORED_TIME.match(used_at)):
            bad.append(f"recovery_code of {account_id}: used_at {used_at!r}")
    return bad[:10]


def log_problems(con: sqlite3.Connection, keys: set[str]) -> list[str]:
    """The audit log agrees with the rows: replaying the events that create and delete accounts
    (activation, account_added; account_removed; reset deletes all) gives exactly the stored
    accounts, so an account exists if and only if its addition committed. (No check here
    renames an account.)"""
    live: set[str] = set()
    for kind, key in con.execute(
            "SELECT kind, username_key FROM audit_event WHERE kind IN "
            "('activation', 'account_added', 'account_removed', 'reset') ORDER BY id"):
        if kind == "reset":
            live.clear()
        elif kind == "account_removed":
            live.discard(key)
        else:
            live.add(key)
    if live == keys:
        return []
    return [f"the log's accounts differ from the rows: logged only {sorted(live - keys)[:5]}, "
            f"stored only {sorted(keys - live)[:5]}"]


def v1_snapshot(con: sqlite3.Connection, problems: list[str]) -> Snapshot:
    """The v1 reading: Public with no user, or Activated with its one user."""
    rows = con.execute("SELECT state, user_id FROM activation").fetchall()
    users = {row["username_key"]: dict(row) for row in con.execute("SELECT * FROM user")}
    for row in users.values():
        problems += row_problems(row)
    if len(rows) != 1:
        problems.append(f"v1: {len(rows)} activation rows")
        return Snapshot(problems, "broken", None, users, "v1")
    state, user_id = rows[0]
    if state == "Public" and (users or user_id is not None):
        problems.append(f"v1: Public with {len(users)} user(s), user_id={user_id}")
    if state == "Activated" and not (len(users) == 1 and next(iter(users.values()))["id"] == user_id):
        problems.append(f"v1: Activated with {len(users)} user(s), user_id={user_id}")
    owner = next(iter(users.values()))["username"] if state == "Activated" and users else None
    return Snapshot(problems, state, owner, users, "v1")


def consistent(box: Sandbox, db: str) -> tuple[list[str], Snapshot]:
    """The brief's definition: integrity ok; Public with no account, or Activated with an owner
    whose password logs in (login exits 0)."""
    snap = inspect(db)
    problems = list(snap.problems)
    if snap.state == "Activated" and snap.username and not problems:
        result = login(box, db, snap.username)
        if result.code != 0 or not result.stdout.startswith("Welcome back "):
            problems.append(f"login as the stored user failed: {result.brief()}")
    return problems, snap


def scalar(db: str, sql: str, args: tuple = ()) -> object:
    con = sqlite3.connect(f"file:{db}?mode=rw", uri=True, timeout=10)
    try:
        return con.execute(sql, args).fetchone()[0]
    finally:
        con.close()


def audit_count(db: str) -> int:
    """Rows in audit_event (0 before the table exists): every committed write adds one."""
    if not os.path.exists(db):
        return 0
    con = sqlite3.connect(f"file:{db}?mode=rw", uri=True, timeout=10)
    try:
        return con.execute("SELECT count(*) FROM audit_event").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()


def last_event_id(db: str) -> int:
    return scalar(db, "SELECT coalesce(max(id), 0) FROM audit_event")  # type: ignore[return-value]


def events_since(db: str, after: int) -> list[tuple[str, str | None, str | None]]:
    """(kind, username_key, detail) of the events after id `after`, oldest first."""
    con = sqlite3.connect(f"file:{db}?mode=rw", uri=True, timeout=10)
    try:
        return con.execute("SELECT kind, username_key, detail FROM audit_event WHERE id > ? "
                           "ORDER BY id", (after,)).fetchall()
    finally:
        con.close()


def stored_hash(db: str, key: str) -> str | None:
    con = sqlite3.connect(f"file:{db}?mode=rw", uri=True, timeout=10)
    try:
        row = con.execute("SELECT password_hash FROM account WHERE username_key = ?",
                          (key,)).fetchone()
        return row[0] if row else None
    finally:
        con.close()


def setup_accounts(box: Sandbox, db: str, label: str, names: list[str],
                   iterations: int = KILL_ITERATIONS) -> None:
    """Activates `db` for `owner` and adds `names` (full name "Added NAME")."""
    results = [activate(box, db, "owner", iterations, "Owner Person")]
    results += [user_add(box, db, name, iterations) for name in names]
    bad = [r.brief() for r in results if r.code != 0]
    assert not bad, f"{label}: setting up: {'; '.join(bad[:3])}"


def now_text() -> str:
    t = datetime.datetime.now(datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def execute(db: str, sql: str, args: tuple = ()) -> None:
    """One write of the suite's own (between commands, never while one runs)."""
    con = sqlite3.connect(f"file:{db}?mode=rw", uri=True, timeout=10, isolation_level=None)
    try:
        con.execute(sql, args)
    finally:
        con.close()


def last_step(db: str, name: str) -> int | None:
    """second_factor.last_step of account `name`, None when its second factor is off."""
    con = sqlite3.connect(f"file:{db}?mode=rw", uri=True, timeout=10)
    try:
        row = con.execute("SELECT last_step FROM second_factor WHERE account_id = "
                          "(SELECT id FROM account WHERE username_key = ?)", (name,)).fetchone()
        return row[0] if row else None
    finally:
        con.close()


def prepare_step(db: str, name: str) -> bool:
    """Makes sure a code of the current or the next step is unused for `name`: when the last
    accepted step is already the next one, it is set back to the previous step with sqlite3
    (True), instead of waiting up to a minute. The step to type is then `step_after`."""
    last, now = last_step(db, name), totp.current_step()
    if last is not None and last >= now + 1:
        execute(db, "UPDATE second_factor SET last_step = ? WHERE account_id = "
                "(SELECT id FROM account WHERE username_key = ?)", (now - 1, name))
        return True
    return False


def clear_throttle(db: str, name: str) -> None:
    execute(db, "DELETE FROM login_throttle WHERE username_key = ?", (name,))


def sessions(db: str) -> dict[bytes, tuple[int, str, int]]:
    """Session rows by token hash (an id may be reused once its row is deleted): token_hash ->
    (id, the account's username_key, second_factor)."""
    con = sqlite3.connect(f"file:{db}?mode=rw", uri=True, timeout=10)
    try:
        return {token: (sid, key, factor) for sid, token, key, factor in con.execute(
            "SELECT s.id, s.token_hash, a.username_key, s.second_factor FROM session s "
            "LEFT JOIN account a ON a.id = s.account_id")}
    finally:
        con.close()


def factor_problems(db: str, key_seen: list[str]) -> list[str]:
    """A second_factor row exists iff the account has exactly 10 recovery_code rows iff the
    log's last second_factor_* event for it is second_factor_enabled; when one exists, the key
    file exists, 0600, 65 bytes, and is the one the earlier second factors were sealed under
    (`key_seen` keeps it)."""
    problems: list[str] = []
    con = sqlite3.connect(f"file:{db}?mode=rw", uri=True, timeout=10)
    try:
        rows = con.execute(
            "SELECT a.username_key, EXISTS (SELECT 1 FROM second_factor f WHERE f.account_id = "
            "a.id), (SELECT count(*) FROM recovery_code c WHERE c.account_id = a.id) "
            "FROM account a").fetchall()
        last_event = dict(con.execute(
            f"SELECT username_key, kind FROM audit_event WHERE kind IN "
            f"({', '.join('?' * len(FACTOR_EVENTS))}) ORDER BY id", FACTOR_EVENTS).fetchall())
    finally:
        con.close()
    any_on = False
    for key, on, codes in rows:
        any_on = any_on or bool(on)
        logged_on = last_event.get(key) == "second_factor_enabled"
        if bool(on) != (codes == 10) or bool(on) != logged_on:
            problems.append(f"{key}: second_factor row {'present' if on else 'absent'}, {codes} "
                            f"recovery codes, last second_factor_* event {last_event.get(key)}")
    text, bad = key_file_problems(db)
    problems += bad
    if any_on and text is None:
        problems.append("a second factor is stored but the key file is missing")
    if any_on and text is not None and not bad:
        if key_seen and key_seen[0] != text:
            problems.append("the key file changed while second factors sealed under it exist")
        key_seen[:] = [text]
    return problems
