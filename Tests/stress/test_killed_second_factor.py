"""`2fa enable` (fed the password, then the code of the key it shows), `login` with a TOTP
code and `logout` killed with SIGKILL at random moments. After each kill: integrity_check ok,
foreign_key_check empty, the v2/v3 rules; an account has a second_factor row iff it has exactly
10 recovery_code rows iff the log's last second_factor_* event for it is
second_factor_enabled; whenever one exists the key file <db>.key exists, mode 0600, 65 bytes,
unchanged; every session row's account exists; each client's session file is absent or whole
(three lines naming the database; a stray temporary file beside it is allowed); the change is
stored iff it is logged (second_factor_enabled, login_success with the accepted step and one
new session row, logout with the session's row deleted); and the same command run again
answers as it should (enable: "already on" or it works, then a login with a code works; login
with the same code: a replay iff its step was stored, else it logs in; logout: "Logged out."
while the file is there, "Not logged in." once it is gone). Logins set last_step back with
sqlite3 when the next step is used already. At least a quarter of the kills land while the
command runs, and at least one after its commit.

Each client has its own XDG_STATE_HOME (its session file). Half the kills come anywhere in the
run, half where it commits (for `2fa enable`: after the code was fed, which happens as soon as
the key is on its standard output). The moment is the randomness: any moment must leave the
store whole.
"""

from __future__ import annotations

import collections
import pathlib
import random
import signal
import statistics

import totp
from kills import enable_killed, kill_at, kill_tally, show_typical_durations
from runner import (AUTHORIZED, KEY_LINE, KILL_ITERATIONS, PASSWORD, REPLAYED, Result, Started,
                    enable_2fa, enable_args, enabled_ok, login_args, run, step_after)
from client_files import read_session_file, token_hash
from sqlite_store import (clear_throttle, events_since, factor_problems, inspect, last_event_id,
                          last_step, prepare_step, sessions, setup_accounts)


FACTOR_KINDS = ("2fa enable", "login", "logout")


