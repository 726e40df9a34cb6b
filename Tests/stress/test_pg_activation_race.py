"""12 `activate` on 12 hosts released at one moment (all blocked on standard input, then fed),
twice on a new database (no schema yet: the race also creates it) and twice on a Public store
(activated, then reset): exactly one exits 0 "Device activated for NAME.", 11 exit 1 "already
activated"; one activation event, the winner is the owner and the only account, the store
whole; the owner logs in from a 13th host.

The store is PostgreSQL, shared by many hosts (see hosts.py: each client its own UTS and
network namespace, host name, HOME and session file; one shared key file). The clients name
the store `postgresql://postgres@/DB?host=SOCKET&port=N`; PBKDF2 costs 1,000 iterations
(20,000 in the activation race). The database is read with psql, one statement per snapshot.
"""

from __future__ import annotations

import collections
import re

from hosts import HostProc
from pg_store import (PgContext, new_database, pg_activate_args, pg_events_since, pg_last_event,
                      pg_problems, pg_snapshot, pg_state, raw_pg)
from runner import ALREADY, PASSWORD, RACERS, Gate, login_args, released_at_once


PG_RACE_ITERATIONS = 20_000  # the activation race: the 12 hashes overlap before the write

def test_one_of_twelve_hosts_activates_the_store(pg: PgContext):
    server, hosts = pg.server, pg.hosts
    plans = [("a new database, no schema yet", True)] * 2 + [
        ("a Public store, activated then reset", False)] * 2
    wrong: list[str] = []
    broken: list[str] = []
    hows: set[str] = set()
    answers = collections.Counter()
    for n, (label, fresh) in enumerate(plans):
        db, uri = new_database(server, "k_activation")
        where = f"round {n + 1} ({label})"
        admin = hosts.host("host-00")
        if not fresh:
            made = [hosts.run(admin, pg_activate_args("first"), uri, PASSWORD + "\n"),
                    hosts.run(admin, ["reset", "--yes"], uri)]
            if any(r.code != 0 for r in made):
                broken.append(f"{where}: setting up: {[r.brief() for r in made]}")
                continue
        before = pg_last_event(server, db)
        names = [f"user{i:02d}" for i in range(RACERS)]
        gate = Gate()
        procs = [HostProc(hosts, hosts.host(f"host-{i + 1:02d}"), pg_activate_args(name), uri,
                          PG_RACE_ITERATIONS, stdin_pipe=True, gate=gate)
                 for i, name in enumerate(names)]
        results, how = released_at_once(gate, procs, [PASSWORD] * len(procs))
        hows.add(how)
        winners = [names[k] for k, r in enumerate(results) if r.code == 0]
        for k, r in enumerate(results):
            said = (r.stdout + r.stderr).strip().splitlines()
            first = re.sub(r"user[0-9]+", "NAME", said[0].replace(uri, "URI")) if said else ""
            answers[f"{'new database' if fresh else 'Public store'}: exit {r.code} {first}"] += 1
            if r.code == 0:
                ok = r.stdout.strip() == f"Device activated for {names[k]}." or \
                    f"Device activated for {names[k]}." in r.text
            else:
                ok = r.code == 1 and ALREADY in r.stderr.lower()
            if not ok or raw_pg(r):
                wrong.append(f"{where} host-{k + 1:02d}: {r.brief()}")
        if len(winners) != 1:
            wrong.insert(0, f"{where}: {len(winners)} exit 0")
        snap = pg_snapshot(server, db)
        problems = pg_problems(snap)
        state, owner = pg_state(snap)
        activations = [e for e in pg_events_since(snap, before) if e["kind"] == "activation"]
        if state != "Activated" or len(activations) != 1 or snap["account_count"] != 1 or (
                len(winners) == 1 and (owner != winners[0] or activations[0]["key"] != owner)):
            problems.append(f"state {state}, owner {owner}, {snap['account_count'] if snap else 0} "
                            f"accounts, activation events {[e['key'] for e in activations]}")
        if owner:
            r = hosts.run(hosts.host("host-13"), login_args(owner), uri, PASSWORD + "\n")
            if r.code != 0 or not r.stdout.startswith(f"Welcome back User {owner}!"):
                problems.append(f"the owner's login from another host: {r.brief()}")
        broken += [f"{where}: {p}" for p in problems]
    assert (not wrong), (
        (f"{RACERS} `accounts activate` on {RACERS} hosts released at one moment "
        f"({len(plans)} rounds: 2 on a new database, 2 on a Public store): exactly one exits 0 "
        "'Device activated for NAME.', the others exit 1 'already activated'") + ': '
        + (f"answers {dict(answers)}; barrier: {'; '.join(sorted(hows))}"
        + (f"; {len(wrong)} wrong: {wrong[:2]}" if wrong else "")))
    assert (not broken), (
        ("one activation event, the winner is the owner and the only account, the store "
        "whole, the owner logs in from a 13th host") + ': ' + ("; ".join(broken[:4])))
