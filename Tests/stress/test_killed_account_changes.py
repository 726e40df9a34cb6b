"""`user add`, `user remove NAME --yes`, `user passwd NAME --password-stdin`, `passwd` and
`user edit NAME --full-name X` killed with SIGKILL at random moments: after each kill
integrity_check ok, foreign_key_check empty, the file consistent, every account row whole, the
change stored if and only if its event is logged (and the log's accounts are the rows), nothing
else changed (a password change leaves exactly one of the two passwords working), and the same
command run again answers as it should; the owner still logs in. At least a quarter of the
kills land while the command runs.

Half the kills come anywhere in the run, half near its end; the moments follow the commands'
typical durations, measured on a file of their own and kept up to date. The moment is the
randomness: any moment must leave the store whole.
"""

from __future__ import annotations

import collections
import random
from dataclasses import dataclass

from kills import kill_after, kill_moment, kill_tally, show_typical_durations
from runner import (KILL_ITERATIONS, OTHER_PASSWORD, PASSWORD, Result, Sandbox, Started, login,
                    passwd_stdin, run, user_add_args)
from sqlite_store import (Snapshot, events_since, hash_matches, inspect, last_event_id,
                          setup_accounts, whole_hash)


ACCOUNT_KINDS = ("user add", "user remove", "user passwd", "passwd", "user edit")


@dataclass
class AccountVictim:
    kind: str
    name: str  # the account's user name (= key: the names here are lowercase ASCII)
    args: list[str]
    stdin: str | None
    old: str = ""  # password or full name before
    new: str = ""  # password or full name it asks for


def account_victim(kind: str, name: str, passwords: dict[str, str],
                   full_names: dict[str, str]) -> AccountVictim:
    if kind == "user add":
        return AccountVictim(kind, name, user_add_args(name), PASSWORD + "\n", "", PASSWORD)
    if kind == "user remove":
        return AccountVictim(kind, name, ["user", "remove", name, "--yes"], None)
    old = passwords.get(name, PASSWORD)
    new = OTHER_PASSWORD if old == PASSWORD else PASSWORD
    if kind == "user passwd":
        return AccountVictim(kind, name, ["user", "passwd", name, "--password-stdin"],
                             new + "\n", old, new)
    if kind == "passwd":
        return AccountVictim(kind, name, ["passwd"], passwd_stdin(name, old, new), old, new)
    old = full_names.get(name, f"Added {name}")
    new = "Edited Once" if old != "Edited Once" else "Edited Twice"
    return AccountVictim(kind, name, ["user", "edit", name, "--full-name", new], None, old, new)


def start_account_victim(box: Sandbox, db: str, v: AccountVictim) -> Started:
    p = Started(box, v.args, db, KILL_ITERATIONS, stdin_pipe=v.stdin is not None)
    if v.stdin is not None:
        p.feed(v.stdin)
        p.close_stdin()
    return p


EVENT_OF = {"user add": "account_added", "user remove": "account_removed",
            "user passwd": "password_set", "passwd": "password_changed",
            "user edit": "account_edited"}


def judge_account_kill(v: AccountVictim, before: Snapshot, after: Snapshot,
                       events: list[tuple[str, str | None, str | None]]) -> tuple[bool, list[str]]:
    """(whether the victim's write committed, problems): its change is in the rows if and only
    if its event is in the log, nothing else changed, and a password change leaves exactly one
    of the two passwords working."""
    problems: list[str] = []
    expected = EVENT_OF[v.kind]
    logged = [e for e in events if e[0] == expected and e[1] == v.name]
    others = [e for e in events if e not in logged]
    if others or len(logged) > 1:
        problems.append(f"unexpected events {events}")
    was, now = before.accounts.get(v.name), after.accounts.get(v.name)
    if v.kind == "user add":
        changed = was is None and now is not None
        if now is not None and not hash_matches(now["password_hash"], v.new):
            problems.append("the added account's password does not match")
    elif v.kind == "user remove":
        changed = was is not None and now is None
    elif was is None or now is None:
        return False, problems + [f"{v.name} was {'missing' if was is None else 'removed'}"]
    elif v.kind == "user edit":
        changed = now["full_name"] != was["full_name"]
        if now["full_name"] not in (v.old, v.new):
            problems.append(f"full name {now['full_name']!r}")
    else:
        changed = now["password_hash"] != was["password_hash"]
        if not whole_hash(now["password_hash"]):
            old_works = hash_matches(now["password_hash"], v.old)
            new_works = hash_matches(now["password_hash"], v.new)
            if old_works == new_works or new_works != changed:
                problems.append(f"old password works: {old_works}, new: {new_works}, hash "
                                f"{'changed' if changed else 'unchanged'}")
    if changed != bool(logged):
        problems.append(f"{'changed' if changed else 'unchanged'} but "
                        f"{'logged' if logged else 'not logged'} ({expected})")
    for key in set(before.accounts) | set(after.accounts):
        if key != v.name and before.accounts.get(key) != after.accounts.get(key):
            problems.append(f"another account changed: {key}")
    return changed, problems


