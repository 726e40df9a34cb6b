"""12 `user add` released at one moment (all blocked on standard input, then fed): with 12
names all 12 are added, each says "Account added: NAME." and is logged once; with one name
exactly one is added, 11 exit 1 "User name NAME is already taken!" (no raw SQLite text, no
"locked" or "busy"), one account_added event. The file is consistent after each round.
"""

from __future__ import annotations

from runner import PASSWORD, RACE_ITERATIONS, RACERS, RAW_SQLITE, Gate, Result, Sandbox, \
    Started, mentions, released_at_once, user_add_args
from sqlite_store import events_since, inspect, last_event_id, setup_accounts


ADD_RACE_ROUNDS = 2

def add_race(box: Sandbox, db: str, names: list[str]) -> tuple[list[Result], str]:
    """len(names) `user add` released at one moment (all blocked on stdin, then fed)."""
    gate = Gate()
    procs = [Started(box, user_add_args(name, f"Racer {i}"), db, RACE_ITERATIONS,
                     stdin_pipe=True, gate=gate) for i, name in enumerate(names)]
    return released_at_once(gate, procs, [PASSWORD] * len(procs))


def test_user_add_race_with_distinct_names_adds_every_one(box):
    db = box.db("add-race")
    setup_accounts(box, db, "user add race", [], RACE_ITERATIONS)
    wrong: list[str] = []
    problems: list[str] = []
    hows: set[str] = set()
    for n in range(ADD_RACE_ROUNDS):
        names = [f"racer{n}_{i:02d}" for i in range(RACERS)]
        before, last = inspect(db), last_event_id(db)
        results, how = add_race(box, db, names)
        hows.add(how)
        for name, r in zip(names, results):
            if (r.code, r.stdout, r.stderr) != (0, f"Account added: {name}.\n", ""):
                wrong.append(f"round {n + 1} {name}: {r.brief()}")
        after = inspect(db)
        added = sorted(set(after.accounts) - set(before.accounts))
        logged = sorted(key for kind, key, _ in events_since(db, last) if kind == "account_added")
        if added != sorted(names) or logged != sorted(names) or len(after.accounts) != len(
                before.accounts) + RACERS:
            problems.append(f"round {n + 1}: {len(after.accounts)} accounts (expected "
                            f"{len(before.accounts) + RACERS}), {len(added)} new, "
                            f"{len(logged)} account_added events")
        problems += [f"round {n + 1}: {p}" for p in after.problems]
    assert (not wrong), (
        (f"{RACERS} simultaneous `user add` with {RACERS} names ({ADD_RACE_ROUNDS} rounds): "
        f"every one says 'Account added: NAME.', exit 0") + ': '
        + (f"barrier: {'; '.join(sorted(hows))}"
        + (f"; {len(wrong)} wrong: {wrong[:3]}" if wrong else "")))
    assert (not problems), (
        (f"exactly {RACERS} new accounts ({RACERS + 1} with the owner after the first "
        "round), each logged once; database consistent") + ': ' + ("; ".join(problems[:3])))



def test_user_add_race_with_one_name_adds_it_once(box):
    db = box.db("add-race")
    setup_accounts(box, db, "user add race", [], RACE_ITERATIONS)
    wrong: list[str] = []
    problems: list[str] = []
    noisy: list[str] = []
    hows: set[str] = set()
    for n in range(ADD_RACE_ROUNDS):
        name = f"samename{n}"
        before, last = inspect(db), last_event_id(db)
        results, how = add_race(box, db, [name] * RACERS)
        hows.add(how)
        winners = [r for r in results if r.code == 0]
        taken = [r for r in results
                 if r.code == 1 and f"User name {name} is already taken!" in r.stderr]
        if (len(winners) != 1 or winners[0].stdout != f"Account added: {name}.\n"
                or len(taken) != RACERS - 1):
            wrong.append(f"round {n + 1}: {len(winners)} exit 0, {len(taken)} exit 1 taken; "
                         + "; ".join(r.brief() for r in results
                                     if r not in taken and r not in winners[:1])[:400])
        noisy += [f"round {n + 1}: {r.brief()}" for r in results
                  if mentions(r.text, ("locked", "busy") + RAW_SQLITE)]
        after = inspect(db)
        logged = [key for kind, key, _ in events_since(db, last) if kind == "account_added"]
        if set(after.accounts) - set(before.accounts) != {name} or logged != [name]:
            problems.append(f"round {n + 1}: new accounts "
                            f"{sorted(set(after.accounts) - set(before.accounts))}, "
                            f"account_added events {logged}")
        problems += [f"round {n + 1}: {p}" for p in after.problems]
    assert (not wrong and not noisy), (
        (f"{RACERS} simultaneous `user add` of one name ({ADD_RACE_ROUNDS} rounds): exactly one "
        f"says 'Account added: NAME.', {RACERS - 1} exit 1 'User name NAME is already taken!'") + ': '
        + (f"barrier: {'; '.join(sorted(hows))}"
        + (f"; {len(wrong)} wrong: {wrong[:2]}" if wrong else "")
        + (f"; raw SQLite, 'locked' or 'busy' in: {noisy[:2]}" if noisy else "")))
    assert (not problems), (
        ("exactly one new account and one account_added event; database consistent") + ': '
        + ("; ".join(problems[:3])))
