"""The v1 -> latest (v14) upgrade, killed. Tests/fixtures/v1.sqlite3 enlarged (100,000 audit
events, 25,000 login_throttle rows, on the v1 schema) so that the upgrade takes long enough:

- `login` and `user list` (twice each) upgrade it to the latest schema, every row copied;
- 6 `user list` opening the v1 file at once all list the account, and leave a whole v14 file;
- `login` or `user list` killed at random moments of their first open: the file is a whole v1
  file with every row (and the next login upgrades it), a whole v2, v3, v4, v5, v6, v7, v8, v9,
  v10, v12 or v13 file (killed between two migrations, which commit one at a time) or a whole
  v14 file with every row copied, none of its events offline, never in between. The first kill of each command comes as soon
  as it has written 64 KiB of the upgrade to the WAL (a point it reaches well before the first migration
  commits), so that at least one kill lands before the upgrade committed whatever the machine's
  speed; the others come at random moments of a typical run (the moment is the randomness: any
  must leave a whole file).
"""

from __future__ import annotations

import collections
import datetime
import os
import pathlib
import random
import shutil
import sqlite3
import time

import pytest

from kills import kill_after, kill_moment
from runner import PASSWORD, Gate, Sandbox, Started, login, wait_until
from sqlite_files import private_copy, same_rows
from sqlite_store import (MIGRATIONS, V3_TABLES, V5_TABLES, V6_TABLES, V8_TABLES, V10_TABLES,
                          V12_TABLES, events_since, v3_problems)


REPO = pathlib.Path(__file__).resolve().parents[2]
UPGRADE_EVENTS = 100_000
UPGRADE_THROTTLES = 25_000
UPGRADE_CROWD = 6
UPGRADE_CROWD_ROUNDS = 2
WAL_WRITTEN = 64 * 1024  # bytes of the upgrade in the WAL: the first kills' moment
VICTIMS = {
    "login": (["login", "--username", "alice", "--password-stdin"], PASSWORD + "\n"),
    "user list": (["user", "list"], None),
}

V1_FIXTURE = REPO / "Tests" / "fixtures" / "v1.sqlite3"


V1_PASSWORD_ITERATIONS = 2000  # the fixture's hash: logins neither rehash nor slow down
AUDIT_KINDS = {"activation", "login_success", "login_failure", "lockout", "unlock", "reset",
               "account_added", "account_edited", "account_disabled", "account_enabled",
               "account_removed", "password_changed", "password_set", "ownership_moved"}


V3_AUDIT_KINDS = AUDIT_KINDS | {
    "logout", "session_revoked", "second_factor_enabled", "second_factor_disabled",
    "second_factor_reset", "recovery_codes_made", "recovery_code_used"}


V4_AUDIT_KINDS = V3_AUDIT_KINDS | {"accounts_imported", "accounts_exported"}


V5_AUDIT_KINDS = V4_AUDIT_KINDS | {
    "group_added", "group_removed", "group_member_added", "group_member_removed",
    "pam_session_opened", "pam_session_closed"}


V6_AUDIT_KINDS = V5_AUDIT_KINDS | {"ssh_key_added", "ssh_key_removed"}
# Migration "v9": PAM's refusals and the user records' changes.
V9_AUDIT_KINDS = V6_AUDIT_KINDS | {
    "access_refused", "userdb_enabled", "userdb_disabled", "userdb_synced"}
# Migration "v13": a fleet host's own role made and withdrawn, a shared store upgraded.
LATEST_AUDIT_KINDS = V9_AUDIT_KINDS | {"fleet_host_added", "fleet_host_removed", "store_upgraded"}
V2_SCHEMA = {
    ("table", "account"), ("table", "activation"), ("table", "login_throttle"),
    ("table", "audit_event"), ("table", "audit_kind"), ("table", "grdb_migrations"),
    ("table", "sqlite_sequence"), ("index", "audit_event_by_user"),
    ("index", "audit_event_by_kind"), ("trigger", "activation_public_keeps_no_account"),
    ("trigger", "account_needs_activated_device")}


