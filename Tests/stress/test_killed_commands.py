"""Commands killed with SIGKILL at random moments (activate, login with the right and with a
wrong password, reset; activations also on a new file, so that kills land in its creation):
after each kill `status` reads the file and agrees with it, the file passes
`PRAGMA integrity_check`, is Public with no account (or empty, or missing) or Activated with
an owner whose password logs in, and the next normal command (the same one, run to its end)
works. At least a quarter of the kills land while the command runs.

Half the kills come anywhere in a command's run, half near its end, where SQLite writes; the
moments follow the command's typical duration, measured first and kept up to date, so they
follow the machine's load. The moment is the randomness: any moment must leave the store whole.
"""

from __future__ import annotations

import collections
import json
import os
import random
from dataclasses import dataclass

from kills import kill_after, kill_moment, kill_tally, show_typical_durations
from runner import (ALREADY, FULL_NAME, INVALID, KILL_ITERATIONS, PASSWORD, WELCOME,
                    WRONG_PASSWORD, Sandbox, Started, login, run)
from sqlite_store import audit_count, consistent, inspect


@dataclass
class Victim:
    kind: str  # activate, login, login-wrong, reset
    args: list[str]
    stdin: str | None


def victim(kind: str, username: str) -> Victim:
    if kind == "activate":
        return Victim(kind, ["activate", "--username", username, "--full-name", FULL_NAME,
                             "--email", f"{username}@example.org", "--password-stdin"],
                      PASSWORD + "\n")
    if kind == "login":
        return Victim(kind, ["login", "--username", username, "--password-stdin"],
                      PASSWORD + "\n")
    if kind == "login-wrong":
        return Victim(kind, ["login", "--username", username, "--password-stdin"],
                      WRONG_PASSWORD + "\n")
    return Victim(kind, ["reset", "--yes"], None)


def start_victim(box: Sandbox, db: str, v: Victim, iterations: int = KILL_ITERATIONS) -> Started:
    p = Started(box, v.args, db, iterations, stdin_pipe=v.stdin is not None)
    if v.stdin is not None:
        p.feed(v.stdin)
        p.close_stdin()
    return p


def measure_durations(box: Sandbox) -> dict[str, collections.deque]:
    """Wall times of each command run to its end, started the way victims are; the kill
    tests keep adding the latest ones, so the kill moments follow the machine's load."""
    db = box.db("timing")
    times = {k: collections.deque(maxlen=9) for k in ("activate", "login", "login-wrong", "reset")}
    for _ in range(3):
        for kind in times:
            r = start_victim(box, db, victim(kind, "alice")).wait()
            times[kind].append(r.seconds)
        login(box, db)  # clears the failure count
    return times


def test_killed_commands_leave_a_consistent_file(box, knobs):
    rng = random.Random(knobs.seed)
    durations = measure_durations(box)
    show_typical_durations(durations)
    db = box.db("killed")
    kinds = ("activate", "login", "login-wrong", "reset")
    runs = {k: 0 for k in kinds}
    landed = {k: 0 for k in kinds}
    committed = {k: 0 for k in kinds}
    failures: dict[str, list[str]] = {k: [] for k in kinds}
    fresh_files = empty_files = 0
    username = "alice"
    # At least enough runs for each kind to be killed once.
    for n in range(max(knobs.kill_runs, 8)):
        snap = inspect(db)
        if snap.state in ("Public", "empty", "missing"):
            kind = "activate"
            if snap.state != "missing" and rng.random() < 0.25:
                for suffix in ("", "-wal", "-shm"):  # a new file: kills land in its creation
                    if os.path.exists(db + suffix):
                        os.remove(db + suffix)
            if not os.path.exists(db):
                fresh_files += 1
            username = rng.choice(["alice", "Bob", "carol_c"])
        else:
            # Each kind once first, so that every one is killed whatever the seed.
            untried = [k for k in ("reset", "login", "login-wrong") if not runs[k]]
            kind = untried[0] if untried else rng.choices(
                ["reset", "login", "login-wrong"], [0.4, 0.35, 0.25])[0]
            username = snap.username or username
        v = victim(kind, username)
        events_before = audit_count(db)
        # Half the kills anywhere in the run, half near its end, where SQLite writes.
        delay = kill_moment(rng, durations[kind])
        p = start_victim(box, db, v)
        r, was_killed = kill_after(p, delay, durations[kind])
        runs[kind] += 1
        landed[kind] += was_killed
        committed[kind] += was_killed and audit_count(db) > events_before

        where = f"run {n} {kind} killed at {delay * 1000:.1f} ms ({'mid-run' if was_killed else 'after exit'})"
        problems: list[str] = []
        # The product's own reading of the file first (it may meet a hot WAL) ...
        status = run(box, ["status", "--json"], db)
        try:
            shown = json.loads(status.stdout).get("state")
        except ValueError:
            shown = None
        if status.code != 0:
            problems.append(f"status: {status.brief()}")
        # ... then the file itself, and a login as its user.
        bad, after = consistent(box, db)
        problems += bad
        expected_shown = "Activated" if after.state == "Activated" else "Public"
        if status.code == 0 and shown != expected_shown:
            problems.append(f"status says {shown}, file says {after.state}")
        if after.state == "empty":
            empty_files += 1
        # The next normal command: the same one, run to its end.
        nxt, ok, full = None, False, False
        if kind == "activate":
            if after.state == "Activated":
                nxt = start_victim(box, db, v).wait()
                ok = nxt.code == 1 and ALREADY in nxt.stderr.lower()
            else:
                # Half the time a weaker hash, so that the logins killed next also rehash.
                weaker = rng.random() < 0.5
                nxt = start_victim(box, db, v, KILL_ITERATIONS // 2 if weaker else KILL_ITERATIONS).wait()
                ok = nxt.code == 0
                full = ok and not weaker
        elif kind == "reset":
            nxt = start_victim(box, db, v).wait()
            ok = nxt.code == 0
            full = ok and after.state == "Activated"
        elif after.state != "Activated":
            problems.append(f"a login made the device {after.state}")
        elif kind == "login":
            nxt = start_victim(box, db, v).wait()
            ok = full = nxt.code == 0 and nxt.stdout.startswith(WELCOME)
        else:
            nxt = start_victim(box, db, v).wait()
            ok = full = nxt.code == 1 and INVALID in nxt.stderr
        if nxt is not None and not ok:
            problems.append(f"next `{v.args[0]}`: {nxt.brief()}")
        if nxt is not None and full:
            durations[kind].append(nxt.seconds)
        if problems:
            failures[kind].append(f"{where}: {'; '.join(problems)}")

    total = sum(runs.values())
    for kind in kinds:
        assert (not failures[kind] and runs[kind] > 0), (
            (f"SIGKILL during `{' '.join(victim(kind, 'alice').args[:1])}`"
            f"{' (wrong password)' if kind == 'login-wrong' else ''}: consistent after every kill,"
            " next command works") + ': '
            + kill_tally(runs[kind], landed[kind], committed[kind], failures[kind]))
    assert (total > 0 and sum(landed.values()) * 4 >= total), (
        ("kills landed mid-run in at least a quarter of the runs") + ': '
        + (f"{sum(landed.values())} of {total} (seed {knobs.seed}; {fresh_files} on a new file,"
        f" {empty_files} left an empty file)"))
