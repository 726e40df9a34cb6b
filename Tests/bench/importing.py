#!/usr/bin/env python3
"""The inputs of Tests/bench's import measurements: a csv file of many users, and the tables
the sqlite3 shell's `.import` fills for comparison; and, for the import's peak memory against
the file's size, a Django dump and a csv whose records span many lines.

The csv is the contract's: RFC 4180, CRLF line ends, the header
`username,full_name,email,password_hash`, then one line per user: `user0000000` … (the names of
million.py), full names from its two short lists, `<name>@example.org`, and one real
`pbkdf2_sha256$…` hash for every line (import checks a hash's form, never the password). No
field needs quoting.

The reference tables are made from the `account` table of the file they go into, so that they
follow its schema:
  `imported`        the csv's four columns, each defined as in `account` (type, NOT NULL,
                    CHECK), plus UNIQUE on `username` (the names are lower-case ASCII, so the
                    name is its own key): the same rows, as the shell imports them on its own.
  `imported_full`   a view of the csv's four columns over `account_copy`, a copy of `account`
                    (every column, CHECK and the UNIQUE key); an INSTEAD OF INSERT trigger fills
                    `username_key` (lower(username)) and the three timestamps: the row the
                    program itself writes, for scale.

The memory files:
  a Django dump   what `manage.py dumpdata auth.user` writes without --indent: one JSON list on
                  one line, ", " between entries; each user as million.py names them, the same
                  hash, `is_active` true, the fields Django writes.
  a csv           the contract's header plus a `note` column (which import ignores) holding a
                  quoted field of many lines (LF inside the quotes, CRLF after each record, as
                  Python's csv module writes).

Standalone: python3 Tests/bench/importing.py CSV [--count N] [--hash HASH]
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
import time

try:
    from . import million
except ImportError:  # run as a script
    import million  # type: ignore[no-redef]

HEADER = "username,full_name,email,password_hash"
CSV_COLUMNS = ("username", "full_name", "email", "password_hash")
ACCOUNT_TABLE = re.compile(r"^\s*CREATE\s+TABLE\s+(?:\"account\"|`account`|\[account\]|account)"
                           r"(?=[\s(])", re.IGNORECASE)
# A hash of the right form, for the standalone script only (the bench uses one the program made).
SAMPLE_HASH = ("pbkdf2_sha256$1200000$myzRO6PQ9GCkPt95Zjgkii$"
               "VWCbK4gDXNeQlabdlx5QAlzKrnI0PS9VQFly6MJcy+A=")


class InputError(Exception):
    pass


def write_csv(path: str, count: int, password_hash: str) -> int:
    """Writes the header and `count` users; returns the size in bytes."""
    if not password_hash.startswith("pbkdf2_sha256$") or any(c in password_hash for c in ',"\r\n'):
        raise InputError(f"not a usable hash for the csv: {password_hash!r}")
    size = 0
    with open(path, "w", encoding="utf-8", newline="") as f:
        lines = [HEADER + "\r\n"]
        for i in range(count):
            name = million.name_of(i)
            lines.append(f"{name},{million.full_name_of(i)},{name}@example.org,"
                         f"{password_hash}\r\n")
            if len(lines) >= 50_000:
                size += f.write("".join(lines))
                lines = []
        size += f.write("".join(lines))
    return size


def write_django_json(path: str, count: int, password_hash: str) -> int:
    """Writes `count` users as `dumpdata auth.user` does without --indent (one line); returns
    the size in bytes."""
    size = 0
    with open(path, "w", encoding="utf-8", newline="") as f:
        parts = ["["]
        for i in range(count):
            name = million.name_of(i)
            first, _, last = million.full_name_of(i).partition(" ")
            user = {"model": "auth.user", "pk": i + 1, "fields": {
                "password": password_hash, "last_login": None, "is_superuser": False,
                "username": name, "first_name": first, "last_name": last,
                "email": f"{name}@example.org", "is_staff": False, "is_active": True,
                "date_joined": "2024-01-01T00:00:00Z", "groups": [], "user_permissions": []}}
            parts.append((", " if i else "") + json.dumps(user))
            if len(parts) >= 10_000:
                size += f.write("".join(parts))
                parts = []
        parts.append("]")
        size += f.write("".join(parts))
    return size


def write_multiline_csv(path: str, count: int, lines: int, password_hash: str) -> int:
    """Writes `count` users, each with a `note` of `lines` lines in a quoted field; returns the
    size in bytes."""
    size = 0
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow([*CSV_COLUMNS, "note"])
        for i in range(count):
            name = million.name_of(i)
            note = "\n".join(f"line {j:05d} of the note about {name}, kept elsewhere"
                              for j in range(lines))
            writer.writerow([name, million.full_name_of(i), f"{name}@example.org",
                             password_hash, note])
        size = f.tell()
    return size


def _quoted(quote: str, c: str) -> str | None:
    """Where `c` stands in quoted text, `quote` being the closing quote awaited ("" outside
    quotes): the closing quote awaited after it, or None when `c` is plain SQL (outside quotes
    and opening none)."""
    if quote:
        return "" if c == quote else quote
    if c in "'\"`":
        return c
    if c == "[":
        return "]"
    return None


def _without_comments(sql: str) -> str:
    """`sql` with its `-- …` and `/* … */` comments (outside quotes) made a space."""
    out, i, quote = [], 0, ""
    while i < len(sql):
        c = sql[i]
        if (after := _quoted(quote, c)) is not None:
            quote = after
        elif sql.startswith("--", i):
            end = sql.find("\n", i)
            i = len(sql) if end < 0 else end
            out.append(" ")
            continue
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            i = len(sql) if end < 0 else end + 2
            out.append(" ")
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _definitions(create_sql: str) -> list[str]:
    """The parts of a CREATE TABLE's column list (column definitions and table constraints),
    split at the commas outside parentheses and quotes."""
    create_sql = _without_comments(create_sql)
    start = create_sql.index("(")
    parts, depth, quote, at = [], 0, "", start + 1
    for i in range(start + 1, len(create_sql)):
        c = create_sql[i]
        if (after := _quoted(quote, c)) is not None:
            quote = after
        elif c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                parts.append(create_sql[at:i].strip())
                return parts
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(create_sql[at:i].strip())
            at = i + 1
    raise InputError("the account table's CREATE statement does not end")


def _column_name(definition: str) -> str:
    first = definition.split(None, 1)[0] if definition else ""
    return first.strip('"`[]').lower()


def reference_sql(account_sql: str) -> str:
    """The SQL that makes `imported`, `account_copy` and the view `imported_full` beside
    `account`, whose CREATE TABLE statement (from sqlite_master) is `account_sql`."""
    if not ACCOUNT_TABLE.match(account_sql):
        raise InputError(f"not the account table's CREATE statement: {account_sql[:80]!r}")
    definitions = {_column_name(d): d for d in _definitions(account_sql)}
    missing = [c for c in (*CSV_COLUMNS, "username_key", "created_at", "updated_at",
                           "password_changed_at") if c not in definitions]
    if missing:
        raise InputError(f"the account table has no column {', '.join(missing)}")
    columns = [definitions[c] + (" UNIQUE" if c == "username" else "") for c in CSV_COLUMNS]
    strict = " STRICT" if re.search(r"\)\s*STRICT\b", account_sql, re.IGNORECASE) else ""
    copy = ACCOUNT_TABLE.sub("CREATE TABLE account_copy", _without_comments(account_sql),
                             count=1)
    now = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"
    return f"""
CREATE TABLE imported (
  {(',' + chr(10) + '  ').join(columns)}
){strict};
{copy};
CREATE VIEW imported_full (username, full_name, email, password_hash) AS
  SELECT username, full_name, email, password_hash FROM account_copy;
CREATE TRIGGER imported_full_insert INSTEAD OF INSERT ON imported_full
BEGIN
  INSERT INTO account_copy (username, username_key, full_name, email, password_hash,
                            created_at, updated_at, password_changed_at)
  VALUES (NEW.username, lower(NEW.username), NEW.full_name, NEW.email, NEW.password_hash,
          {now}, {now}, {now});
END;
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv")
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--hash", default=SAMPLE_HASH)
    args = parser.parse_args()
    began = time.perf_counter()
    try:
        size = write_csv(args.csv, args.count, args.hash)
    except InputError as error:
        print(f"importing: {error}", file=sys.stderr)
        return 1
    print(f"importing: {args.csv}: {args.count:,} users, {size / 2**20:.0f} MiB, "
          f"{time.perf_counter() - began:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
