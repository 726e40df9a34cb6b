"""A TOTP code across hosts: `2fa enable` on host-00 (its otpauth URI names the store's database,
whichever host enrolled, no key file made: the server keeps the secret); a code accepted on host-1 is refused on host-2 (login: "already
used") and host-3 (verify); 12 hosts racing one fresh code (as the SQLite race: the password
and the code at once, or the code released once all 12 read the password): exactly one exits
0, one session row (the winner's file names it), last_step is the step, every replay logged,
one lockout.

The store is PostgreSQL, shared by many hosts (see hosts.py: each client its own UTS and
network namespace, host name, HOME and session file; no key file anywhere). The owner makes
the schema and gives a fleet's roles their rights; then the clients name the store
`postgresql://ROLE@/DB?host=SOCKET&port=N`, a host's commands as the host role and the
administrator's as the administrator role (pg_store.pg_setup); PBKDF2 costs 1,000 iterations
(20,000 in the activation race). The database is read with psql, one statement per snapshot.
"""

from __future__ import annotations

import collections
import re

from hosts import HostProc
from pg_store import (PgContext, new_database, pg_clear_throttle, pg_code, pg_enable_2fa,
                      pg_events_since, pg_last_event, pg_last_step, pg_prepare_step,
                      pg_problems, pg_sessions, pg_setup, pg_snapshot, raw_pg)
from runner import (AUTHORIZED, PASSWORD, RACERS, REPLAYED, Gate, code_round, enabled_ok,
                    judge_code_race, login_args)
from client_files import read_session_file, token_hash