V1_SCHEMA = {
    ("table", "user"), ("table", "activation"), ("table", "login_throttle"),
    ("table", "audit_event"), ("table", "grdb_migrations"), ("table", "sqlite_sequence"),
    ("index", "audit_event_by_user"), ("trigger", "activation_public_keeps_no_user")}


AUDIT_COLUMNS = "id, occurred_at, kind, username, username_key, detail"
THROTTLE_COLUMNS = "username_key, failures, lockouts, locked_until, updated_at"


def enlarged_v1(box: Sandbox) -> tuple[pathlib.Path, dict]:
    """The v1 fixture with UPGRADE_EVENTS more audit events and UPGRADE_THROTTLES more
    login_throttle rows, written on the v1 schema (its CHECKs hold), and what it holds."""
    path = pathlib.Path(private_copy(V1_FIXTURE, box.root / "v1-pristine"))
    con = sqlite3.connect(path, isolation_level=None)
    try:
        if [r[0] for r in con.execute("SELECT identifier FROM grdb_migrations")] != ["v1"]:
            raise RuntimeError(f"{V1_FIXTURE} is not a v1 database")
        (last,) = con.execute("SELECT max(occurred_at) FROM audit_event").fetchone()
        base = datetime.datetime.strptime(last, "%Y-%m-%dT%H:%M:%S.%fZ")

        def stamp(ms: int) -> str:
            t = base + datetime.timedelta(milliseconds=ms)
            return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"

        kinds = [("login_failure", "invalid user name or password"), ("login_success", None),
                 ("login_failure", "invalid user name or password"), ("unlock", None)]

        def events():
            for i in range(UPGRADE_EVENTS):
                kind, detail = kinds[i % len(kinds)]
                name = "Alice" if kind == "login_success" else f"guest{i % 5000:05d}"
                yield (stamp(i + 1), kind, name, name.lower(), detail)

        def throttles():
            for i in range(UPGRADE_THROTTLES):
                locked = stamp(UPGRADE_EVENTS + 60_000) if i % 7 == 0 else None
                yield (f"visitor{i:06d}", 1 + i % 4, i % 7 == 0, locked, stamp(i + 1))

        con.execute("BEGIN IMMEDIATE")
        con.executemany("INSERT INTO audit_event (occurred_at, kind, username, username_key, "
                        "detail) VALUES (?, ?, ?, ?, ?)", events())
        con.executemany("INSERT INTO login_throttle (username_key, failures, lockouts, "
                        "locked_until, updated_at) VALUES (?, ?, ?, ?, ?)", throttles())
        con.execute("COMMIT")
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        expected = v1_contents(con)
    finally:
        con.close()
    for suffix in ("-wal", "-shm"):
        if os.path.exists(str(path) + suffix):
            os.remove(str(path) + suffix)
    # A copy in rollback-journal mode that the checks attach read-only, to compare rows.
    reference = box.root / "v1-pristine" / "reference.sqlite3"
    shutil.copyfile(path, reference)
    con = sqlite3.connect(reference, isolation_level=None)
    con.execute("PRAGMA journal_mode = DELETE")
    con.close()
    expected["reference"] = str(reference)
    return path, expected


def v1_contents(con: sqlite3.Connection) -> dict:
    """What a v1 file holds, but for the audit and throttle rows (compared with `same_rows`)."""
    return {
        "user": con.execute("SELECT id, username, username_key, full_name, email, "
                            "password_hash, created_at, updated_at, last_login_at FROM main.user"
                            ).fetchall(),
        "activation": con.execute("SELECT id, state, user_id, changed_at FROM main.activation"
                                  ).fetchall(),
        "audit_max_id": con.execute("SELECT max(id) FROM main.audit_event").fetchone()[0],
        "sequence": con.execute("SELECT seq FROM main.sqlite_sequence WHERE name = 'audit_event'"
                                ).fetchone()[0],
    }


def schema_objects(con: sqlite3.Connection) -> set[tuple[str, str]]:
    return {(t, n) for t, n in con.execute("SELECT type, name FROM main.sqlite_master") if
            not n.startswith("sqlite_autoindex_")}


