"""SIGKILL of 1-3 clients of different hosts at once (login, logout, user add, user import of a
1,000-line CSV (STRESS_PG_IMPORT_ROWS), 2fa enable), anywhere, near the commit, or as soon as
the client prints that it committed: after each round and after the next commands the store is
whole (one activation row; Public keeps no account, Activated names its owner; every account
row whole; no orphan session, second factor or recovery code; 2FA on iff 10 recovery codes iff
logged; every import all or nothing, iff accounts_imported is logged; the log's accounts are
the rows; the key file unchanged); each change stored iff logged; the same command run again
answers as it should (a second import is refused whole, an imported user verifies). At least a
quarter of the kills land while the client runs, and at least one after its commit.

The kill moments are the randomness (any must leave the store whole); they follow the commands'
typical durations, measured first on a database of their own. The store is looked at once the
server has run to its end every statement the killed clients sent (`pg_settled`): a client
killed after sending its last one does not stop the server from committing it.

The store is PostgreSQL, shared by many hosts (see hosts.py). PBKDF2 costs 1,000 iterations.
"""

from __future__ import annotations

import collections
import os
import pathlib
import random
import signal
import statistics
import time
from dataclasses import dataclass

import totp
from hosts import Host, HostProc
from pg_store import (IMPORT_HASH, PgContext, new_database, pg_code, pg_enable_2fa,
                      pg_events_since, pg_last_step, pg_problems, pg_sessions, pg_settled,
                      pg_setup, pg_snapshot, raw_pg)
from kills import kill_tally, show_typical_durations
from runner import (KEY_LINE, PASSWORD, blocked_writing_stdout, enable_args, enabled_ok,
                    login_args, read_key, user_add_args, wait_until)
from client_files import key_problems, read_session_file, token_hash


PG_KILL_KINDS = ("login", "logout", "user add", "user import", "2fa enable")


@dataclass
class PgVictim:
    kind: str
    host: Host
    name: str  # the account (login, logout, 2fa enable), the new name (user add), the prefix
    proc: HostProc
    deadline: float | None  # when to kill it (monotonic), None until a late enable's code is fed
    after_code: float | None = None
    shown: str | None = None
    fed_at: float | None = None
    file_before: str | None = None
    path: pathlib.Path | None = None  # the import's file
    marker: str | None = None  # killed as soon as this is on its stdout (after its commit)
    held: bool = False  # killed as soon as it blocks writing to its (full) stdout


# What each client prints once its write has committed (part n kills some right then).
PG_DONE_MARKERS = {"login": "Welcome back", "logout": "Logged out.", "user add": "Account added",
                   "user import": "Imported ", "2fa enable": "Two-factor authentication is on"}


def write_import(path: pathlib.Path, prefix: str, rows: int) -> None:
    with open(path, "w") as f:
        f.write("username,full_name,email,password_hash\n")
        for k in range(rows):
            f.write(f"{prefix}u{k:05d},Imported {k},{prefix}u{k:05d}@example.org,{IMPORT_HASH}\n")


