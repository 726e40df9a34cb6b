"""`passwd` racing `login` of the same account (the login rehashing half the time, which writes
the hash: the write that could bring an old password back), many rounds: passwd always says
the password changed, the login says "Welcome back" or "Invalid user name or password!", and
after every round exactly the new password works (checked against the stored hash, computed
here so that no login is tallied), the stored hash is whole, integrity_check ok; a login with
the password that works succeeds at the end.

The second command starts a random offset after the first, within their typical run time: the
offset is the randomness that spreads the two over each other's whole run; every interleaving
must give one of the answers above.
"""

from __future__ import annotations

import collections
import random
import statistics
import time

from runner import (INVALID, KILL_ITERATIONS, OTHER_PASSWORD, PASSWORD, Started, login,
                    passwd_stdin, run)
from sqlite_store import (events_since, hash_matches, inspect, last_event_id, scalar,
                          setup_accounts, stored_hash, whole_hash)


def test_passwd_racing_login_leaves_exactly_the_new_password(box, knobs):
    rng = random.Random(knobs.seed + 6)
    db = box.db("passwd-race")
    name = "pat"
    setup_accounts(box, db, "f", [name])
    # Typical durations, to spread the starts over each other's whole run.
    timing: dict[str, list[float]] = {"passwd": [], "login": []}
    current, other = PASSWORD, OTHER_PASSWORD
    for _ in range(2):
        r = run(box, ["passwd"], db, stdin=passwd_stdin(name, current, other))
        timing["passwd"].append(r.seconds)
        assert not (r.code != 0), (
            ("setting up: passwd") + ': ' + (r.brief()))
        current, other = other, current
        timing["login"].append(login(box, db, name, current).seconds)
    typical = max(statistics.median(timing["passwd"]), statistics.median(timing["login"]))

    wrong: list[str] = []
    broken: list[str] = []
    outcomes = collections.Counter()
    rounds = 0
    for n in range(knobs.passwd_rounds):
        rounds += 1
        new = other
        # Half the logins run with another iteration count, so that they rehash and write the
        # hash (the write that could bring an old password back).
        login_iterations = KILL_ITERATIONS * 3 // 2 if rng.random() < 0.5 else KILL_ITERATIONS
        offset = rng.uniform(-0.8, 0.8) * typical
        procs: dict[str, Started] = {}

        def start_passwd() -> None:
            procs["passwd"] = Started(box, ["passwd"], db, KILL_ITERATIONS, stdin_pipe=True)
            procs["passwd"].feed(passwd_stdin(name, current, new))
            procs["passwd"].close_stdin()

        def start_login() -> None:
            procs["login"] = Started(box, ["login", "--username", name, "--password-stdin"],
                                     db, login_iterations, stdin_pipe=True)
            procs["login"].feed(current + "\n")
            procs["login"].close_stdin()

        first, second = (start_passwd, start_login) if offset >= 0 else (start_login,
                                                                          start_passwd)
        last = last_event_id(db)
        first()
        # The offset is the race's input (a random interleaving; every one must give a right
        # answer), not a guess that the first command got somewhere.
        time.sleep(abs(offset))
        second()
        rp, rl = procs["passwd"].wait(), procs["login"].wait()
        logged = [f"{kind}{f' ({detail})' if detail else ''}"
                  for kind, _, detail in events_since(db, last)]
        where = f"round {n + 1} ({'passwd' if offset >= 0 else 'login'} first by " \
                f"{abs(offset) * 1000:.0f} ms, login at {login_iterations:,} iterations)"
        changed = (rp.code, rp.stdout) == (0, f"Password changed for {name}.\n")
        if not changed:
            wrong.append(f"{where}: passwd {rp.brief()}; logged {logged}")
        if (rl.code, rl.stdout.startswith("Welcome back ")) == (0, True):
            outcomes["login before the change"] += 1
        elif rl.code == 1 and INVALID in rl.stderr:
            outcomes["login after the change"] += 1
        else:
            wrong.append(f"{where}: login {rl.brief()}")
        stored = stored_hash(db, name)
        why = whole_hash(stored)
        problems = list(inspect(db).problems)
        if why:
            problems.append(why)
        else:
            old_works, new_works = hash_matches(stored, current), hash_matches(stored, new)
            if old_works == new_works:
                problems.append(f"old password works: {old_works}, new: {new_works}")
            elif new_works != changed:
                problems.append(f"passwd {'said' if changed else 'did not say'} it changed the "
                                f"password, but the {'old' if old_works else 'new'} one works")
            if new_works:
                current, other = new, current
        if problems:
            broken.append(f"{where}: {'; '.join(problems)}")
        if rl.code != 0 and scalar(db, "SELECT coalesce(max(failures), 0) FROM login_throttle"
                                   " WHERE username_key = ?", (name,)):
            run(box, ["unlock", name], db)  # keep the tally below the lockout
    # The program agrees: the password that works logs in.
    final = login(box, db, name, current)
    assert (not wrong and rounds > 0), (
        (f"`passwd` racing `login` of the same account, {rounds} rounds: passwd always says "
        "'Password changed', login 'Welcome back' or 'Invalid user name or password!'") + ': '
        + (", ".join(f"{v} {k}" for k, v in sorted(outcomes.items()))
        + (f"; {len(wrong)} wrong: {wrong[:3]}" if wrong else "")))
    assert (not broken and final.code == 0), (
        ("after every round exactly one of the old and new passwords works (the new one), "
        "the stored hash is whole, integrity_check ok; login with it works at the end") + ': '
        + ((f"{len(broken)} bad: {broken[:3]}" if broken else "")
        + ("" if final.code == 0 else f"; final login {final.brief()}")))
