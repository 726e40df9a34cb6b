"""Failed logins from several hosts add up to one lockout (LockoutPolicy.standard: 5): 3 hosts
in turn, 2 wrong passwords each -> exits 1,1,1,1,4,4 and the right password refused (4); the
log has 5 counted failures, one lockout, 2 refusals; `unlock` on one host frees the name on
another; then 3 hosts x 4 wrong passwords at once -> 4 exit 1, 8 exit 4, one lockout, 7
refusals.

The store is PostgreSQL, shared by many hosts (see hosts.py: each client its own UTS and
network namespace, host name, HOME and session file; one shared key file). The owner makes
the schema and gives a fleet's roles their rights; then the clients name the store
`postgresql://ROLE@/DB?host=SOCKET&port=N`, a host's commands as the host role and the
administrator's as the administrator role (pg_store.pg_setup); PBKDF2 costs 1,000 iterations
(20,000 in the activation race). The database is read with psql, one statement per snapshot.
"""

from __future__ import annotations

import collections

from hosts import HostProc
from pg_store import (PgContext, new_database, pg_events_since, pg_last_event, pg_problems,
                      pg_setup, pg_snapshot, raw_pg)
from runner import (INVALID, PASSWORD, TOO_MANY, WRONG_PASSWORD, Gate, login_args,
                    released_at_once)


def test_failed_logins_from_several_hosts_add_up_to_one_lockout(pg: PgContext):
    server, hosts = pg.server, pg.hosts
    threshold = 5  # LockoutPolicy.standard (Sources/AccountsCore/Domain/Account.swift)
    db, uri = new_database(server, "l_lockout")
    admin = hosts.host("host-00")
    name = "lou"
    pg_setup(pg, uri, admin, "l", [name])
    three = [hosts.host(f"host-{i}") for i in (1, 2, 3)]

    def tally(snap: dict | None) -> dict:
        return next((t for t in (snap or {}).get("throttle", []) if t["key"] == name), {})

    def counted(events: list[dict]) -> collections.Counter:
        c = collections.Counter()
        for e in events:
            if e["key"] != name:
                continue
            c[e["kind"] if e["kind"] != "login_failure" else f"failure: {e['detail']}"] += 1
        return c

    # One at a time, the three hosts in turn, two wrong passwords each (none reaches 5 alone).
    before = pg_last_event(server, db)
    results = [hosts.run(three[k % 3], login_args(name), uri, WRONG_PASSWORD + "\n")
               for k in range(6)]
    right = hosts.run(three[0], login_args(name), uri, PASSWORD + "\n")
    snap = pg_snapshot(server, db)
    expected = [1] * (threshold - 1) + [4, 4]
    codes = [r.code for r in results]
    answers_ok = (codes == expected and all(INVALID in r.stderr for r in results[:threshold])
                  and all(TOO_MANY in r.stderr for r in results[threshold - 1:])
                  and right.code == 4 and TOO_MANY in right.stderr
                  and not any(raw_pg(r) for r in results + [right]))
    events = counted(pg_events_since(snap, before))
    wanted = {"failure: invalid user name or password": threshold, "lockout": 1, "failure: locked": 2}
    t = tally(snap)
    assert (answers_ok), (
        (f"6 wrong passwords for one name from 3 hosts in turn (2 each): exits {expected}, the "
        f"lock comes at the {threshold}th in total; then the right password on host-1 is refused "
        "(exit 4)") + ': ' + (f"exits {codes}, right password: {right.brief()}"
        + ("" if answers_ok else f"; {[r.brief() for r in results]}")))
    assert (dict(events) == wanted and t.get("locked") is True and t.get("lockouts") == 1
        and not pg_problems(snap)), (
        (f"the log shows {threshold} failures 'invalid user name or password', one lockout, "
        "2 refusals 'locked'; one tally, locked, one lockout earned; the store whole") + ': '
        + (f"events {dict(events)}, tally {t}" + (f"; {pg_problems(snap)}" if pg_problems(snap) else "")))
    unlocked = hosts.run(three[1], ["unlock", name], uri)
    after = hosts.run(three[2], login_args(name), uri, PASSWORD + "\n")
    assert (unlocked.code == 0 and after.code == 0 and after.stdout.startswith(f"Welcome back Added {name}!")), (
        ("`unlock` on host-2 frees the name for host-3: the right password logs in") + ': '
        + (f"unlock {unlocked.brief()}; login {after.brief()}"))

    # At once: 3 hosts x 4 wrong passwords (12 clients released together).
    before = pg_last_event(server, db)
    gate = Gate()
    procs = [HostProc(hosts, three[k % 3], login_args(name) + ["--no-session"], uri,
                      stdin_pipe=True, gate=gate) for k in range(12)]
    results, how = released_at_once(gate, procs, [WRONG_PASSWORD] * len(procs))
    snap = pg_snapshot(server, db)
    codes = collections.Counter(r.code for r in results)
    bad = [r.brief() for r in results if not (
        (r.code == 1 and INVALID in r.stderr and TOO_MANY not in r.stderr)
        or (r.code == 4 and TOO_MANY in r.stderr)) or raw_pg(r)]
    assert (codes == {1: threshold - 1, 4: 12 - threshold + 1} and not bad), (
        (f"12 wrong passwords for one name released at once from 3 hosts (4 each): "
        f"{threshold - 1} exit 1 'Invalid user name or password!', {12 - threshold + 1} exit 4 "
        "'Too many failed attempts'") + ': '
        + (f"exits {dict(codes)}; barrier: {how}" + (f"; wrong: {bad[:3]}" if bad else "")))
    events = counted(pg_events_since(snap, before))
    wanted = {"failure: invalid user name or password": threshold, "lockout": 1,
              "failure: locked": 12 - threshold}
    t = tally(snap)
    assert (dict(events) == wanted and t.get("locked") is True and t.get("lockouts") == 1
        and not pg_problems(snap)), (
        (f"the log shows {threshold} failures counted, exactly one lockout, "
        f"{12 - threshold} refusals 'locked'; the name locked once; the store whole") + ': '
        + (f"events {dict(events)}, tally {t}" + (f"; {pg_problems(snap)}" if pg_problems(snap) else "")))
