"""The PostgreSQL store read with psql, one statement per snapshot (`pg_snapshot`), and its
rules (`pg_problems`): one activation row; Public keeps no account, Activated names its owner;
every account row whole; no orphan session, second factor or recovery code, each whole; a
second factor iff 10 recovery codes iff the last second_factor_* event is
second_factor_enabled; the log's accounts are the rows; every import all or nothing, and
imported iff accounts_imported is logged. Plus what the PostgreSQL tests share to set a store
up, enable a second factor on a host and pick a code of an unused step.
"""

from __future__ import annotations

import base64
import collections
import hashlib
import json
import random
import re
from dataclasses import dataclass

import totp
from hosts import FLEET_ADMIN, FLEET_HOST, Host, HostProc, Hosts
from pgserver import Server
from runner import (PASSWORD, RAW_SQLITE, Result, enable_args, enable_to_the_end, mentions,
                    step_after, user_add_args)
from sqlite_store import FACTOR_EVENTS, whole_hash


# What must never reach a person: a trace, Swift's crash text, an SQLSTATE, libpq's raw
# severity prefixes ("FATAL:  …", "ERROR:  …").
RAW_PG = ("sqlstate", "fatal error", "stack dump", "backtrace", "stack trace", "fatal:  ",
          "error:  ", "panic:  ", "pq_")


CANNOT_CONNECT = re.compile(r"Cannot connect to the PostgreSQL server (at \S+|on the socket .+ "
                            r"\(port \d+\)) for the database \S+: .+\.")


CONNECTION_LOST = re.compile(r"The connection to the PostgreSQL server for the database \S+ "
                             r"was lost: .+\. No change was half-written; try again\.")


IMPORTED_NAME = re.compile(r"^i[0-9]+u[0-9]+$")  # the names part n imports
IMPORT_SALT = "stressimportsalt"
IMPORT_HASH = "pbkdf2_sha256$1000${}${}".format(IMPORT_SALT, base64.b64encode(hashlib.pbkdf2_hmac(
    "sha256", PASSWORD.encode(), IMPORT_SALT.encode(), 1000)).decode())


def query(server: Server, db: str, sql: str) -> str:
    """The output of `sql` on database `db` (psql -At)."""
    return server.psql(sql, database=db)


def new_database(server: Server, stem: str) -> tuple[str, str]:
    """A fresh, empty database: (its name, the URI the clients use: the server's Unix socket,
    which reaches a client in another network namespace too, no password)."""
    name = server.create_database(prefix=stem)
    return name, server.uri(name)


@dataclass
class PgContext:
    server: Server
    hosts: Hosts
    rng: random.Random


