"""TOTP for the test suites (RFC 6238: HMAC-SHA-1, 6 digits, 30-second steps), computed by
pyotp, the independent implementation the tests use as their oracle; the one copy of the step
arithmetic the suites share."""

from __future__ import annotations

import time

import pyotp

STEP = 30


def step_of(moment: float) -> int:
    """The 30-second step that holds the Unix time `moment`."""
    return int(moment) // STEP


def current_step() -> int:
    return step_of(time.time())


def code_for_step(key: str, step: int) -> str:
    """The code of step `step` for the Base32 `key`."""
    return pyotp.TOTP(key).at(step * STEP)


def code_now(key: str) -> str:
    return pyotp.TOTP(key).now()