def test_a_code_used_on_one_host_is_refused_on_the_others(pg: PgContext, knobs):
    server, hosts = pg.server, pg.hosts
    db, uri = new_database(server, "m_totp")
    admin = hosts.host("host-00")
    name = "tess"
    welcome = f"Welcome back Added {name}!"
    pg_setup(pg, uri, admin, "m", [name])
    r, secret = pg_enable_2fa(pg, admin, uri, name)
    key_made = hosts.key_file.exists()
    uri_host = re.search(r"^URI: otpauth://totp/accounts:[^?]*%40([^?]+)\?", r.stdout, re.M)
    assert (enabled_ok(r, name) and bool(secret) and not key_made
        and uri_host is not None and uri_host.group(1) == db), (
        "`2fa enable` on host-00 (password, then the code of the key shown): on, 10 recovery "
        "codes; no ACCOUNTS_KEY_FILE made (the server keeps the secret); the otpauth URI names "
        f"the store's database {db}, not the host: " + r.brief()
        + f"; key file {'made' if key_made else 'none'}"
        + f"; URI names {uri_host.group(1) if uri_host else None}")
    if not enabled_ok(r, name) or not secret:
        return

    # The same code on three hosts, one after another.
    h1, h2, h3 = (hosts.host(f"host-{i}") for i in (1, 2, 3))
    before = pg_last_event(server, db)
    step, code = pg_code(pg, db, name, secret)
    first = hosts.run(h1, login_args(name), uri, f"{PASSWORD}\n{code}\n")
    second = hosts.run(h2, login_args(name), uri, f"{PASSWORD}\n{code}\n")
    third = hosts.run(h3, ["verify", "--username", name, "--password-stdin"], uri,
                      f"{PASSWORD}\n{code}\n")
    snap = pg_snapshot(server, db)
    events = pg_events_since(snap, before)
    successes = [e for e in events if e["kind"] == "login_success"]
    replays = [e for e in events if e["kind"] == "login_failure"
               and e["detail"] == "verification code replayed"]
    file1, bad1 = read_session_file(h1.state, hosts.host_uri(uri))
    file2, _ = read_session_file(h2.state, hosts.host_uri(uri))
    last = pg_last_step(server, db, name)
    assert (first.code == 0 and first.stdout.startswith(welcome) and AUTHORIZED in first.stderr
        and second.code == 1 and REPLAYED in second.stderr and third.code == 1
        and not any(raw_pg(x) for x in (first, second, third))), (
        ("a TOTP code accepted on host-1 (exit 0, 'You are successfully authorized.') is refused "
        "on host-2 by login (exit 1 'That code was already used; wait for the next one.') and on "
        "host-3 by verify (exit 1)") + ': '
        + (f"host-1 {first.brief()}; host-2 {second.brief()}; host-3 {third.brief()}"))
    assert (last == step and len(successes) == 1 and len(replays) == 2 and file2 is None
        and not bad1 and token_hash(file1) in pg_sessions(snap) and not pg_problems(snap)), (
        ("last_step is the code's step; one login_success, 2 failures 'verification code "
        "replayed'; host-1's session file names a stored session, host-2 has none; store whole") + ': '
        + (f"last_step {last} (step {step}), {len(successes)} successes, {len(replays)} replays "
        f"logged, host-1 file {'ok' if token_hash(file1) in pg_sessions(snap) else bad1 or 'names no session'}"
        f", host-2 file {'absent' if file2 is None else 'present'}"
        + (f"; {pg_problems(snap)}" if pg_problems(snap) else "")))

    # 12 hosts racing the same fresh code.
    wrong: list[str] = []
    broken: list[str] = []
    answers = collections.Counter()
    hows: set[str] = set()
    for n in range(knobs.pg_factor_race_rounds):
        mode = "password and code at once" if n % 2 == 0 else "code released at once"
        pg_clear_throttle(server, db, name)
        pg_prepare_step(server, db, name)
        last_before = pg_last_step(server, db, name)
        snap = pg_snapshot(server, db)
        sessions_before, before = pg_sessions(snap), pg_last_event(server, db)
        racers = [hosts.host(f"host-{k + 1:02d}") for k in range(RACERS)]
        gate = Gate()
        procs = [HostProc(hosts, h, login_args(name), uri, stdin_pipe=True, gate=gate)
                 for h in racers]
        gate.open()
        step, how, results = code_round(procs, mode, secret, last_before)
        hows.add(f"{mode}: {how}")
        where = f"round {n + 1} ({mode}, step {step})"
        winners = judge_code_race(results, welcome, where, answers, wrong, raw_pg,
                                  lambda k: f"host-{k + 1:02d}")
        snap = pg_snapshot(server, db)
        problems = pg_problems(snap)
        now_step = pg_last_step(server, db, name)
        if now_step != step:
            problems.append(f"last_step {now_step}, the accepted step is {step}")
        after = pg_sessions(snap)
        new = {h: row for h, row in after.items() if h not in sessions_before}
        if len(new) != 1 or any(row[1:] != (name, True) for row in new.values()):
            problems.append(f"{len(new)} session rows added: {[row[1:] for row in new.values()]}")
        events = pg_events_since(snap, before)
        if sum(1 for e in events if e["kind"] == "login_success") != 1:
            problems.append(f"{sum(1 for e in events if e['kind'] == 'login_success')} login_success")
        for k, h in enumerate(racers):
            text, bad = read_session_file(h.state, hosts.host_uri(uri))
            problems += [f"host-{k + 1:02d}: {b}" for b in bad]
            if k in winners and len(winners) == 1 and token_hash(text) not in new:
                problems.append("the winner's session file names no new session")
            elif k not in winners and text is not None:
                problems.append(f"host-{k + 1:02d} (exit {results[k].code}) has a session file")
        replays_logged = sum(1 for e in events if e["kind"] == "login_failure"
                             and e["detail"] == "verification code replayed")
        replays_told = sum(1 for r in results if r.code == 1 and REPLAYED in r.stderr)
        locks = [e for e in events if e["kind"] == "lockout"]
        if replays_logged < replays_told or len(locks) != 1:
            problems.append(f"{replays_told} told 'already used', {replays_logged} logged "
                            f"'verification code replayed', {len(locks)} lockout events")
        broken += [f"{where}: {p}" for p in problems]
    assert (not wrong), (
        (f"{RACERS} `login` of one account with 2FA on, from {RACERS} hosts at once, the right "
        f"password and the same fresh TOTP code ({knobs.pg_factor_race_rounds} rounds): exactly one "
        "exits 0, the others exit 1 'That code was already used; wait for the next one.' or 4 "
        "(locked)") + ': ' + (f"{dict(answers)}; barrier: {'; '.join(sorted(hows))}"
        + (f"; {len(wrong)} wrong: {wrong[:3]}" if wrong else "")))
    assert (not broken), (
        ("last_step is the accepted step, one session row added (the winner's session file "
        "names it, no other host has one), one login_success, every replay logged, one lockout; "
        "store whole") + ': ' + ("; ".join(broken[:4])))