def pg_snapshot(server: Server, db: str) -> dict | None:
    """Everything the rules need, read in one statement (one snapshot), None when the database
    has no schema `accounts` (which reads as an empty Public store). Accounts imported by part
    n are counted by file (and checked in SQL), not listed."""
    if query(server, db, "SELECT count(*) FROM pg_namespace WHERE nspname = 'accounts'").strip() != "1":
        return None
    imported = "username_key ~ '^i[0-9]+u[0-9]+$'"
    return json.loads(query(server, db, f"""SELECT json_build_object(
      'migrations', (SELECT coalesce(json_agg(identifier ORDER BY identifier), '[]')
                     FROM accounts.schema_migration),
      'activation', (SELECT coalesce(json_agg(json_build_object('id', id, 'state', state,
                     'owner_id', owner_id)), '[]') FROM accounts.activation),
      'accounts', (SELECT coalesce(json_agg(json_build_object('id', id, 'username', username,
                   'username_key', username_key, 'full_name', full_name, 'email', email,
                   'password_hash', password_hash, 'must_change', must_change_password,
                   'times_ok', updated_at >= created_at AND password_changed_at IS NOT NULL
                   AND (last_login_at IS NULL OR last_login_at >= created_at))), '[]')
                   FROM accounts.account WHERE NOT ({imported})),
      'account_count', (SELECT count(*) FROM accounts.account),
      'owner_exists', (SELECT count(*) FROM accounts.account a JOIN accounts.activation v
                       ON v.owner_id = a.id),
      'imported', (SELECT coalesce(json_object_agg(prefix, n), '{{}}') FROM (SELECT
                   substring(username_key FROM '^(i[0-9]+)u') AS prefix, count(*) AS n
                   FROM accounts.account WHERE {imported} GROUP BY 1) t),
      'imported_bad', (SELECT coalesce(json_agg(username), '[]') FROM (SELECT username
                       FROM accounts.account WHERE {imported} AND (username_key <> lower(username)
                       OR email <> username || '@example.org' OR updated_at < created_at
                       OR password_hash !~ '^pbkdf2_sha256\\$[0-9]+\\$[A-Za-z0-9./+]{{8,}}\\$[A-Za-z0-9+/]{{43}}=$'
                       OR (last_login_at IS NULL AND password_hash <> '{IMPORT_HASH}')) LIMIT 3) t),
      'sessions', (SELECT coalesce(json_agg(json_build_object('id', id, 'account_id', account_id,
                   'token_hash', encode(token_hash, 'hex'), 'second_factor', second_factor,
                   'idle_seconds', idle_seconds, 'times_ok', created_at <= last_seen_at
                   AND last_seen_at < idle_until AND created_at < expires_at
                   AND abs(extract(epoch FROM idle_until - last_seen_at) - idle_seconds) <= 0.002
                   AND extract(epoch FROM expires_at - created_at) BETWEEN 299.998 AND 86400.002)),
                   '[]') FROM accounts.session),
      'factors', (SELECT coalesce(json_agg(json_build_object('account_id', account_id,
                  'last_step', last_step, 'sealed', octet_length(sealed_secret),
                  'key_id', length(key_id), 'server', octet_length(server_secret))), '[]')
                  FROM accounts.second_factor),
      'codes', (SELECT coalesce(json_agg(json_build_object('account_id', account_id,
                'length', octet_length(code_hash))), '[]') FROM accounts.recovery_code),
      'orphans', json_build_array(
         (SELECT count(*) FROM accounts.session s WHERE NOT EXISTS (SELECT 1 FROM accounts.account a
          WHERE a.id = s.account_id)),
         (SELECT count(*) FROM accounts.second_factor f WHERE NOT EXISTS (SELECT 1 FROM
          accounts.account a WHERE a.id = f.account_id)),
         (SELECT count(*) FROM accounts.recovery_code c WHERE NOT EXISTS (SELECT 1 FROM
          accounts.second_factor f WHERE f.account_id = c.account_id))),
      'events', (SELECT coalesce(json_agg(json_build_object('id', id, 'kind', kind,
                 'key', username_key, 'detail', detail) ORDER BY id), '[]')
                 FROM accounts.audit_event),
      'throttle', (SELECT coalesce(json_agg(json_build_object('key', username_key,
                   'failures', failures, 'lockouts', lockouts,
                   'locked', coalesce(locked_until > now(), false))), '[]')
                   FROM accounts.login_throttle))"""))


