"""12 `accounts activate` released at one moment, on a new file and on an existing Public
file: exactly one wins, 11 exit 1 "already activated"; no output mentions "locked" or "busy";
the file is consistent and the winner is its stored user, whose login works.

The racers are released two ways: behind a gate, all blocked reading their password on
standard input and then fed at once (so all have opened the file before any writes); or
started by one /bin/sh with `&`, a few milliseconds apart as the shell forks them, each reading
its password from a file (so some open the new file while others are creating it).
"""

from __future__ import annotations

import shlex
import subprocess

import runner
from runner import (ALREADY, PASSWORD, RACE_ITERATIONS, RACERS, Gate, Result, Sandbox,
                    Started, activate, mentions, released_at_once, run)
from sqlite_store import consistent


def activation_race(box: Sandbox, db: str) -> tuple[list[str], list[str], list[str], str]:
    """One race of RACERS activations on `db`: (wrong outcomes, noisy outputs, database
    problems, how the barrier went)."""
    names = [f"user{i:02d}" for i in range(RACERS)]
    gate = Gate()
    procs = [
        Started(box, ["activate", "--username", name, "--full-name", f"User {name}",
                      "--email", f"{name}@example.org", "--password-stdin"],
                db, RACE_ITERATIONS, stdin_pipe=True, gate=gate)
        for name in names
    ]
    # All open the file at once and, once all wait for their password, get it at once.
    results, how = released_at_once(gate, procs, [PASSWORD] * len(procs))
    return judge_race(box, db, names, results) + (how,)


def activation_race_from_shell(box: Sandbox, db: str) -> tuple[list[str], list[str], list[str], str]:
    """Like `activation_race`, but the 12 are started by one /bin/sh with `&`, a few
    milliseconds apart as a shell forks them, each reading its password from a file: so some
    open the new file while others are creating it."""
    names = [f"user{i:02d}" for i in range(RACERS)]
    work = box.scratch("shell-race")
    work.mkdir()
    (work / "password").write_text(PASSWORD + "\n")
    lines = [f"cd {shlex.quote(str(work))}"]
    for i, name in enumerate(names):
        argv = [runner.BIN, "activate", "--username", name, "--full-name", f"User {name}", "--email",
                f"{name}@example.org", "--password-stdin", "--database", db]
        lines.append(f"{shlex.join(argv)} <password >out.{i} 2>err.{i} & p{i}=$!")
    lines += [f"wait $p{i}; echo $? >code.{i}" for i in range(RACERS)]
    subprocess.run(["/bin/sh", "-c", "\n".join(lines)], env=box.env(RACE_ITERATIONS),
                   stdin=subprocess.DEVNULL, timeout=120, check=False)
    results = []
    for i in range(RACERS):
        code_text = (work / f"code.{i}").read_text().strip() if (work / f"code.{i}").exists() else ""
        results.append(Result(int(code_text) if code_text.isdigit() else -1,
                              box.clean((work / f"out.{i}").read_text(errors="replace")),
                              box.clean((work / f"err.{i}").read_text(errors="replace")), 0.0))
    return judge_race(box, db, names, results) + ("started by /bin/sh",)


def judge_race(box: Sandbox, db: str, names: list[str],
               results: list[Result]) -> tuple[list[str], list[str], list[str]]:
    winners = [n for n, r in zip(names, results) if r.code == 0]
    refused = [r for r in results if r.code == 1 and ALREADY in r.stderr.lower()]
    wrong = [f"{n}: {r.brief()}" for n, r in zip(names, results)
             if r.code != 0 and not (r.code == 1 and ALREADY in r.stderr.lower())]
    if len(winners) != 1 or len(refused) != RACERS - 1:
        wrong.insert(0, f"{len(winners)} exit 0, {len(refused)} exit 1 '{ALREADY}'")
    noisy = [f"{n}: {r.brief()}" for n, r in zip(names, results)
             if mentions(r.text, ("locked", "busy"))]
    problems, snap = consistent(box, db)
    if snap.state != "Activated" or len(winners) != 1 or snap.username != winners[0]:
        problems.append(f"state {snap.state}, stored user {snap.username}, winner(s) {winners}")
    return wrong, noisy, problems


def race_rounds(box: Sandbox, label: str, rounds: int, make_db, race=activation_race) -> None:
    wrong: list[str] = []
    noisy: list[str] = []
    problems: list[str] = []
    hows: set[str] = set()
    for n in range(rounds):
        db = make_db(n)
        w, z, p, how = race(box, db)
        wrong += [f"round {n + 1}: {x}" for x in w]
        noisy += [f"round {n + 1}: {x}" for x in z]
        problems += [f"round {n + 1}: {x}" for x in p]
        hows.add(how)
    assert (not wrong), (
        (f"{label}: in each of {rounds} rounds of {RACERS} simultaneous activations exactly one"
        f" wins, {RACERS - 1} exit 1 '{ALREADY}'") + ': ' + (f"barrier: {'; '.join(sorted(hows))}"
        + (f"; {len(wrong)} wrong: {wrong[:4]}" if wrong else "")))
    assert (not noisy), (
        (f"{label}: no output mentions 'locked' or 'busy'") + ': ' + ("; ".join(noisy[:3])))
    assert (not problems), (
        (f"{label}: database consistent, the winner is the stored user, its login works") + ': '
        + ("; ".join(problems[:3])))


def test_activation_race_on_a_new_file(box, knobs):
    race_rounds(box, "new file, barrier", knobs.activation_rounds,
                lambda n: box.db(f"race-new-{n}"))


def test_activation_race_on_a_new_file_started_by_a_shell(box, knobs):
    race_rounds(box, "new file, started by /bin/sh", knobs.shell_rounds,
                lambda n: box.db(f"race-shell-{n}"), activation_race_from_shell)


def test_activation_race_on_a_public_file(box, knobs):
    def public_file(n: int) -> str:
        db = box.db(f"race-public-{n}")
        first = activate(box, db, "setup", RACE_ITERATIONS)
        reset = run(box, ["reset", "--yes"], db)
        assert not (first.code != 0 or reset.code != 0), (
            ("existing Public file: setting up") + ': '
            + (f"activate {first.brief()}; reset {reset.brief()}"))
        return db

    race_rounds(box, "existing Public file, barrier", knobs.activation_rounds, public_file)
