"""Another program holds the write lock of the database (a transaction of the test's own,
standing for another `accounts` process):

- while it holds it, a login waits for it (seen sleeping in its lock wait, still
  running) and succeeds once it is released; the same for `activate` on a new, empty file held
  with BEGIN IMMEDIATE (as another `accounts` holds it while it makes the file WAL);
- held past the 5-second busy timeout, writing commands (login, reset, unlock) give up by
  themselves, exit 3 with a sentence about "busy" and no raw SQLite text, after waiting at
  least the timeout; `status` still reads meanwhile (it ends while they all still wait);
  afterwards nothing changed, the file is consistent and the login works.

No test waits for a time: each waits until the program is in its lock wait, and the lock is
held until the program's answer is in.
"""

from __future__ import annotations

import json
import sqlite3

from runner import (FULL_NAME, LOGIN_ITERATIONS, PASSWORD, RAW_SQLITE, WELCOME, Result, Started,
                    activate, mentions, run, wait_until, waiting_for_lock)
from sqlite_store import consistent


def hold(db: str, mode: str) -> sqlite3.Connection:
    con = sqlite3.connect(db, timeout=10, isolation_level=None)
    con.execute(f"BEGIN {mode}")
    # Write something inside the transaction, as a real program would.
    con.execute("UPDATE activation SET changed_at = changed_at")
    return con


def waits_for(p: Started) -> None:
    """Until `p` sleeps in its lock wait (it met the lock), or has ended (a failure the
    caller reports with its answer)."""
    wait_until(lambda: p.proc.poll() is not None or waiting_for_lock(p.proc.pid),
               "the command waits for the lock")


def waits_while_held(started: Started, con: sqlite3.Connection) -> tuple[bool, Result]:
    """Feeds `started` the password, waits until it sleeps in its lock wait, then releases the
    lock `con` holds: (whether it was still running then, its result)."""
    started.feed(PASSWORD + "\n")
    started.close_stdin()
    waits_for(started)
    still_running = started.proc.poll() is None
    con.execute("ROLLBACK")
    con.close()
    return still_running, started.wait()


def activated(box, db: str) -> None:
    setup = activate(box, db, "alice", LOGIN_ITERATIONS)
    assert setup.code == 0, f"setting up: {setup.brief()}"


def test_a_login_waits_for_a_held_lock_then_succeeds(box):
    db = box.db("held")
    activated(box, db)
    con = hold(db, "EXCLUSIVE")
    started = Started(box, ["login", "--username", "alice", "--password-stdin"], db,
                      LOGIN_ITERATIONS, stdin_pipe=True)
    still_running, r = waits_while_held(started, con)
    assert still_running and r.code == 0 and r.stdout.startswith(WELCOME), (
        "lock held (BEGIN EXCLUSIVE): login waits for it, then succeeds: "
        + ("" if still_running else "it finished while the lock was held; ") + r.brief())


def test_activate_waits_for_a_new_empty_file_held_then_succeeds(box):
    fresh = box.db("held-new")
    con = sqlite3.connect(fresh, timeout=10, isolation_level=None)
    con.execute("BEGIN IMMEDIATE")
    started = Started(box, ["activate", "--username", "alice", "--full-name", FULL_NAME,
                            "--email", "alice@example.org", "--password-stdin"], fresh,
                      LOGIN_ITERATIONS, stdin_pipe=True)
    still_running, r = waits_while_held(started, con)
    assert still_running and r.code == 0, (
        "new empty file held (BEGIN IMMEDIATE): activate waits for it, then "
        "succeeds: " + ("" if still_running else "it finished while the lock was held; ")
        + r.brief())


def test_writers_give_up_in_words_when_the_lock_outlasts_the_busy_timeout(box):
    db = box.db("held")
    activated(box, db)
    con = hold(db, "IMMEDIATE")
    writers = {
        "login": Started(box, ["login", "--username", "alice", "--password-stdin"], db,
                         LOGIN_ITERATIONS, stdin_pipe=True),
        "reset --yes": Started(box, ["reset", "--yes"], db, LOGIN_ITERATIONS, False),
        "unlock alice": Started(box, ["unlock", "alice"], db, LOGIN_ITERATIONS, False),
    }
    writers["login"].feed(PASSWORD + "\n")
    writers["login"].close_stdin()
    for p in writers.values():
        waits_for(p)
    status = run(box, ["status", "--json"], db, timeout=30)
    all_waiting = all(p.proc.poll() is None for p in writers.values())
    # The lock stays held until every writer has answered: each must give up by itself.
    results = {name: p.wait(timeout=60) for name, p in writers.items()}
    con.execute("ROLLBACK")
    con.close()
    for name, r in results.items():
        raw = mentions(r.text, RAW_SQLITE)
        assert r.code == 3 and "busy" in r.stderr.lower() and not raw and r.seconds >= 4.5, (
            f"lock held past the busy timeout: `{name}` exits 3 with a sentence about 'busy', "
            f"after waiting at least the 5 s timeout: exit {r.code} after {r.seconds:.2f} s: "
            f"{r.stderr.strip()[:160]!r}" + (f"; raw SQLite text {raw}" if raw else ""))
    try:
        state = json.loads(status.stdout).get("state")
    except ValueError:
        state = None
    assert status.code == 0 and state == "Activated" and all_waiting, (
        "lock held: `status` reads while the writers still wait: "
        f"exit {status.code} after {status.seconds:.2f} s, state {state}"
        + ("" if all_waiting else "; a writer had already ended"))
    problems, snap = consistent(box, db)
    assert not problems and snap.state == "Activated" and snap.username == "alice", (
        f"after the lock: nothing changed, database consistent, login works: state {snap.state}"
        + (f"; {problems}" if problems else ""))