def added_objects(con: sqlite3.Connection, tables: set[str]) -> set[tuple[str, str]]:
    """The schema objects a later migration made: its `tables` and whatever index or trigger
    is on them (their names are the implementation's)."""
    return {(t, n) for t, n, table in con.execute(
        "SELECT type, name, tbl_name FROM main.sqlite_master")
        if table in tables and not n.startswith("sqlite_autoindex_")}


def upgrade_state(db: str, expected: dict, logins: int) -> tuple[str, list[str]]:
    """('v1' | 'v2' | 'v3' | 'v4' | 'latest' | 'between', problems): a whole v1 file holding
    every row it held, or a whole v2, v3 or v4 file (killed between two migrations, each
    committing on its own) or a whole latest file holding every one of them (plus at most
    `logins` login_success events, and from v3 on at most `logins` sessions of that account, no
    second factor; from v5 on no group and no expiry; from v6 on no uid, key or number given)."""
    problems: list[str] = []
    con = sqlite3.connect(f"file:{db}?mode=rw", uri=True, timeout=10, isolation_level=None)
    try:
        con.execute("ATTACH ? AS reference", (f"file:{expected['reference']}?mode=ro",))
        integrity = [r[0] for r in con.execute("PRAGMA main.integrity_check")]
        if integrity != ["ok"]:
            problems.append(f"integrity_check: {integrity[:3]}")
        foreign = con.execute("PRAGMA main.foreign_key_check").fetchall()
        if foreign:
            problems.append(f"foreign_key_check: {foreign[:3]}")
        objects = schema_objects(con)
        migrations = sorted((r[0] for r in con.execute(
            "SELECT identifier FROM main.grdb_migrations")), key=lambda m: int(m[1:]))
        if migrations == ["v1"]:
            if objects != V1_SCHEMA:
                problems.append(f"migrations say v1, schema differs: extra "
                                f"{sorted(objects - V1_SCHEMA)}, missing {sorted(V1_SCHEMA - objects)}")
                return "between", problems
            found = v1_contents(con)
            differ = [k for k in found if found[k] != expected[k]]
            differ += [] if same_rows(con, "audit_event", AUDIT_COLUMNS) else ["audit_event"]
            differ += [] if same_rows(con, "login_throttle", THROTTLE_COLUMNS) else [
                "login_throttle"]
            if differ:
                problems.append(f"v1 rows differ: {differ}")
            return "v1", problems
        latest = migrations == MIGRATIONS
        # Killed between v13 and v14: a whole v13 file (v14 adds a column and its index only).
        has_v13 = latest or migrations == MIGRATIONS[:12]
        # Killed between v12 and v13: a whole v12 file (v13 adds kinds of events only).
        has_v12 = has_v13 or migrations == MIGRATIONS[:11]
        # Killed between v3 and v4, v4 and v5, v5 and v6, v6 and v7, v7 and v8, v8 and v9, or v9
        # and v10 (each migration commits on its own): a whole v3, v4, v5, v6, v7, v8 or v9 file
        # (v9 adds kinds of events only: a v9 file has v8's tables).
        has_v10 = has_v12 or migrations == MIGRATIONS[:10]  # killed between v10 and v12
        has_v8 = has_v10 or migrations in (MIGRATIONS[:8], MIGRATIONS[:9])
        has_v7 = has_v8 or migrations == MIGRATIONS[:7]
        has_v6 = has_v7 or migrations == MIGRATIONS[:6]
        has_v5 = has_v6 or migrations == MIGRATIONS[:5]
        has_v4 = has_v5 or migrations == MIGRATIONS[:4]
        has_v3 = has_v4 or migrations == MIGRATIONS[:3]
        later_tables = ((V3_TABLES if has_v3 else set()) | (V5_TABLES if has_v5 else set())
                        | (V6_TABLES if has_v6 else set()) | (V8_TABLES if has_v8 else set())
                        | (V10_TABLES if has_v10 else set()) | (V12_TABLES if has_v12 else set()))
        added = added_objects(con, later_tables)
        if has_v6:
            added |= {("index", "account_by_uid")}  # v6's index on the v2 table `account`
        if has_v7:
            added |= {("index", "audit_event_by_host")}  # v7's, on the v2 table `audit_event`
        if latest:
            added |= {("index", "audit_event_by_offline_id")}  # v14's, on `audit_event` too
        if has_v12:  # v12's change counter's triggers on the v2 table `account`
            added |= {("trigger", f"userdb_account_{change}")
                      for change in ("added", "changed", "removed")}
        missing_v3 = {("table", t) for t in later_tables} - added
        if (migrations not in (["v1", "v2"], MIGRATIONS[:3], MIGRATIONS[:4], MIGRATIONS[:5],
                               MIGRATIONS[:6], MIGRATIONS[:7], MIGRATIONS[:8], MIGRATIONS[:9],
                               MIGRATIONS[:10], MIGRATIONS[:11], MIGRATIONS[:12], MIGRATIONS)
                or objects - added != V2_SCHEMA or missing_v3):
            problems.append(f"migrations {migrations}; schema: extra "
                            f"{sorted(objects - added - V2_SCHEMA)}, missing "
                            f"{sorted((V2_SCHEMA - objects) | missing_v3)}")
            return "between", problems
        accounts = con.execute(
            "SELECT id, username, username_key, full_name, email, password_hash, created_at, "
            "updated_at, last_login_at, must_change_password, disabled_at FROM main.account").fetchall()
        (old,) = expected["user"]
        if len(accounts) != 1 or accounts[0][:8] != old[:8] or accounts[0][9:] != (0, None):
            problems.append(f"account rows {accounts} from user {old}")
        elif accounts[0][8] != old[8] and not (logins and accounts[0][8] > (old[8] or "")):
            problems.append(f"last_login_at {accounts[0][8]} (was {old[8]})")
        activation = con.execute("SELECT id, state, owner_id, changed_at FROM main.activation"
                                 ).fetchall()
        if activation != expected["activation"]:
            problems.append(f"activation {activation}, was {expected['activation']}")
        kinds = {r[0] for r in con.execute("SELECT name FROM main.audit_kind")}
        has_v9 = has_v10 or migrations == MIGRATIONS[:9]
        if kinds != (LATEST_AUDIT_KINDS if has_v13 else V9_AUDIT_KINDS if has_v9
                     else V6_AUDIT_KINDS if has_v6
                     else V5_AUDIT_KINDS if has_v5
                     else V4_AUDIT_KINDS if has_v4
                     else V3_AUDIT_KINDS if has_v3 else AUDIT_KINDS):
            problems.append(f"audit_kind {sorted(kinds)}")
        if not same_rows(con, "audit_event", AUDIT_COLUMNS, "WHERE id <= ?",
                         (expected["audit_max_id"],)):
            problems.append("the old audit events were not all copied as they were")
        later = con.execute("SELECT kind, username_key FROM main.audit_event WHERE id > ?",
                            (expected["audit_max_id"],)).fetchall()
        if len(later) > logins or any(row != ("login_success", "alice") for row in later):
            problems.append(f"events after the copied ones: {later[:5]}")
        if latest and con.execute("SELECT count(*) FROM main.audit_event "
                                  "WHERE offline_id IS NOT NULL").fetchone()[0]:
            problems.append("events of an upgraded file marked offline")
        if not same_rows(con, "login_throttle", THROTTLE_COLUMNS):
            problems.append("login_throttle rows were not all kept as they were")
        sequence = dict(con.execute("SELECT name, seq FROM main.sqlite_sequence").fetchall())
        if (sequence.get("audit_event", -1) < expected["sequence"]
                or set(sequence) - {"audit_event"} - (V3_TABLES if has_v3 else set())):
            problems.append(f"sqlite_sequence {sequence}, was {expected['sequence']}")
        if not has_v3:
            return "v2", problems
        problems += v3_problems(con)
        sessions = con.execute("SELECT account_id FROM main.session").fetchall()
        if len(sessions) > logins or any(a != old[0] for (a,) in sessions):
            problems.append(f"sessions of accounts {[a for (a,) in sessions][:5]} after "
                            f"{logins} login(s)")
        factors = [con.execute(f"SELECT count(*) FROM main.{t}").fetchone()[0]
                   for t in ("second_factor", "recovery_code")]
        if factors != [0, 0]:
            problems.append(f"second_factor/recovery_code rows {factors} after an upgrade")
        if latest:
            grouped = [con.execute(sql).fetchone()[0] for sql in (
                "SELECT count(*) FROM main.account_group", "SELECT count(*) FROM main.group_member",
                "SELECT count(*) FROM main.account WHERE expires_at IS NOT NULL")]
            if grouped != [0, 0, 0]:
                problems.append(f"groups, memberships, expiries {grouped} after an upgrade")
        return ("latest" if latest else "v4" if has_v4 else "v3"), problems
    finally:
        con.close()