def pg_problems(snap: dict | None, import_rows: int = 0) -> list[str]:
    """The store is whole: one activation row; Public keeps no account, Activated names its
    owner; every account row whole; no orphan session, second factor or recovery code, each
    whole; a second factor iff 10 recovery codes iff the last second_factor_* event is
    second_factor_enabled; the log's accounts are the rows; every import all or nothing, and
    imported iff accounts_imported is logged."""
    if snap is None:
        return []
    bad: list[str] = []
    if not snap["migrations"] or "v1" not in snap["migrations"]:
        bad.append(f"schema_migration holds {snap['migrations']}")
    accounts = {row["username_key"]: row for row in snap["accounts"]}
    by_id = {row["id"]: key for key, row in accounts.items()}
    rows = snap["activation"]
    if len(rows) != 1 or rows[0]["id"] != 1:
        bad.append(f"activation rows {rows}")
    else:
        state, owner = rows[0]["state"], rows[0]["owner_id"]
        if state == "Public" and (snap["account_count"] or owner is not None):
            bad.append(f"Public with {snap['account_count']} accounts, owner_id {owner}")
        elif state == "Activated" and (owner is None or snap["owner_exists"] != 1):
            bad.append(f"Activated but owner_id {owner} names no account")
        elif state not in ("Public", "Activated"):
            bad.append(f"state {state!r}")
    for row in accounts.values():
        why = []
        name, key = row["username"], row["username_key"]
        if key != name.lower():
            why.append(f"username_key {key!r}")
        if not (isinstance(row["full_name"], str) and row["full_name"].strip()):
            why.append(f"full_name {row['full_name']!r}")
        if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", row["email"] or ""):
            why.append(f"email {row['email']!r}")
        if (w := whole_hash(row["password_hash"])):
            why.append(w)
        if row["must_change"] not in (True, False) or not row["times_ok"]:
            why.append(f"must_change {row['must_change']!r} or times out of order")
        bad += [f"account {name!r}: {w}" for w in why]
    if snap["imported_bad"]:
        bad.append(f"imported accounts not as in their file: {snap['imported_bad']}")
    names = ("session", "second_factor", "recovery_code")
    for table, count in zip(names, snap["orphans"]):
        if count:
            bad.append(f"{count} {table} rows of no account (or second factor)")
    for s in snap["sessions"]:
        if not (len(s["token_hash"] or "") == 64 and s["times_ok"]
                and 300 <= s["idle_seconds"] <= 3600 and s["second_factor"] in (True, False)):
            bad.append(f"session {s['id']} not whole: {s}")
    factors = {f["account_id"]: f for f in snap["factors"]}
    for f in factors.values():
        # The server keeps the secret encrypted (migration v17): none sealed under a key file.
        if not (f["sealed"] is None and f["key_id"] is None and (f["server"] or 0) > 20
                and f["last_step"] >= 0):
            bad.append(f"second_factor not whole: {f}")
    codes = collections.Counter(c["account_id"] for c in snap["codes"])
    if any(c["length"] != 32 for c in snap["codes"]):
        bad.append("a recovery code hash is not 32 bytes")
    last_factor_event = {e["key"]: e["kind"] for e in snap["events"] if e["kind"] in FACTOR_EVENTS}
    for account_id, key in by_id.items():
        on = account_id in factors
        logged_on = last_factor_event.get(key) == "second_factor_enabled"
        if on != (codes.get(account_id, 0) == 10) or on != logged_on:
            bad.append(f"{key}: second_factor {'present' if on else 'absent'}, "
                       f"{codes.get(account_id, 0)} recovery codes, last second_factor_* event "
                       f"{last_factor_event.get(key)}")
    live: set[str] = set()
    for e in snap["events"]:
        if e["kind"] == "reset":
            live.clear()
        elif e["kind"] == "account_removed":
            live.discard(e["key"])
        elif e["kind"] in ("activation", "account_added") and not IMPORTED_NAME.match(e["key"] or ""):
            live.add(e["key"])
    if live != set(accounts):
        bad.append(f"the log's accounts differ from the rows: logged only {sorted(live - set(accounts))[:5]}"
                   f", stored only {sorted(set(accounts) - live)[:5]}")
    partial = {prefix: n for prefix, n in snap["imported"].items() if n != import_rows}
    if partial:
        bad.append(f"imports half-stored (of {import_rows} rows each): {partial}")
    imports = sum(1 for e in snap["events"] if e["kind"] == "accounts_imported")
    if imports != len(snap["imported"]):
        bad.append(f"{len(snap['imported'])} imported files stored, {imports} accounts_imported "
                   "events")
    return bad[:10]


def pg_state(snap: dict | None) -> tuple[str, str | None]:
    """(Public/Activated/empty, the owner's user name key)."""
    if snap is None:
        return "empty", None
    row = snap["activation"][0] if snap["activation"] else {}
    owner = next((a["username_key"] for a in snap["accounts"] if a["id"] == row.get("owner_id")), None)
    return row.get("state", "broken"), owner


def pg_events_since(snap: dict | None, after: int) -> list[dict]:
    return [e for e in (snap or {}).get("events", []) if e["id"] > after]


def pg_last_event(server: Server, db: str) -> int:
    if pg_snapshot_exists(server, db):
        return int(query(server, db, "SELECT coalesce(max(id), 0) FROM accounts.audit_event").strip())
    return 0


