"""Measuring the binary's costs: CPU seconds and peak memory read from the kernel's accounting
of the process, never the wall clock, which other processes on the machine would move."""

from __future__ import annotations

import os
import subprocess

from constants import BIN

# Runs a command, then writes its exit code, CPU seconds and peak RSS (KiB) as JSON to a file.
# It is a small process of its own because on Linux a child's peak RSS starts at its parent's
# high-water mark when it execs, and pytest's can exceed what `accounts` itself uses.
REAPER = r"""
import json, os, subprocess, sys, threading
timeout, report, *command = sys.argv[1:]
proc = subprocess.Popen(command)
watchdog = threading.Timer(float(timeout), proc.kill)
watchdog.start()
_, status, usage = os.wait4(proc.pid, 0)
watchdog.cancel()
proc.returncode = os.waitstatus_to_exitcode(status)
with open(report, "w") as f:
    json.dump({"code": proc.returncode, "cpu": usage.ru_utime + usage.ru_stime,
               "rss_kib": usage.ru_maxrss}, f)
"""


# The release program (the one that ships) for the tests that compare costs; Scripts/test runs
# every suite on it, so this is BIN there.
TIMING_BIN = os.environ.get("ACCOUNTS_RELEASE_BIN") or BIN


def cpu_seconds(args, stdin: str, env, expected=1, cwd=None) -> float:
    """CPU seconds (user + system) of one run of `accounts *args` fed `stdin`, after checking its
    exit code: what a comparison of costs reads, never the wall clock, which other processes
    on the machine would move."""
    proc = subprocess.Popen([TIMING_BIN, *args], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    proc.stdin.write(stdin.encode())
    proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == expected, (args, stdin)
    return usage.ru_utime + usage.ru_stime