@pytest.fixture(scope="module")
def enlarged():
    """(the enlarged v1 file, what it holds, how long each command took to upgrade it), made
    once for the module's tests."""
    sandbox = Sandbox()
    try:
        yield (*enlarged_v1(sandbox), {})
    finally:
        sandbox.remove()


def start(box: Sandbox, db: str, kind: str) -> Started:
    args, stdin = VICTIMS[kind]
    p = Started(box, args, db, V1_PASSWORD_ITERATIONS, stdin_pipe=stdin is not None)
    if stdin is not None:
        p.feed(stdin)
        p.close_stdin()
    return p


def finish_and_check(box: Sandbox, db: str, expected: dict, logins_before: int) -> list[str]:
    """The next login, run to its end: it works, and the file is then a whole latest file."""
    r = login(box, db, "alice", iterations=V1_PASSWORD_ITERATIONS)
    problems = [] if r.code == 0 and r.stdout.startswith("Welcome back ") else [
        f"next login: {r.brief()}"]
    state, bad = upgrade_state(db, expected, logins_before + 1)
    return problems + bad + ([] if state == "latest" else [f"after the next login: {state}"])


def upgrade_runs(box: Sandbox, pristine: pathlib.Path, expected: dict,
                 kinds: list[str]) -> tuple[dict[str, collections.deque], list[str]]:
    """Each of `kinds` run to its end on a copy of the v1 file: (how long each took, what is
    wrong: its answer, or the file after it not a whole latest file with every row)."""
    durations: dict[str, collections.deque] = {k: collections.deque(maxlen=5) for k in VICTIMS}
    problems: list[str] = []
    for kind in kinds:
        db = private_copy(pristine, box.scratch("upgrade-timing"))
        r = start(box, db, kind).wait(timeout=120)
        durations[kind].append(r.seconds)
        if r.code != 0:
            problems.append(f"`{kind}` on the v1 file: {r.brief()}")
        state, bad = upgrade_state(db, expected, 1 if kind == "login" else 0)
        problems += [f"after `{kind}`: {b}" for b in bad]
        if state != "latest":
            problems.append(f"after `{kind}`: {state}")
        shutil.rmtree(os.path.dirname(db), ignore_errors=True)
    return durations, problems


