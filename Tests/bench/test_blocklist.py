"""`accounts activate` refused by the password blocklist (the password is the last of
3,000,000 lines of ACCOUNTS_PASSWORD_BLOCKLIST; `--blocklist-lines`) vs `grep -Fx -- PASSWORD
FILE` on the same file, alternated. Target: ≤ 3×. And, to show what reading the list costs, the
same activate with a one-line list (start-up, the database, the form)."""

from __future__ import annotations

import random
import shutil
import subprocess

from .timing import fail, ms, ratio_line, require

BLOCKED_PASSWORD = "the last line of the blocklist"  # passes every rule but the blocklist
BLOCKED = b"Password is on the administrator's list of forbidden passwords!"
BLOCKLIST_TARGET = 3


def write_blocklist(path, count: int, last: str) -> None:
    """`count` random-looking lines of 6 to 14 characters, then `last`."""
    rng = random.Random(1)
    lengths = [rng.randint(6, 14) for _ in range(1000)]
    chunk = 100_000
    with open(path, "w") as f:
        for done in range(0, count, chunk):
            n = min(chunk, count - done)
            text = rng.randbytes(7 * n).hex()
            lines, at = [], 0
            for i in range(n):
                length = lengths[i % 1000]
                lines.append(text[at:at + length])
                at += length
            f.write("\n".join(lines) + "\n")
        f.write(last + "\n")


def test_activate_refused_by_a_blocklist_beside_grep(bench, alice):
    require("grep")
    timer, options, work, env = bench.timer, bench.options, bench.work, bench.env
    lines = options.blocklist_lines
    # The password is the file's last line, so both read all of it.
    blocklist = work / "blocklist.txt"
    write_blocklist(blocklist, lines, BLOCKED_PASSWORD)
    blocklist_env = dict(env, ACCOUNTS_PASSWORD_BLOCKLIST=str(blocklist))
    one_line = work / "one-line-blocklist.txt"
    one_line.write_text(BLOCKED_PASSWORD + "\n")
    one_line_env = dict(env, ACCOUNTS_PASSWORD_BLOCKLIST=str(one_line))
    # A folder of its own, removed after every run: each run finds no database, as the first did.
    refused_folder = work / "refused"
    refused = [bench.binary, "activate", "--database", str(refused_folder / "accounts.sqlite3"),
               "--username", "alice", "--full-name", "Alice Liddell", "--email",
               "alice@example.org", "--password-stdin"]
    refused_line = (BLOCKED_PASSWORD + "\n").encode()
    grep = [shutil.which("grep") or "grep", "-Fx", "--", BLOCKED_PASSWORD, str(blocklist)]

    def run_refused(name: str, run_env: dict[str, str]) -> None:
        timer.run(name, refused, refused_line, expect=1, env=run_env)
        shutil.rmtree(refused_folder, ignore_errors=True)

    for check_env in (blocklist_env, one_line_env):
        check = subprocess.run(refused, input=refused_line, capture_output=True, env=check_env)
        shutil.rmtree(refused_folder, ignore_errors=True)
        if (check.returncode, check.stderr.strip()) != (1, BLOCKED):
            fail(f"activate was not refused by the blocklist: exit {check.returncode}, "
                 f"{check.stderr.decode(errors='replace').strip()[:300]}")
    if timer.run("check", grep, record=False).strip() != BLOCKED_PASSWORD.encode():
        fail("grep -Fx did not find the password")

    for _ in range(options.blocklist_runs):
        run_refused("refused", blocklist_env)
        timer.run("grep", grep)
        run_refused("refused-one-line", one_line_env)

    ratio, least = timer.ratios("refused", "grep")
    bench.report.section(30, [
        f"Password blocklist of {lines:,} lines, the password last:",
        timer.row("accounts activate (refused by the blocklist)", "refused"),
        timer.row("grep -Fx -- PASSWORD FILE", "grep"),
        ratio_line("activate/grep", ratio, least, BLOCKLIST_TARGET),
        timer.row("accounts activate, one-line blocklist", "refused-one-line"),
        f"  reading the {lines:,} lines: "
        f"{ms(timer.median('refused') - timer.median('refused-one-line'))} (median difference); "
        f"the rest is start-up, the database and the form",
    ])
    bench.report.markdown(30, [
        f"| `accounts activate` refused by a {lines:,}-line blocklist (password last) "
        f"| {timer.cells('refused')} | {ratio:.2f}× grep | ≤ {BLOCKLIST_TARGET}× |",
        f"| `grep -Fx -- PASSWORD FILE` (same file) | {timer.cells('grep')} | 1 | |",
        f"| `accounts activate` refused by a one-line blocklist (all but the reading) "
        f"| {timer.cells('refused-one-line')} "
        f"| {timer.median('refused-one-line') / timer.median('grep'):.2f}× grep | |",
    ])
    bench.report.run_count(30, f"{options.blocklist_runs} per blocklist command")
