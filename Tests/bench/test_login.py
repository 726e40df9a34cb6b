"""`accounts login` beside `openssl kdf … PBKDF2`: the same password, salt and iteration count
(read out of the hash `accounts activate` stored), each a separate process, runs alternated
after one unmeasured check each. Target: ≤ 1.05×, the ratio of medians; the ratio of median CPU
times is printed beside it (steadier where the machine's speed drifts during a run)."""

from __future__ import annotations

import base64

from .timing import PASSWORD, PASSWORD_LINE, fail, ms, ratio_line, require

LOGIN_TARGET = 1.05


def test_login_beside_openssl_kdf(bench, alice):
    require("openssl")
    timer, options = bench.timer, bench.options
    algorithm, iterations_text, salt, key_b64 = alice.split("$")
    iterations = int(iterations_text)
    if algorithm != "pbkdf2_sha256" or iterations != options.iterations:
        fail(f"unexpected stored hash: {algorithm}, {iterations} iterations")
    login = [bench.binary, "login", "--username", "alice", "--password-stdin"]
    openssl = ["openssl", "kdf", "-keylen", "32", "-kdfopt", "digest:SHA256",
               "-kdfopt", f"pass:{PASSWORD}", "-kdfopt", f"salt:{salt}",
               "-kdfopt", f"iter:{iterations}", "PBKDF2"]

    # Both sides derive the same key: the comparison is of the same work.
    derived = timer.run("check", openssl, record=False).decode().strip()
    if bytes.fromhex(derived.replace(":", "")) != base64.b64decode(key_b64):
        fail("openssl derived a different key than the one accounts stored")
    if b"Welcome back" not in timer.run("check", login, PASSWORD_LINE, record=False):
        fail("login did not say Welcome back")

    for _ in range(options.runs):
        timer.run("login", login, PASSWORD_LINE)
        timer.run("openssl", openssl)

    ratio, least = timer.ratios("login", "openssl")
    bench.report.section(10, [
        f"PBKDF2-HMAC-SHA256, {iterations:,} iterations (same password, salt, count):",
        timer.row("accounts login --password-stdin", "login"),
        timer.row("openssl kdf … PBKDF2", "openssl"),
        ratio_line("login/openssl", ratio, least, LOGIN_TARGET, 3)
        + f"   (CPU time {timer.cpu_ratio('login', 'openssl'):.3f})",
        f"  overhead of login beyond the KDF: "
        f"{ms(timer.median('login') - timer.median('openssl'))} (median)",
    ])
    bench.report.markdown(10, [
        f"| `accounts login` ({iterations:,} PBKDF2 iterations) | {timer.cells('login')} "
        f"| {ratio:.3f}× openssl | ≤ {LOGIN_TARGET}× |",
        f"| `openssl kdf … PBKDF2` (same password, salt, count) | {timer.cells('openssl')} "
        f"| 1 | |",
    ])
    bench.report.run_count(10, f"{options.runs} per KDF command")