def test_the_upgrade_copies_every_row(box, enlarged):
    pristine, expected, timing = enlarged
    durations, problems = upgrade_runs(box, pristine, expected, list(VICTIMS))
    assert not problems, (
        f"the v1 fixture enlarged by {UPGRADE_EVENTS:,} audit events and "
        f"{UPGRADE_THROTTLES:,} login_throttle rows: `login` and `user list` upgrade it to the "
        "latest schema (v10), every row copied: runs "
        + ", ".join(f"`{k}` {v[0]:.2f} s" for k, v in durations.items()) + f"; {problems[:3]}")
    timing.update(durations)


def test_commands_meeting_the_v1_file_at_once_all_work(box, enlarged):
    """Several commands meeting the v1 file at once: one upgrades it, the others wait for it
    and then work on the upgraded file."""
    pristine, expected, _ = enlarged
    wrong = []
    for n in range(UPGRADE_CROWD_ROUNDS):
        db = private_copy(pristine, box.scratch("upgrade-crowd"))
        gate = Gate()
        crowd = [Started(box, ["user", "list"], db, V1_PASSWORD_ITERATIONS, stdin_pipe=False,
                         gate=gate) for _ in range(UPGRADE_CROWD)]
        gate.open()
        results = [p.wait(timeout=120) for p in crowd]
        wrong += [f"round {n + 1}: {r.brief()}" for r in results
                  if r.code != 0 or "alice@example.org" not in r.stdout]
        state, bad = upgrade_state(db, expected, 0)
        wrong += [f"round {n + 1}: {b}" for b in bad] + (
            [] if state == "latest" else [f"round {n + 1}: left {state}"])
        shutil.rmtree(os.path.dirname(db), ignore_errors=True)
    assert not wrong, (
        f"{UPGRADE_CROWD} `user list` opening the v1 file at once ({UPGRADE_CROWD_ROUNDS} "
        f"rounds): every one lists the account (exit 0); the file is then whole v10: "
        f"{len(wrong)} wrong: {wrong[:3]}")