def next_account_command(box: Sandbox, db: str, v: AccountVictim, committed: bool,
                         passwords: dict[str, str]) -> tuple[Result, bool]:
    """The same command run to its end (a password change from the password that works now);
    (its result, whether it answered as it should)."""
    n = v.name
    if v.kind == "passwd":
        current = v.new if committed else v.old
        target = v.old if committed else v.new
        r = run(box, ["passwd"], db, stdin=passwd_stdin(n, current, target))
        return r, (r.code, r.stdout) == (0, f"Password changed for {n}.\n")
    r = run(box, v.args, db, stdin=v.stdin)
    if v.kind == "user add":
        ok = ((r.code, r.stderr.strip()) == (1, f"User name {n} is already taken!") if committed
              else (r.code, r.stdout) == (0, f"Account added: {n}.\n"))
    elif v.kind == "user remove":
        ok = ((r.code, r.stderr.strip()) == (5, f"No account named {n}.") if committed
              else (r.code, r.stdout) == (0, f"Account removed: {n}.\n"))
    elif v.kind == "user passwd":
        ok = (r.code, r.stdout) == (0, f"Password set for {n}.\n")
    else:
        ok = (r.code, r.stdout) == (0, (f"Nothing to change for {n}.\n" if committed
                                        else f"Account edited: {n}.\n"))
    return r, ok


def test_killed_account_changes_are_stored_iff_logged(box, knobs):
    rng = random.Random(knobs.seed + 7)
    db = box.db("accounts-killed")
    initial = [f"acct{i:02d}" for i in range(1, 5)]
    setup_accounts(box, db, "g", initial)
    passwords = {name: PASSWORD for name in initial}
    full_names = {name: f"Added {name}" for name in initial}
    # Typical durations, measured on a file of its own, the way victims are started.
    timing_db = box.db("accounts-timing")
    setup_accounts(box, timing_db, "g timing", ["timed"])
    durations = {k: collections.deque(maxlen=9) for k in ACCOUNT_KINDS}
    timing_passwords: dict[str, str] = {}
    timing_names: dict[str, str] = {}
    for i in range(3):
        for kind in ("user add", "user passwd", "passwd", "user edit", "user remove"):
            name = "timed" if kind not in ("user add", "user remove") else f"timed{i}"
            v = account_victim(kind, name, timing_passwords, timing_names)
            r = start_account_victim(box, timing_db, v).wait()
            if r.code == 0:
                durations[kind].append(r.seconds)
            if kind in ("user passwd", "passwd") and r.code == 0:
                timing_passwords[name] = v.new
            if kind == "user edit" and r.code == 0:
                timing_names[name] = v.new
    missing = [k for k, d in durations.items() if not d]
    assert not (missing), (
        ("measuring the commands") + ': ' + (f"no run of {missing} succeeded"))
    show_typical_durations(durations)

    runs = {k: 0 for k in ACCOUNT_KINDS}
    landed = {k: 0 for k in ACCOUNT_KINDS}
    committed_mid = {k: 0 for k in ACCOUNT_KINDS}
    failures: dict[str, list[str]] = {k: [] for k in ACCOUNT_KINDS}
    added = 0
    # At least enough runs for each kind to be killed once.
    for n in range(max(knobs.account_kill_runs, 10)):
        before = inspect(db)
        if before.problems:
            failures["user add"].append(f"before run {n}: {before.problems}")
            break
        others = sorted(k for k in before.accounts if k != "owner")
        # Each kind once first (once there are accounts to change), so that every one is
        # killed whatever the seed.
        untried = [k for k in ACCOUNT_KINDS if not runs[k]]
        if len(others) < 2:
            kind = "user add"
        elif untried:
            kind = untried[0]
        elif len(others) > 8:
            kind = rng.choice(["user remove", "user passwd", "passwd", "user edit"])
        else:
            kind = rng.choice(ACCOUNT_KINDS)
        if kind == "user add":
            added += 1
            name = f"killed{added:03d}"
        else:
            name = rng.choice(others)
        v = account_victim(kind, name, passwords, full_names)
        last = last_event_id(db)
        delay = kill_moment(rng, durations[kind])
        p = start_account_victim(box, db, v)
        r, was_killed = kill_after(p, delay, durations[kind])
        runs[kind] += 1
        where = (f"run {n} `{' '.join(v.args[:3])}` killed at {delay * 1000:.1f} ms "
                 f"({'mid-run' if was_killed else 'after exit'})")
        after = inspect(db)
        changed, problems = judge_account_kill(v, before, after, events_since(db, last))
        problems = list(after.problems) + problems
        landed[kind] += was_killed
        committed_mid[kind] += was_killed and changed
        if not was_killed and not changed:
            problems.append(f"it ended without its change: {r.brief()}")
        # The next normal command: the same one, run to its end.
        nxt, ok = next_account_command(box, db, v, changed, passwords)
        if not ok:
            problems.append(f"next `{' '.join(v.args[:2])}`: {nxt.brief()}")
        # What the file holds now is what the next kill starts from.
        now = inspect(db)
        problems += [p for p in now.problems if p not in problems]
        row = now.accounts.get(name)
        if row is not None and kind in ("user add", "user passwd", "passwd"):
            passwords[name] = next((pw for pw in (PASSWORD, OTHER_PASSWORD)
                                    if hash_matches(row["password_hash"], pw)), "?")
        if row is not None:
            full_names[name] = row["full_name"]
        owner = login(box, db, "owner")
        if owner.code != 0:
            problems.append(f"the owner's login: {owner.brief()}")
        if problems:
            failures[kind].append(f"{where}: {'; '.join(problems)}")

    total = sum(runs.values())
    for kind in ACCOUNT_KINDS:
        assert (not failures[kind] and runs[kind] > 0), (
            (f"SIGKILL during `{kind}`: integrity, foreign keys, consistency, whole rows after "
            "every kill; the change is stored iff it is logged; next command works") + ': '
            + kill_tally(runs[kind], landed[kind], committed_mid[kind], failures[kind]))
    assert (total > 0 and sum(landed.values()) * 4 >= total), (
        ("kills landed mid-run in at least a quarter of the runs") + ': '
        + (f"{sum(landed.values())} of {total} (seed {knobs.seed})"))