def test_killed_clients_of_several_hosts_leave_the_store_whole(pg: PgContext, knobs):
    server, hosts, rng = pg.server, pg.hosts, random.Random(knobs.seed + 13)
    import_rows = knobs.pg_import_rows
    db, uri = new_database(server, "n_killed")
    admin = hosts.host("host-00")
    pool = ["kim", "kai", "kit", "ken", "kay", "kip"]  # host-N logs in and out as pool[N - 1]
    factor_pool = ["fay", "gus", "hal", "ida"]
    pg_setup(pg, uri, admin, "n", pool + factor_pool)
    machines = [hosts.host(f"host-{i + 1}") for i in range(len(pool))]
    account_of = {h.name: name for h, name in zip(machines, pool)}
    secrets: dict[str, str] = {}
    r, secret = pg_enable_2fa(pg, admin, uri, factor_pool[0])
    assert not (not enabled_ok(r, factor_pool[0]) or not secret), (
        ("setting up: `2fa enable`") + ': ' + (r.brief()))
    secrets[factor_pool[0]] = secret
    key_before, _ = key_problems(hosts.key_file)
    for h in machines[:3]:
        hosts.run(h, login_args(account_of[h.name]), uri, PASSWORD + "\n")

    # Typical durations, on a database of its own.
    tdb, turi = new_database(server, "n_timing")
    timer = hosts.host("host-timing")
    pg_setup(pg, turi, admin, "n timing", ["tim"])
    durations = {k: collections.deque(maxlen=9) for k in PG_KILL_KINDS}
    tails: collections.deque = collections.deque(maxlen=9)
    for n in range(3):
        for kind, args, stdin in (("login", login_args("tim"), PASSWORD + "\n"),
                                  ("logout", ["logout"], None),
                                  ("user add", user_add_args(f"timed{n}"), PASSWORD + "\n")):
            r = HostProc(hosts, timer, args, turi, stdin=stdin).wait()
            if r.code == 0:
                durations[kind].append(r.seconds)
        if n == 0:  # one import is enough to know its length
            path = hosts.box.scratch("import").with_suffix(".csv")
            write_import(path, f"i{900 + n}", import_rows)
            r = hosts.run(timer, ["user", "import", str(path), "--format", "csv"], turi)
            if r.code == 0:
                durations["user import"].append(r.seconds)
        p = HostProc(hosts, timer, enable_args("tim"), turi, stdin=None, stdin_pipe=True)
        p.feed(PASSWORD + "\n")
        shown = read_key(p)
        fed = time.monotonic()
        if shown:
            p.feed(totp.code_now(shown) + "\n")
        p.close_stdin()
        r = p.wait()
        if enabled_ok(r, "tim"):
            durations["2fa enable"].append(r.seconds)
            tails.append(r.seconds - (fed - p.start))
        hosts.run(admin, ["user", "reset-2fa", "tim"], turi)
    missing = [k for k, d in durations.items() if not d]
    assert not (missing or not tails), (
        ("measuring the commands") + ': ' + (f"no run of {missing} succeeded: last {r.brief()}"))
    show_typical_durations(durations)

    runs = collections.Counter()
    landed = collections.Counter()
    committed = collections.Counter()
    failures: dict[str, list[str]] = {k: [] for k in PG_KILL_KINDS}
    general: list[str] = []
    imports = rounds = 0
    # At least enough runs for each kind to be killed once.
    for n in range(max(knobs.pg_kill_runs, len(PG_KILL_KINDS))):
        rounds += 1
        # First the plan and what it needs (a session to log out, a second factor off to turn
        # on), then the state before, then all the clients at once.
        snap = pg_snapshot(server, db)
        factors_on = {a["username_key"] for a in snap["accounts"]
                      if a["id"] in {f["account_id"] for f in snap["factors"]}}
        live = pg_sessions(snap)
        plan: list[tuple[str, Host, str, float, bool]] = []
        setup_bad: list[str] = []
        for h in rng.sample(machines, rng.choice([1, 2, 3, 3])):
            kinds = [k for k in PG_KILL_KINDS if not (k == "user import" and any(
                entry[0] == k for entry in plan))]
            kind = rng.choices(kinds, [{"login": 3, "logout": 2, "user add": 2, "user import": 1,
                                        "2fa enable": 2}[k] for k in kinds])[0]
            if not plan and n < len(PG_KILL_KINDS):
                # The first client of the first rounds takes each kind in turn, so that every
                # one is killed whatever the seed.
                kind = PG_KILL_KINDS[n]
            typical = statistics.median(durations[kind])
            # A kill anywhere in the run; a late one, aimed at the commit (with 1-3 clients and
            # the server sharing 2 cores a client takes longer than alone; some exit first); or
            # one as soon as the client prints that its write committed, before it exits.
            when = rng.choices(["any", "late", "at output"], [0.4, 0.35, 0.25])[0]
            if not plan and n == 0:
                when = "at output"  # a login killed after its commit, whatever the seed
            late = when == "late"
            delay = rng.uniform(0.7 * typical, 2.0 * typical) if late else rng.uniform(0, typical)
            if when == "at output":
                delay = 30.0
            if kind in ("login", "logout"):
                name = account_of[h.name]
                text, _ = read_session_file(h.state, hosts.host_uri(uri))
                if kind == "logout" and token_hash(text) not in live:
                    r = hosts.run(h, login_args(name), uri, PASSWORD + "\n")
                    if r.code != 0:
                        setup_bad.append(f"login before logout: {r.brief()}")
                        continue
            elif kind == "user add":
                name = f"add{n}x{h.name[-1]}"
            elif kind == "user import":
                name = f"i{n}"
            else:
                busy = {entry[2] for entry in plan if entry[0] == kind}
                off = [a for a in factor_pool if a not in factors_on and a not in busy]
                if not off:
                    name = rng.choice([a for a in factor_pool if a not in busy])
                    r = hosts.run(admin, ["user", "reset-2fa", name], uri)
                    if r.code != 0:
                        setup_bad.append(f"user reset-2fa {name}: {r.brief()}")
                        continue
                    factors_on.discard(name)
                    secrets.pop(name, None)
                else:
                    name = rng.choice(off)
            plan.append((kind, h, name, delay, when))
        if setup_bad:
            general.append(f"run {n}: setting up: {setup_bad}")
        snap = pg_snapshot(server, db)
        before = max((e["id"] for e in snap["events"]), default=0) if snap else 0
        sessions_before = pg_sessions(snap)
        victims: list[PgVictim] = []
        for kind, h, name, delay, when in plan:
            late = when == "late"
            # Killed at its output: its standard output a full pipe, so that it stops at its
            # first write there, which comes after its commit (but `2fa enable`, which shows
            # the key before: its output is read, and it is killed once the marker is there).
            held = when == "at output" and kind != "2fa enable"
            file_before, _ = read_session_file(h.state, hosts.host_uri(uri))
            if kind == "login":
                p = HostProc(hosts, h, login_args(name), uri, stdin=PASSWORD + "\n",
                             stdout_held=held)
                victims.append(PgVictim(kind, h, name, p, p.start + delay, file_before=file_before))
            elif kind == "logout":
                p = HostProc(hosts, h, ["logout"], uri, stdout_held=held)
                victims.append(PgVictim(kind, h, name, p, p.start + delay, file_before=file_before))
            elif kind == "user add":
                p = HostProc(hosts, h, user_add_args(name), uri, stdin=PASSWORD + "\n",
                             stdout_held=held)
                victims.append(PgVictim(kind, h, name, p, p.start + delay))
            elif kind == "user import":
                path = hosts.box.scratch("import").with_suffix(".csv")
                write_import(path, name, import_rows)
                p = HostProc(hosts, h, ["user", "import", str(path), "--format", "csv"], uri,
                             stdout_held=held)
                victims.append(PgVictim(kind, h, name, p, p.start + delay, path=path))
            else:
                p = HostProc(hosts, h, enable_args(name), uri, stdin_pipe=True)
                p.feed(PASSWORD + "\n")
                after_code = rng.uniform(0, 1.1 * statistics.median(tails)) if late else None
                victims.append(PgVictim(kind, h, name, p, None if late else p.start + delay,
                                        after_code=after_code))
            if when == "at output":
                victims[-1].marker = PG_DONE_MARKERS[kind]
                victims[-1].held = held
        # The kills, each at its own moment; a late `2fa enable` dies after its code was fed.
        pending = list(victims)
        while pending:
            now = time.monotonic()
            for v in list(pending):
                if v.kind == "2fa enable" and v.shown is None:
                    match = KEY_LINE.search(v.proc.out_path.read_text(errors="replace"))
                    if match:
                        v.shown = match.group(1)
                        v.proc.feed(totp.code_now(v.shown) + "\n")
                        v.proc.close_stdin()
                        v.fed_at = now
                        if v.after_code is not None:
                            v.deadline = now + v.after_code
                done = (blocked_writing_stdout(v.proc.proc.pid) if v.held else v.marker is not None
                        and v.marker in v.proc.out_path.read_text(errors="replace"))
                if v.proc.proc.poll() is not None:
                    v.proc.end = now
                    pending.remove(v)
                elif (done or (v.deadline is not None and now >= v.deadline)
                      or now - v.proc.start > 30):
                    try:
                        os.kill(v.proc.proc.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    pending.remove(v)
            # A polling interval: each kill comes at its moment (the randomness under test) or
            # as soon as the client printed that it committed (a point it reached).
            time.sleep(0.001)
        results = [v.proc.wait() for v in victims]
        wait_until(lambda: pg_settled(server, db),
                   "the killed clients' last statements ran to their end on the server")

        snap = pg_snapshot(server, db)
        problems_now = pg_problems(snap, import_rows)
        key_text, key_bad = key_problems(hosts.key_file)
        if key_bad or key_text != key_before:
            problems_now.append(f"the shared key file changed or is damaged: {key_bad}")
        events = pg_events_since(snap, before)
        sessions_after = pg_sessions(snap)
        new_sessions = {h: row for h, row in sessions_after.items() if h not in sessions_before}
        accounts = {a["username_key"] for a in snap["accounts"]} if snap else set()
        if problems_now:
            general.append(f"run {n} after the kills: {problems_now}")
        for v, r in zip(victims, results):
            killed = r.code == -signal.SIGKILL
            runs[v.kind] += 1
            landed[v.kind] += killed
            if not killed:
                durations[v.kind].append(r.seconds)
            mine = [e for e in events if e["key"] == v.name]
            problems: list[str] = []
            if killed:
                pass
            elif r.code != 0 or raw_pg(r):
                problems.append(f"ended without being killed: {r.brief()}")
            file_after, bad = read_session_file(v.host.state, hosts.host_uri(uri))
            problems += bad
            if v.kind == "login":
                changed = any(e["kind"] == "login_success" for e in mine)
                added = [row for row in new_sessions.values() if row[1] == v.name]
                if len(added) != int(changed):
                    problems.append(f"login_success {'logged' if changed else 'not logged'}, "
                                    f"{len(added)} sessions added")
                if file_after is not None and file_after != v.file_before and token_hash(
                        file_after) not in new_sessions:
                    problems.append("a new session file names no session this login added")
                nxt = hosts.run(v.host, login_args(v.name), uri, PASSWORD + "\n")
                ok = nxt.code == 0 and nxt.stdout.startswith(f"Welcome back Added {v.name}!")
            elif v.kind == "logout":
                previous = token_hash(v.file_before)
                changed = previous is not None and previous not in sessions_after
                logged = [e for e in mine if e["kind"] == "logout"]
                if changed != bool(logged) or len(logged) > 1:
                    problems.append(f"session {'ended' if changed else 'kept'}, {len(logged)} "
                                    "logout events")
                if file_after is not None and file_after != v.file_before:
                    problems.append("logout wrote another session file")
                nxt = hosts.run(v.host, ["logout"], uri)
                said_out = (nxt.code, nxt.stdout) == (0, "Logged out.\n")
                said_not = nxt.code == 1 and nxt.stderr.strip() == "Not logged in."
                ok = (said_out if file_after is not None and not changed
                      else said_out or said_not if file_after is not None else said_not)
            elif v.kind == "user add":
                changed = v.name in accounts
                logged = [e for e in mine if e["kind"] == "account_added"]
                if changed != bool(logged):
                    problems.append(f"account {'stored' if changed else 'absent'}, "
                                    f"{len(logged)} account_added events")
                nxt = hosts.run(v.host, user_add_args(v.name), uri, PASSWORD + "\n")
                ok = ((nxt.code, nxt.stderr.strip()) == (1, f"User name {v.name} is already taken!")
                      if changed else (nxt.code, nxt.stdout) == (0, f"Account added: {v.name}.\n"))
            elif v.kind == "user import":
                imports += 1
                stored = (snap or {}).get("imported", {}).get(v.name, 0)
                changed = stored == import_rows
                logged = [e for e in events if e["kind"] == "accounts_imported"]
                if stored not in (0, import_rows) or changed != bool(logged):
                    problems.append(f"{stored} of {import_rows} rows stored, "
                                    f"{len(logged)} accounts_imported events")
                nxt = hosts.run(v.host, ["user", "import", str(v.path), "--format", "csv"], uri)
                ok = (nxt.code == 1 and "Nothing was imported" in nxt.stderr if changed else
                      nxt.code == 0 and f"Imported {import_rows} accounts from " in nxt.stdout)
                if ok:
                    who = f"{v.name}u{import_rows - 1:05d}"
                    vr = hosts.run(v.host, ["verify", "--username", who, "--password-stdin"],
                                   uri, PASSWORD + "\n")
                    if vr.code != 0:
                        problems.append(f"verify of the imported {who}: {vr.brief()}")
            else:
                changed = pg_last_step(server, db, v.name) is not None
                logged = [e for e in mine if e["kind"] == "second_factor_enabled"]
                if changed != bool(logged):
                    problems.append(f"2FA {'on' if changed else 'off'}, {len(logged)} "
                                    "second_factor_enabled events")
                if changed and v.fed_at is None:
                    problems.append("2FA stored though no code of the key shown was typed")
                if changed:
                    secrets[v.name] = v.shown or ""
                    nxt = hosts.run(v.host, enable_args(v.name), uri, PASSWORD + "\n")
                    ok = (nxt.code == 1 and f"Two-factor authentication is already on for {v.name}."
                          in nxt.stderr)
                else:
                    nxt, shown = pg_enable_2fa(pg, v.host, uri, v.name)
                    ok = enabled_ok(nxt, v.name) and bool(shown)
                    secrets[v.name] = shown or ""
                if ok and secrets.get(v.name):
                    _, code = pg_code(pg, db, v.name, secrets[v.name])
                    vr = hosts.run(v.host, ["verify", "--username", v.name, "--password-stdin"],
                                   uri, f"{PASSWORD}\n{code}\n")
                    if vr.code != 0:
                        problems.append(f"verify with a code after it: {vr.brief()}")
            committed[v.kind] += killed and changed
            if not killed and not changed:
                problems.append(f"it ended without its change: {r.brief()}")
            if not ok or raw_pg(nxt):
                problems.append(f"next `{v.kind}` from {v.host.name}: {nxt.brief()}")
            if problems:
                when = ("at its output" if v.marker else
                        f"{(v.deadline or 0) - v.proc.start:.3f} s" if v.deadline else "never")
                failures[v.kind].append(
                    f"run {n} {v.host.name} ({len(victims)} at once, kill at {when}, "
                    f"{'mid-run' if killed else 'after exit'}): {'; '.join(problems)}")
        after_next = pg_problems(pg_snapshot(server, db), import_rows)
        if after_next:
            general.append(f"run {n} after the next commands: {after_next}")
    total = sum(runs.values())
    for kind in PG_KILL_KINDS:
        assert (not failures[kind] and runs[kind] > 0), (
            (f"SIGKILL during `{kind}` on one of 6 hosts (1-3 clients of different hosts at "
            "once): stored iff logged, and the same command run again answers as it should") + ': '
            + kill_tally(runs[kind], landed[kind], committed[kind], failures[kind], 2))
    assert (not general and total > 0), (
        ("after every round of kills and after the next commands the store is whole: Public "
        "keeps no account, Activated names its owner; no orphan session, second factor or "
        f"recovery code; 2FA on iff 10 recovery codes iff logged; every import of {import_rows} "
        "rows all or nothing, iff logged; the log's accounts are the rows; the key file unchanged") + ': '
        + (f"{len(general)} bad: {general[:3]}" if general else
        f"{total} clients in {rounds} rounds, {imports} imports"))
    assert (total > 0 and sum(landed.values()) * 4 >= total and sum(committed.values()) > 0), (
        ("kills landed mid-run in at least a quarter of the clients, and after a commit at least once") + ': '
        + (f"{sum(landed.values())} of {total}, {sum(committed.values())} after the commit (seed {knobs.seed})"))