def wal_written(db: str) -> bool:
    try:
        return os.path.getsize(db + "-wal") >= WAL_WRITTEN
    except FileNotFoundError:
        return False


def test_a_killed_upgrade_leaves_a_whole_file(box, enlarged, knobs):
    pristine, expected, timing = enlarged
    rng = random.Random(knobs.seed + 8)
    # How long each command takes, to spread the random kills over a run (measured by the
    # test above when it ran in this process).
    durations = timing
    if not durations:
        durations, problems = upgrade_runs(box, pristine, expected, list(VICTIMS))
        assert not problems, f"the upgrade run to its end: {problems[:3]}"
    outcomes = collections.Counter()
    failures: list[str] = []
    rounds = max(knobs.upgrade_rounds, 2)
    for n in range(rounds):
        kind = "login" if n % 2 == 0 else "user list"
        db = private_copy(pristine, box.scratch("upgrade-killed"))
        p = start(box, db, kind)
        if n < 2:
            # The first kill of each command: once the upgrade is under way (64 KiB in the WAL,
            # while the first migration copies the audit events), before it commits.
            wait_until(lambda: p.proc.poll() is not None or wal_written(db),
                       "the upgrade has written to the WAL")
            delay = time.monotonic() - p.start
        else:
            # Half the kills anywhere in the run, half near its end, where the upgrade commits.
            delay = kill_moment(rng, durations[kind], 0.75)
        r, was_killed = kill_after(p, delay, durations[kind])
        state, bad = upgrade_state(db, expected, 1 if kind == "login" else 0)
        outcomes[f"{state}{'' if was_killed else ' (ended before the kill)'}"] += 1
        logins = len(events_since(db, expected["audit_max_id"])) if state in (
            "v2", "v3", "v4", "latest") else 0
        bad += [] if state in ("v1", "v2", "v3", "v4", "latest") else [f"left {state}"]
        bad += finish_and_check(box, db, expected, logins)
        if bad:
            failures.append(f"round {n + 1} `{kind}` killed at {delay * 1000:.0f} ms "
                            f"({'mid-run' if was_killed else 'after exit'}): {'; '.join(bad)}")
        shutil.rmtree(os.path.dirname(db), ignore_errors=True)
    summary = ", ".join(f"{v} {k}" for k, v in sorted(outcomes.items()))
    assert not failures, (
        f"SIGKILL during the v1 -> v10 upgrade ({rounds} rounds, `login` and `user list` on the "
        "v1 file): each time a whole v1 file with every row (and the next login upgrades it), "
        "a whole v2, v3, v4, v5, v6, v7, v8 or v9 file (between the migrations) or a whole v10 "
        f"file with every row copied, never in between: {summary} (seed {knobs.seed}); "
        f"{len(failures)} bad: {failures[:2]}")
    assert outcomes["v1"] > 0, (
        f"kills landed before the upgrade committed (file left v1) in at least one round: "
        f"{summary}")