def test_killed_second_factor_and_session_commands_keep_the_store_whole(box, knobs):
    rng = random.Random(knobs.seed + 10)
    db = box.db("factor-killed")
    names = ["fay", "gus", "hal", "ida"]
    setup_accounts(box, db, "j", names)
    states = {name: box.root / f"j-client-{name}" for name in names}
    secrets: dict[str, str] = {}
    key_seen: list[str] = []

    def on(name: str) -> bool:
        return last_step(db, name) is not None

    def login_with_code(the_db: str, name: str, state: pathlib.Path, secret: str | None) -> Result:
        """A login of `name` run to its end (with a code of an unused step when 2FA is on)."""
        clear_throttle(the_db, name)
        if secret is None:
            return run(box, login_args(name), the_db, PASSWORD + "\n", state=state)
        prepare_step(the_db, name)
        code = totp.code_for_step(secret, step_after(last_step(the_db, name)))
        return run(box, login_args(name), the_db, f"{PASSWORD}\n{code}\n", state=state)

    def logged_in(r: Result, name: str, with_code: bool) -> bool:
        return (r.code == 0 and r.stdout.startswith(f"Welcome back Added {name}!")
                and (AUTHORIZED in r.stderr) == with_code)

    # Two accounts start with 2FA on.
    for name in names[:2]:
        r, secret = enable_2fa(box, db, name, states[name])
        assert not (not enabled_ok(r, name) or not secret), (
            ("setting up: `2fa enable`") + ': ' + (r.brief()))
        secrets[name] = secret

    # Typical durations, on a file of its own, the way victims are started.
    timing_db = box.db("factor-timing")
    setup_accounts(box, timing_db, "j timing", ["tim"])
    timing_state = box.root / "j-timing"
    durations = {k: collections.deque(maxlen=9) for k in FACTOR_KINDS}
    tails: collections.deque = collections.deque(maxlen=9)  # enable: from the code to the exit
    for _ in range(3):
        r, secret, fed_at = enable_killed(box, timing_db, "tim", timing_state, 60)
        if enabled_ok(r, "tim") and secret and fed_at is not None:
            durations["2fa enable"].append(r.seconds)
            tails.append(r.seconds - fed_at)
            clear_throttle(timing_db, "tim")
            prepare_step(timing_db, "tim")
            code = totp.code_for_step(secret, step_after(last_step(timing_db, "tim")))
            p = Started(box, login_args("tim"), timing_db, KILL_ITERATIONS, stdin_pipe=True,
                        state=timing_state)
            p.feed(f"{PASSWORD}\n{code}\n")
            p.close_stdin()
            r = p.wait()
            if logged_in(r, "tim", True):
                durations["login"].append(r.seconds)
            r = Started(box, ["logout"], timing_db, KILL_ITERATIONS, stdin_pipe=False,
                        state=timing_state).wait()
            if r.code == 0:
                durations["logout"].append(r.seconds)
        run(box, ["user", "reset-2fa", "tim"], timing_db)
    missing = [k for k, d in durations.items() if not d]
    assert not (missing), (
        ("measuring the commands") + ': ' + (f"no run of {missing} succeeded: "
                f"last {r.brief()}"))
    show_typical_durations(durations)

    runs = {k: 0 for k in FACTOR_KINDS}
    landed = {k: 0 for k in FACTOR_KINDS}
    committed_mid = {k: 0 for k in FACTOR_KINDS}
    failures: dict[str, list[str]] = {k: [] for k in FACTOR_KINDS}
    set_back = orphans = 0
    for n in range(max(knobs.factor_kill_runs, len(FACTOR_KINDS))):
        # Each kind once first, so that every one is killed whatever the seed.
        untried = [k for k in FACTOR_KINDS if not runs[k]]
        kind = untried[0] if untried else rng.choice(FACTOR_KINDS)
        problems: list[str] = []
        # Getting there: an account with 2FA off to enable, one with it on to log in, a client
        # with a live session to log out.
        if kind == "2fa enable":
            off = [name for name in names if not on(name)]
            name = rng.choice(off or names)
            if not off:
                r = run(box, ["user", "reset-2fa", name], db)
                if (r.code, r.stdout) != (0, f"Two-factor authentication turned off for {name}; "
                                             "their sessions ended.\n"):
                    problems.append(f"setting up: user reset-2fa {r.brief()}")
                secrets.pop(name, None)
        elif kind == "login":
            with_2fa = [name for name in names if on(name)]
            name = rng.choice(with_2fa or names)
            if not with_2fa:
                r, secret = enable_2fa(box, db, name, states[name])
                secrets[name] = secret or ""
                if not enabled_ok(r, name) or not secret:
                    problems.append(f"setting up: 2fa enable {r.brief()}")
            clear_throttle(db, name)
            set_back += prepare_step(db, name)
        else:
            name = rng.choice(names)
            text, _ = read_session_file(states[name], db)
            if token_hash(text) not in list(sessions(db)):
                r = login_with_code(db, name, states[name], secrets.get(name) if on(name) else None)
                if r.code != 0:
                    problems.append(f"setting up: login {r.brief()}")
        if problems:
            failures[kind].append(f"run {n}: {'; '.join(problems)}")
            continue
        state = states[name]
        step_before = last_step(db, name)
        sessions_before = sessions(db)
        file_before, _ = read_session_file(state, db)
        last = last_event_id(db)
        # Half the kills anywhere in the run, half where it commits: in its last part
        # (the commit and the exit are a few ms apart, and runs vary more than that), or for
        # `2fa enable` after the code was fed.
        typical = statistics.median(durations[kind])
        late = rng.random() < 0.5
        low, high = (0.85, 1.3) if kind == "logout" else (0.7, 1.1)  # logout commits last
        delay = rng.uniform(low * typical, high * typical) if late else rng.uniform(0, typical)
        if kind == "2fa enable":
            after_code = rng.uniform(0, 1.1 * statistics.median(tails)) if late else None
            r, shown, fed_at = enable_killed(box, db, name, state, 30 if late else delay,
                                             after_code)
            fed = fed_at is not None
            if late:
                delay = (fed_at or 0) + (after_code or 0)
            if r.code != -signal.SIGKILL and fed_at is not None:
                tails.append(r.seconds - fed_at)
        elif kind == "login":
            step = step_after(step_before)
            code = totp.code_for_step(secrets[name], step)
            p = Started(box, login_args(name), db, KILL_ITERATIONS, stdin_pipe=True, state=state)
            p.feed(f"{PASSWORD}\n{code}\n")
            p.close_stdin()
            r = kill_at(p, delay)
        else:
            r = kill_at(Started(box, ["logout"], db, KILL_ITERATIONS, stdin_pipe=False,
                                state=state), delay)
        runs[kind] += 1
        was_killed = r.code == -signal.SIGKILL
        if not was_killed:
            durations[kind].append(r.seconds)
        landed[kind] += was_killed
        where = (f"run {n} `{kind}` of {name} killed at {delay * 1000:.1f} ms "
                 + ("(after the code) " if kind == "2fa enable" and late else "")
                 + 
                 f"({'mid-run' if was_killed else 'after exit: ' + r.brief()})")

        # The file after the kill.
        problems += inspect(db).problems + factor_problems(db, key_seen)
        file_after, bad = read_session_file(state, db)
        problems += bad
        events = events_since(db, last)
        sessions_after = sessions(db)
        new = {h: row for h, row in sessions_after.items() if h not in sessions_before}

        if kind == "2fa enable":
            changed = on(name)
            logged = [e for e in events if e[0] == "second_factor_enabled" and e[1] == name]
            if changed != bool(logged):
                problems.append(f"2FA {'on' if changed else 'off'} but second_factor_enabled "
                                f"{'logged' if logged else 'not logged'}")
            if changed and not (shown and fed):
                problems.append("2FA stored though no code of the key shown was typed")
            if changed:
                secrets[name] = shown or ""
            if new:
                problems.append(f"`2fa enable` added sessions {[row[0] for row in new.values()]}")
            # The same command again: 'already on', or it works; then a login with a code.
            if changed:
                rr = run(box, enable_args(name), db, PASSWORD + "\n", state=state)
                ok = (rr.code == 1 and f"Two-factor authentication is already on for {name}."
                      in rr.stderr and not KEY_LINE.search(rr.stdout))
            else:
                rr, secret = enable_2fa(box, db, name, state)
                ok = enabled_ok(rr, name) and bool(secret)
                secrets[name] = secret or ""
            if not ok:
                problems.append(f"next `2fa enable`: {rr.brief()}")
            lr = login_with_code(db, name, state, secrets.get(name))
            if not logged_in(lr, name, True):
                problems.append(f"a login with a code after it: {lr.brief()}")
        elif kind == "login":
            changed = any(e[0] == "login_success" and e[1] == name for e in events)
            failed = [e for e in events if e[0] in ("login_failure", "lockout")]
            if failed:
                problems.append(f"the right password and code logged {failed}")
            now_step = last_step(db, name)
            if now_step != (step if changed else step_before):
                problems.append(f"last_step {now_step} (was {step_before}, the code's step "
                                f"{step}); login_success {'logged' if changed else 'not logged'}")
            if len(new) != (1 if changed else 0) or any(
                    row[1:] != (name, 1) for row in new.values()):
                problems.append(f"sessions added {[row[1:] for row in new.values()]}; "
                                f"login_success {'logged' if changed else 'not logged'}")
            if file_after is not None and file_after != file_before and token_hash(
                    file_after) not in list(new):
                problems.append("a new session file names no session this login added")
            previous = token_hash(file_before)
            if not was_killed and previous and previous in sessions_after:
                problems.append("the session the client's file named before was not ended")
            # The same command again, the same code: a replay if the step was taken, else it
            # logs in.
            rr = run(box, login_args(name), db, f"{PASSWORD}\n{code}\n", state=state)
            if changed:
                ok = rr.code == 1 and REPLAYED in rr.stderr
            else:
                ok = logged_in(rr, name, True)
                text, _ = read_session_file(state, db)
                if ok and token_hash(text) not in list(sessions(db)):
                    problems.append("after the next login the session file names no session")
            if not ok:
                problems.append(f"next `login` with the same code: {rr.brief()}")
            clear_throttle(db, name)
        else:
            ended = [h for h in sessions_before
                     if h == token_hash(file_before) and h not in sessions_after]
            changed = bool(ended)
            logged = [e for e in events if e[0] == "logout"]
            if changed != bool(logged) or len(logged) > 1:
                problems.append(f"session {'ended' if changed else 'kept'} but {len(logged)} "
                                "logout events")
            if new or set(sessions_before) - set(sessions_after) - set(ended):
                problems.append("other sessions changed")
            if file_after is not None and file_after != file_before:
                problems.append("logout wrote another session file")
            if not was_killed and (r.code, r.stdout) != (0, "Logged out.\n"):
                problems.append(f"logout: {r.brief()}")
            # The same command again: `Logged out.` while the file is there (for sure when its
            # session is live), `Not logged in.` once it is gone.
            rr = run(box, ["logout"], db, state=state)
            said_out = (rr.code, rr.stdout) == (0, "Logged out.\n")
            said_not = rr.code == 1 and rr.stderr.strip() == "Not logged in."
            ok = (said_out if file_after is not None and not changed
                  else said_out or said_not if file_after is not None else said_not)
            if not ok:
                problems.append(f"next `logout` (session file {'present' if file_after else 'absent'}"
                                f", session {'ended' if changed else 'live'}): {rr.brief()}")
            if said_out and read_session_file(state, db)[0] is not None:
                problems.append("the session file is still there after `Logged out.`")
            if token_hash(file_before) in sessions(db):
                if file_after is not None:
                    problems.append("the session is still stored after the next logout")
                else:
                    # The file went before the row: a session nobody holds a token of, left
                    # until it expires. Counted, not failed (the contract orders neither).
                    orphans += 1
        committed_mid[kind] += was_killed and changed
        if not was_killed and not changed:
            problems.append(f"it ended without its change: {r.brief()}")
        # What the file holds after the next command.
        problems += [p for p in inspect(db).problems + factor_problems(db, key_seen)
                     if p not in problems]
        problems += [p for p in read_session_file(state, db)[1] if p not in problems]
        if problems:
            failures[kind].append(f"{where}: {'; '.join(problems)}")

    total = sum(runs.values())
    what = {
        "2fa enable": "`2fa enable` (password, then the code of the key shown)",
        "login": "`login` with a TOTP code",
        "logout": "`logout`",
    }
    again = {
        "2fa enable": "enable again says 'already on' or works, then a login with a code works",
        "login": "the same code again is a replay iff the step was stored, else it logs in",
        "logout": "logout again says 'Logged out.' or 'Not logged in.' as the file stands",
    }
    for kind in FACTOR_KINDS:
        assert (not failures[kind] and runs[kind] > 0), (
            (f"SIGKILL during {what[kind]}: integrity, foreign keys, v2/v3 rules; 2FA on iff 10 "
            "recovery codes iff last logged second_factor_* is enabled; key file 0600, 65 bytes "
            "whenever 2FA is on; session file absent or whole; stored iff logged; " + again[kind]) + ': '
            + kill_tally(runs[kind], landed[kind], committed_mid[kind], failures[kind],
                         also=(f"; {orphans} left a session row without its file"
                               if kind == "logout" else "")))
    assert (total > 0 and sum(landed.values()) * 4 >= total and sum(committed_mid.values()) > 0), (
        ("kills landed mid-run in at least a quarter of the runs, and after a commit at least once") + ': '
        + (f"{sum(landed.values())} of {total}, {sum(committed_mid.values())} after the commit "
        f"(seed {knobs.seed}; {set_back} logins set last_step back with sqlite3 first)"))
