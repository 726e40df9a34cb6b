"""Kills at random moments: when to kill a command (drawn from how long its runs take, so the
moments follow the machine's speed), the kill itself at that moment, and the tally an
assertion reports. The moment is the randomness under test: any moment must leave the store
whole."""

from __future__ import annotations

import pathlib
import signal
import statistics
import threading
import time

import totp
from runner import (KEY_LINE, KILL_ITERATIONS, PASSWORD, Result, Sandbox, Started,
                    enable_args)


def kill_at(p: Started, delay: float, on_tick=None) -> Result:
    """Kills `p` with SIGKILL `delay` seconds after its start. The kill's moment is the
    randomness under test (any moment must leave the store whole), so a timer fires it while
    this waits for the process to end. With `on_tick`, which watches the program's output and
    may return a new delay, its output is polled (in 1 ms steps) until the moment instead."""
    if on_tick is not None:
        while (left := p.start + delay - time.monotonic()) > 0 and p.proc.poll() is None:
            delay = on_tick() or delay
            time.sleep(max(0.0, min(0.001, left)))  # polls the output; the moment ends it
    # Popen.send_signal does nothing once the process has been reaped.
    timer = threading.Timer(max(0.0, p.start + delay - time.monotonic()),
                            p.proc.send_signal, (signal.SIGKILL,))
    timer.start()
    try:
        return p.wait()
    finally:
        timer.cancel()


def show_typical_durations(durations: dict) -> None:
    """Prints the median duration of each command (the kill moments are drawn from them)."""
    print("      typical durations (s): "
          + ", ".join(f"{k} {statistics.median(d):.3f}" for k, d in durations.items()),
          flush=True)


def kill_tally(runs: int, landed: int, committed: int, failures: list[str], shown: int = 3,
               also: str = "") -> str:
    """How the kills of one command went, for an assertion's message: its runs, the kills that
    landed mid-run (before and after its write committed), `also`, the first `shown` failures."""
    return (f"{runs} runs, {landed} killed mid-run ({landed - committed} before their write "
            f"committed, {committed} after)" + also
            + (f"; {len(failures)} bad: {failures[:shown]}" if failures else ""))


def kill_moment(rng, durations: list[float], near_end: float = 0.7) -> float:
    """When to kill a command that takes `durations` (its runs so far): half the kills anywhere
    in the run, half near its end (from `near_end` to 1.05 times its median), where it writes."""
    typical = statistics.median(durations)
    return rng.uniform(0, typical) if rng.random() < 0.5 else rng.uniform(
        near_end * typical, 1.05 * typical)


def kill_after(p: Started, delay: float, durations: list[float]) -> tuple[Result, bool]:
    """Kills `p` with SIGKILL `delay` seconds after its start: (its result, whether the kill
    landed mid-run); a run that ended before adds its time to `durations` (the kill moments
    follow the machine's speed)."""
    r = kill_at(p, delay)
    was_killed = r.code == -signal.SIGKILL
    if not was_killed:
        durations.append(r.seconds)
    return r, was_killed


def enable_killed(box: Sandbox, db: str, name: str, state: pathlib.Path, delay: float,
                  after_code: float | None = None) -> tuple[Result, str | None, float | None]:
    """`2fa enable` fed the password, then the code of its key as soon as the key is shown,
    killed `delay` s after its start, or `after_code` s after the code was fed (when given):
    (result, the key shown, when the code was fed, in seconds after the start)."""
    p = Started(box, enable_args(name), db, KILL_ITERATIONS, stdin_pipe=True, state=state)
    p.feed(PASSWORD + "\n")
    shown: list[str] = []
    fed_at: list[float] = []

    def feed_code() -> float | None:
        if not shown:
            match = KEY_LINE.search(p.out_path.read_text(errors="replace"))
            if match:
                shown.append(match.group(1))
                p.feed(totp.code_now(match.group(1)) + "\n")
                p.close_stdin()
                fed_at.append(time.monotonic() - p.start)
                if after_code is not None:
                    return fed_at[0] + after_code
        return None

    r = kill_at(p, delay, feed_code)
    match = KEY_LINE.search(r.stdout)
    return r, shown[0] if shown else (match.group(1) if match else None), (
        fed_at[0] if fed_at else None)
