"""The bench: `accounts` (release build) measured beside the tools that do the same work alone.

Run by Scripts/bench (pytest), one module per subject; conftest.py holds the options and the
shared fixtures, timing.py the timer, the reaper and the report, importing.py and million.py
the inputs they make, concurrent_logins.py the concurrent rounds of test_postgres.py.
"""
