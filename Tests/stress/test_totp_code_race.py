"""12 `login --username U --password-stdin` of one account with 2FA on, all blocked on
standard input, then fed the right password and the same TOTP code (computed by pyotp, RFC
6238), either both lines at once or the code released only once all 12 have read the password
and wait for it (no prompt at a pipe: each stdin pipe drained, each reading): exactly one exits
0 "Welcome back", the others exit 1 "That code was already used; wait for the next one." or 4
(locked: replays count toward the lockout, 11 in a row lock the account);
second_factor.last_step is the accepted step; exactly one session row added, named by the
winner's session file; one login_success; integrity_check ok. Each round types the code of
the next step (within the +-1 window) or, when that one is used already, sets last_step back
with sqlite3 and types the current one; login_throttle is cleared with sqlite3 between rounds.
Each client has its own XDG_STATE_HOME (its session file).
"""

from __future__ import annotations

import collections

from runner import (RACE_ITERATIONS, RACERS, RAW_SQLITE, REPLAYED, Gate, Started, code_round,
                    enable_2fa, enabled_ok, judge_code_race, login_args, mentions)
from client_files import read_session_file, token_hash
from sqlite_store import (clear_throttle, events_since, inspect, last_event_id, last_step,
                          now_text, prepare_step, scalar, sessions, setup_accounts)


def test_one_totp_code_raced_by_twelve_logins_admits_one(box, knobs):
    db = box.db("factor-race")
    name = "tess"
    welcome = f"Welcome back Added {name}!"
    setup_accounts(box, db, "i", [name], RACE_ITERATIONS)
    r, secret = enable_2fa(box, db, name, box.root / "i-setup", RACE_ITERATIONS)
    assert not (not enabled_ok(r, name) or not secret), (
        ("setting up: `2fa enable` (password, then the code of the key shown)") + ': '
        + (r.brief() + ("" if secret else "; no 'Key: ' line on stdout before "
                                    "the code was asked for")))
    wrong: list[str] = []
    broken: list[str] = []
    unlocked: list[str] = []
    hows: set[str] = set()
    answers = collections.Counter()
    rounds = set_back = 0
    for n in range(knobs.factor_race_rounds):
        rounds += 1
        # Odd rounds feed the password and the code at once; even ones release the code only
        # when all 12 have checked the password and wait for it (a tighter race on the step).
        mode = "password and code at once" if n % 2 == 0 else "code released at once"
        clear_throttle(db, name)
        set_back += prepare_step(db, name)
        last_before = last_step(db, name)
        sessions_before, last = sessions(db), last_event_id(db)
        states = [box.root / f"i-client-{n}-{k}" for k in range(RACERS)]
        gate = Gate()
        procs = [Started(box, login_args(name), db, RACE_ITERATIONS, stdin_pipe=True, gate=gate,
                         state=state) for state in states]
        gate.open()
        step, how, results = code_round(procs, mode, secret, last_before)
        hows.add(f"{mode}: {how}")
        where = f"round {n + 1} ({mode}, step {step})"

        winners = judge_code_race(results, welcome, where, answers, wrong,
                                  lambda r: mentions(r.text, RAW_SQLITE), lambda k: f"login {k}")

        problems = list(inspect(db).problems)
        now_step = last_step(db, name)
        if now_step != step:
            problems.append(f"last_step {now_step}, the accepted step is {step}")
        after = sessions(db)
        new = {h: row for h, row in after.items() if h not in sessions_before}
        if len(new) != 1 or any(row[1:] != (name, 1) for row in new.values()):
            problems.append(f"{len(new)} session rows added: {[row[1:] for row in new.values()]}")
        events = events_since(db, last)
        successes = [e for e in events if e[0] == "login_success"]
        if len(successes) != 1:
            problems.append(f"{len(successes)} login_success events")
        for k, state in enumerate(states):
            text, bad = read_session_file(state, db)
            problems += [f"client {k}: {b}" for b in bad]
            if k in winners:
                if len(winners) == 1 and (text is None or token_hash(text) not in list(new)):
                    problems.append(f"the winner's session file {'is missing' if text is None else 'names no new session'}")
            elif text is not None:
                problems.append(f"client {k} (exit {results[k].code}) has a session file")
        broken += [f"{where}: {b}" for b in problems]

        replays_logged = sum(1 for kind, key, detail in events if kind == "login_failure"
                             and key == name and detail == "verification code replayed")
        replays_told = sum(1 for r in results if r.code == 1 and REPLAYED in r.stderr)
        locked_until = scalar(db, "SELECT locked_until FROM login_throttle WHERE username_key = ?",
                              (name,)) if scalar(db, "SELECT count(*) FROM login_throttle WHERE "
                                                 "username_key = ?", (name,)) else None
        locks = sum(1 for r in results if r.code == 4)
        if (replays_logged < replays_told or not locks or not isinstance(locked_until, str)
                or locked_until <= now_text()):
            unlocked.append(f"{where}: {replays_told} told 'already used', {replays_logged} "
                            f"logged 'verification code replayed', {locks} exit 4, "
                            f"locked_until {locked_until}")
    assert (not wrong and rounds > 0), (
        (f"{RACERS} simultaneous `login` of one account with 2FA on, the right password and the "
        f"same TOTP code ({rounds} rounds): exactly one exits 0 'Welcome back', the others exit 1 "
        "'That code was already used; wait for the next one.' or 4 (locked)") + ': '
        + (f"{dict(answers)}; barrier: {'; '.join(sorted(hows))}; {set_back} rounds set last_step "
        f"back with sqlite3, {rounds - set_back} used the next step"
        + (f"; {len(wrong)} wrong: {wrong[:3]}" if wrong else "")))
    assert (not broken and rounds > 0), (
        ("second_factor.last_step is the accepted step, exactly one session row added (the "
        "winner's session file, whole, names it; no other client has one), one login_success; "
        "integrity_check ok") + ': ' + ("; ".join(broken[:4])))
    assert (not unlocked and rounds > 0), (
        ("the replays count toward the lockout: each 'already used' logged as login_failure "
        "'verification code replayed'; after 11 in a row the account is locked") + ': '
        + ("; ".join(unlocked[:3])))
