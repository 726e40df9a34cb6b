#!/usr/bin/env python3
"""Makes a v2 `accounts` store of many accounts quickly, for the bench (Tests/bench).

The file and its schema are the program's own: the real binary activates the device (the owner)
and adds the first other account with `user add` (so that the program itself shows what one of
its account rows and `account_added` events looks like). The rest, up to `count` accounts, are
inserted with Python's sqlite3 in one transaction, never hashed: each stores the owner's
password hash (same password, same PBKDF2 cost), must_change_password 0, timestamps in the
stored form (`2026-11-23T12:56:46.455Z`), and one `account_added` event as the program writes
it. Then `PRAGMA integrity_check` and `PRAGMA foreign_key_check` must pass.

Accounts are `user0000001` … (`count - 1` of them, 7 digits) besides the owner; e-mail
`<name>@example.org`; full names from two short lists.

Standalone: python3 Tests/bench/million.py BINARY DB [--count N] [--iterations I]
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import sqlite3
import subprocess
import sys
import time

FIRST = ["Ada", "Alan", "Barbara", "Claude", "Dennis", "Donald", "Edsger", "Frances", "Grace",
         "John", "Ken", "Leslie", "Margaret", "Niklaus", "Radia", "Tony"]
LAST = ["Allen", "Backus", "Hamilton", "Hoare", "Hopper", "Knuth", "Lamport", "Liskov",
        "Lovelace", "McCarthy", "Perlman", "Ritchie", "Shannon", "Thompson", "Turing", "Wirth"]
OWNER = ("alice", "Alice Liddell", "alice@example.org")
STORED_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


class StoreError(Exception):
    pass


def name_of(i: int) -> str:
    return f"user{i:07d}"


def full_name_of(i: int) -> str:
    return f"{FIRST[i % len(FIRST)]} {LAST[(i // len(FIRST)) % len(LAST)]} {i}"


def parse_time(text: str) -> datetime.datetime:
    if not STORED_TIME.match(text or ""):
        raise StoreError(f"not a stored timestamp: {text!r}")
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc)


def run(binary: str, db: str, env: dict[str, str], args: list[str], stdin: str) -> None:
    proc = subprocess.run([binary, *args, "--database", db], input=stdin.encode(),
                          capture_output=True, env=env, timeout=600)
    if proc.returncode != 0:
        raise StoreError(f"`accounts {' '.join(args)}` exited {proc.returncode}: "
                         f"{(proc.stdout + proc.stderr).decode(errors='replace').strip()[:300]}")


def make_store(binary: str, db: str, env: dict[str, str], count: int, password: str,
               owner: tuple[str, str, str] = OWNER, log=None) -> dict[str, object]:
    """Makes `db` (which must not exist) with `count` accounts; returns what it did and how
    long each step took."""
    if count < 2:
        raise StoreError("count must be at least 2 (the owner and one added account)")
    if os.path.exists(db):
        raise StoreError(f"{db} exists")
    say = log or (lambda _text: None)
    stats: dict[str, object] = {}
    began = time.perf_counter()
    username, full_name, email = owner
    run(binary, db, env, ["activate", "--username", username, "--full-name", full_name,
                          "--email", email, "--password-stdin"], password + "\n")
    first = name_of(1)
    run(binary, db, env, ["user", "add", "--username", first, "--full-name", full_name_of(1),
                          "--email", f"{first}@example.org", "--password-stdin"], password + "\n")
    stats["binary_seconds"] = time.perf_counter() - began
    stats.update(fill(db, count, say))
    stats["bytes"] = os.path.getsize(db)
    return stats


def fill(db: str, count: int, say) -> dict[str, object]:
    """Adds accounts 2 … count-1 to a store holding the owner and account 1, modelled on them;
    then checks the file."""
    stats: dict[str, object] = {}
    first = name_of(1)
    con = sqlite3.connect(db, isolation_level=None, timeout=30)
    try:
        tables = {row[0] for row in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "account" not in tables:
            raise StoreError(f"not a v2 store (tables: {sorted(tables)})")
        (owner_id, owner_hash, owner_created) = con.execute(
            "SELECT a.id, a.password_hash, a.created_at FROM account a "
            "JOIN activation ON activation.owner_id = a.id").fetchone()
        template = con.execute(
            "SELECT must_change_password, disabled_at, last_login_at, created_at FROM account "
            "WHERE username_key = ?", (first,)).fetchone()
        if template is None:
            raise StoreError(f"`user add` stored no account {first}")
        must_change, disabled_at, last_login, first_created = template
        if (must_change, disabled_at, last_login) != (0, None, None):
            raise StoreError(f"the program's new account {first} has must_change_password="
                             f"{must_change}, disabled_at={disabled_at}, last_login_at="
                             f"{last_login}; expected 0, NULL, NULL")
        event = con.execute(
            "SELECT username, username_key, detail, occurred_at FROM audit_event "
            "WHERE kind = 'account_added' ORDER BY id DESC LIMIT 1").fetchone()
        if event is None or event[1] != first:
            raise StoreError(f"`user add` logged no account_added event for {first}: {event}")
        event_name, _, detail, first_logged = event
        if event_name != first:
            raise StoreError(f"account_added names {event_name!r}, not {first!r}")
        if detail is not None and (full_name_of(1) in detail or "@example.org" in detail):
            raise StoreError(f"account_added's detail holds account data: {detail!r}; "
                             "teach million.py to write it")

        # Timestamps from the first added account's event to now, in order, as if added one by
        # one (several in one millisecond); each second's prefix is formatted once.
        if parse_time(first_created) < parse_time(owner_created):
            raise StoreError(f"{first} was created before the owner")
        start = max(parse_time(first_created), parse_time(first_logged))
        start_ms = int(start.timestamp() * 1000)
        span_ms = max(1, int(time.time() * 1000) - start_ms)
        stamps: list[str] = []
        second, prefix = -1, ""
        for i in range(count):
            at = start_ms + i * span_ms // count  # stamps[1] is the first added's
            if at // 1000 != second:
                second = at // 1000
                prefix = datetime.datetime.fromtimestamp(
                    second, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.")
            stamps.append(f"{prefix}{at % 1000:03d}Z")

        def accounts():
            for i in range(2, count):
                name = name_of(i)
                yield (name, name, full_name_of(i), f"{name}@example.org", owner_hash,
                       stamps[i], stamps[i], stamps[i])

        def events():
            for i in range(2, count):
                name = name_of(i)
                yield (stamps[i], name, name, detail)

        began = time.perf_counter()
        con.execute("PRAGMA cache_size = -262144")  # 256 MiB, for this connection only
        con.execute("PRAGMA synchronous = OFF")  # a benchmark file: rebuilt when lost
        con.execute("BEGIN IMMEDIATE")
        try:
            con.executemany(
                "INSERT INTO account (username, username_key, full_name, email, password_hash,"
                " must_change_password, disabled_at, created_at, updated_at,"
                " password_changed_at, last_login_at)"
                " VALUES (?, ?, ?, ?, ?, 0, NULL, ?, ?, ?, NULL)", accounts())
            con.executemany(
                "INSERT INTO audit_event (occurred_at, kind, username, username_key, detail)"
                " VALUES (?, 'account_added', ?, ?, ?)", events())
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        stats["insert_seconds"] = time.perf_counter() - began
        say(f"inserted {count - 2:,} accounts and events in {stats['insert_seconds']:.1f} s")

        began = time.perf_counter()
        integrity = [row[0] for row in con.execute("PRAGMA integrity_check")]
        foreign = con.execute("PRAGMA foreign_key_check").fetchall()
        stats["check_seconds"] = time.perf_counter() - began
        if integrity != ["ok"]:
            raise StoreError(f"integrity_check: {integrity[:5]}")
        if foreign:
            raise StoreError(f"foreign_key_check: {foreign[:5]}")
        (accounts_stored,) = con.execute("SELECT count(*) FROM account").fetchone()
        (added,) = con.execute(
            "SELECT count(*) FROM audit_event WHERE kind = 'account_added'").fetchone()
        if accounts_stored != count or added != count - 1:
            raise StoreError(f"{accounts_stored} accounts and {added} account_added events; "
                             f"expected {count} and {count - 1}")
        say(f"integrity_check ok, foreign_key_check empty ({stats['check_seconds']:.1f} s)")
    finally:
        con.close()
    stats["owner_id"] = owner_id
    return stats


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary")
    parser.add_argument("db")
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--iterations", type=int, default=1_200_000)
    parser.add_argument("--password", default="correct horse battery staple")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACCOUNTS_")}
    env.update(TZ="UTC", ACCOUNTS_PBKDF2_ITERATIONS=str(args.iterations))
    try:
        stats = make_store(args.binary, args.db, env, args.count, args.password,
                           log=lambda text: print(f"million: {text}", file=sys.stderr))
    except StoreError as error:
        print(f"million: {error}", file=sys.stderr)
        return 1
    print(f"million: {args.db}: {args.count:,} accounts, {stats['bytes'] / 2**20:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