def pg_settled(server: Server, db: str) -> bool:
    """Nothing a client that has exited sent can still change `db`. A killed client's last
    statement runs to its end on the server after the client is gone, and may commit then: its
    server process ends only once it has read and run everything sent to it; through PgBouncer,
    a server connection is kept (listed by the pooler, idle) only after its answer."""
    kept = server.kept_backends(db)
    rows = query(server, db, "SELECT pid, state FROM pg_stat_activity WHERE datname = "
                 "current_database() AND backend_type = 'client backend' AND pid <> "
                 "pg_backend_pid()")
    for line in rows.splitlines():
        pid, state = line.split("|")
        if int(pid) not in kept or state != "idle":
            return False
    return True


def pg_snapshot_exists(server: Server, db: str) -> bool:
    return query(server, db, "SELECT count(*) FROM pg_namespace WHERE nspname = 'accounts'").strip() == "1"


def pg_last_step(server: Server, db: str, name: str) -> int | None:
    out = query(server, db, "SELECT f.last_step FROM accounts.second_factor f JOIN accounts.account a "
                      f"ON a.id = f.account_id WHERE a.username_key = '{name}'").strip()
    return int(out) if out else None


def pg_prepare_step(server: Server, db: str, name: str) -> bool:
    """As `prepare_step`, with psql: when the next step is used already, set last_step back."""
    last, now = pg_last_step(server, db, name), totp.current_step()
    if last is not None and last >= now + 1:
        query(server, db, f"UPDATE accounts.second_factor SET last_step = {now - 1} WHERE account_id "
                    f"= (SELECT id FROM accounts.account WHERE username_key = '{name}')")
        return True
    return False


def pg_clear_throttle(server: Server, db: str, name: str) -> None:
    query(server, db, f"DELETE FROM accounts.login_throttle WHERE username_key = '{name}'")


def pg_sessions(snap: dict | None) -> dict[bytes, tuple[int, str | None, bool]]:
    """Session rows by token hash: (id, the account's user name key, second_factor)."""
    if snap is None:
        return {}
    keys = {a["id"]: a["username_key"] for a in snap["accounts"]}
    return {bytes.fromhex(s["token_hash"]): (s["id"], keys.get(s["account_id"]), s["second_factor"])
            for s in snap["sessions"]}


def raw_pg(r: Result) -> list[str]:
    return mentions(r.text, RAW_PG + RAW_SQLITE)


def pg_activate_args(name: str, full_name: str | None = None) -> list[str]:
    return ["activate", "--username", name, "--full-name", full_name or f"User {name}",
            "--email", f"{name}@example.org", "--password-stdin"]


def pg_setup(pg: PgContext, uri: str, admin: Host, label: str, names: list[str],
             owner: str = "owner") -> None:
    """Activates the store for `owner` (as the database's owner, who makes the schema), gives
    the fleet's roles their rights (`store roles --apply`), and from then on reaches it as a
    fleet does (Hosts.fleet): adds `names` (full name "Added NAME") from `admin` as the
    administrator role; a host's commands then run as the host role."""
    results = [pg.hosts.run(admin, pg_activate_args(owner, "Owner Person"), uri, PASSWORD + "\n")]
    results += [pg.hosts.run(admin, ["store", "roles", "--admin", FLEET_ADMIN, "--host",
                                     FLEET_HOST, "--apply"], uri)]
    if results[-1].code == 0:
        pg.hosts.join_fleet(uri)
    results += [pg.hosts.run(admin, user_add_args(name), uri, PASSWORD + "\n") for name in names]
    bad = [r.brief() for r in results if r.code != 0]
    assert not bad, f"{label}: setting up (activate, store roles, user add): {'; '.join(bad[:3])}"


def pg_enable_2fa(pg: PgContext, host: Host, uri: str, name: str) -> tuple[Result, str | None]:
    """`2fa enable` run to its end on `host`: the password, then the code of the key it shows."""
    return enable_to_the_end(HostProc(pg.hosts, host, enable_args(name), uri, stdin_pipe=True))


def pg_code(pg: PgContext, db: str, name: str, secret: str) -> tuple[int, str]:
    """(step, code) of an unused step for `name`, its tally cleared first."""
    pg_clear_throttle(pg.server, db, name)
    pg_prepare_step(pg.server, db, name)
    step = step_after(pg_last_step(pg.server, db, name))
    return step, totp.code_for_step(secret, step)
