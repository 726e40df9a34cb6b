"""12 simultaneous logins, right and wrong passwords mixed, below the lockout threshold (5
right and 4 wrong for alice, 3 for unknown names), all released at one moment (blocked on
standard input, then fed): every one gets its own answer and exit code (no "busy", no raw
SQLite text), no write is lost (5 successes and 7 failures logged, no lock), and the file is
consistent after.
"""

from __future__ import annotations

import random

from runner import (INVALID, LOGIN_ITERATIONS, PASSWORD, RAW_SQLITE, TOO_MANY, WELCOME,
                    WRONG_PASSWORD, Gate, Started, activate, mentions, released_at_once)
from sqlite_store import consistent, scalar


def test_concurrent_logins_each_get_their_answer_and_lose_no_write(box, knobs):
    db = box.db("logins")
    setup = activate(box, db, "alice", LOGIN_ITERATIONS)
    assert not (setup.code != 0), (
        ("setting up") + ': ' + (setup.brief()))
    # 5 right and 4 wrong for alice (below the threshold of 5 whatever the order), and 3 for
    # unknown names (2 + 1, also below it).
    plan = ([("alice", PASSWORD, True)] * 5 + [("alice", WRONG_PASSWORD, False)] * 4
            + [("bob", WRONG_PASSWORD, False)] * 2 + [("carol", PASSWORD, False)])
    random.Random(knobs.seed).shuffle(plan)
    events_before = {
        kind: scalar(db, "SELECT count(*) FROM audit_event WHERE kind = ?", (kind,))
        for kind in ("login_success", "login_failure", "lockout")}
    gate = Gate()
    procs = [Started(box, ["login", "--username", name, "--password-stdin"], db,
                     LOGIN_ITERATIONS, stdin_pipe=True, gate=gate) for name, _, _ in plan]
    results, how = released_at_once(gate, procs, [password for _, password, _ in plan])
    wrong = []
    for (name, _, right), r in zip(plan, results):
        if right:
            ok = r.code == 0 and r.stdout.startswith(WELCOME)
        else:
            ok = r.code == 1 and INVALID in r.stderr and WELCOME not in r.stdout
        ok = ok and not mentions(r.text, ("busy", TOO_MANY.lower())) and not mentions(
            r.text, RAW_SQLITE)
        if not ok:
            wrong.append(f"{name}/{'right' if right else 'wrong'}: {r.brief()}")
    assert (not wrong), (
        (f"{len(plan)} simultaneous logins (5 right, 7 wrong) each get their own answer") + ': '
        + (f"barrier: {how}" + (f"; wrong answers: {wrong[:3]}" if wrong else "")))
    delta = {
        kind: scalar(db, "SELECT count(*) FROM audit_event WHERE kind = ?", (kind,))
        - events_before[kind] for kind in events_before}  # type: ignore[operator]
    locks = scalar(db, "SELECT count(*) FROM login_throttle WHERE locked_until IS NOT NULL")
    assert (delta == {"login_success": 5, "login_failure": 7, "lockout": 0} and locks == 0), (
        ("no write lost: 5 successes and 7 failures logged, no lock") + ': '
        + (f"logged {delta}, locked names {locks}"))
    problems, snap = consistent(box, db)
    assert (not problems and snap.state == "Activated"), (
        ("database consistent afterwards, login still works") + ': ' + ("; ".join(problems)))
