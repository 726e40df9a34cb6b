"""A PAM authentication through pam_accounts.so beside the same one through pam_exec and
`accounts pam-auth`, and beside `openssl kdf … PBKDF2` of the cost both pay: Debian's pamtester
on scratch service files in /etc/pam.d (so the bench runs as root), the password on standard
input, runs alternated after one unmeasured check each. The helper both paths run is the program
as Scripts/install installs it (stripped).

Both PAM paths clean their environment, so they hash at the default cost (or the stored one, if
higher) whatever the bench's count: the reference KDF uses that cost. Targets: the module's
overhead beyond the KDF ≤ 5 ms (median; ≤ 10 ms before, reported beside it), and the module no
slower than pam_exec (ratio of medians ≤ 1.0)."""

from __future__ import annotations

import os
import secrets
import subprocess

from .timing import (DEFAULT_ITERATIONS, PASSWORD, PASSWORD_LINE, fail, ms, ratio_line, require,
                     verdict)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OVERHEAD_TARGET = 0.005
EARLIER_OVERHEAD_TARGET = 0.010
PAM_EXEC_TARGET = 1.0


def build_module(bench, helper: str) -> str:
    output = bench.work / "pam" / "pam_accounts.so"
    result = subprocess.run([os.path.join(REPO, "Scripts", "build-pam"), "--helper",
                             helper, "--output", str(output)],
                            capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"Scripts/build-pam failed: {result.stderr.strip()[:300]}")
    return str(output)


def service(lines: list[str]) -> str:
    name = f"accounts-bench-{secrets.token_hex(6)}"
    with open(f"/etc/pam.d/{name}", "x") as f:
        f.write("".join(line + "\n" for line in lines))
    return name


def test_pam_module_beside_pam_exec_and_the_kdf(bench, alice, installed):
    require("pamtester", "openssl")
    if os.geteuid() != 0:
        fail("the PAM rows write service files into /etc/pam.d: run the bench as root")
    timer, options = bench.timer, bench.options
    _algorithm, stored, salt, _key = alice.split("$")
    cost = max(int(stored), DEFAULT_ITERATIONS)
    database = bench.env["ACCOUNTS_DATABASE"]
    module = build_module(bench, installed)
    names = [
        service([f"auth required {module} database={database} timeout=300"]),
        service([f"auth required pam_exec.so expose_authtok quiet {installed} pam-auth "
                 f"--database {database} --time-limit 300"]),
    ]
    try:
        via_module = ["pamtester", names[0], "alice", "authenticate"]
        via_exec = ["pamtester", names[1], "alice", "authenticate"]
        openssl = ["openssl", "kdf", "-keylen", "32", "-kdfopt", "digest:SHA256",
                   "-kdfopt", f"pass:{PASSWORD}", "-kdfopt", f"salt:{salt}",
                   "-kdfopt", f"iter:{cost}", "PBKDF2"]
        for argv in (via_module, via_exec):
            timer.run("check", argv, PASSWORD_LINE, record=False)
        timer.run("check", via_module, b"not the password\n", expect=1, record=False)
        timer.run("check", openssl, record=False)
        for _ in range(options.runs):
            timer.run("pam-module", via_module, PASSWORD_LINE)
            timer.run("pam-exec", via_exec, PASSWORD_LINE)
            timer.run("pam-kdf", openssl)
    finally:
        for name in names:
            os.unlink(f"/etc/pam.d/{name}")

    overhead = timer.median("pam-module") - timer.median("pam-kdf")
    exec_overhead = timer.median("pam-exec") - timer.median("pam-kdf")
    ratio, least = timer.ratios("pam-module", "pam-exec")
    bench.report.section(15, [
        f"PAM authentication, PBKDF2 at {cost:,} iterations (pamtester, password on stdin):",
        timer.row("pamtester → pam_accounts.so → accounts pam-helper", "pam-module"),
        timer.row("pamtester → pam_exec.so → accounts pam-auth", "pam-exec"),
        timer.row("openssl kdf … PBKDF2 (same cost)", "pam-kdf"),
        f"  module's overhead beyond the KDF: {ms(overhead)} (median)   target ≤ "
        f"{ms(OVERHEAD_TARGET)}: {verdict(overhead <= OVERHEAD_TARGET)}   (earlier target ≤ "
        f"{ms(EARLIER_OVERHEAD_TARGET)}: {verdict(overhead <= EARLIER_OVERHEAD_TARGET)})",
        f"  pam_exec's overhead beyond the KDF: {ms(exec_overhead)} (median)",
        ratio_line("module/pam_exec", ratio, least, PAM_EXEC_TARGET, 3),
    ])
    bench.report.markdown(15, [
        f"| pamtester through `pam_accounts.so` ({cost:,} iterations, installed helper) | "
        f"{timer.cells('pam-module')} | {ms(overhead)} beyond the KDF; {ratio:.3f}× pam_exec | "
        f"≤ {ms(OVERHEAD_TARGET)} ({verdict(overhead <= OVERHEAD_TARGET)}; earlier ≤ "
        f"{ms(EARLIER_OVERHEAD_TARGET)}: {verdict(overhead <= EARLIER_OVERHEAD_TARGET)}); "
        f"≤ {PAM_EXEC_TARGET}× ({verdict(ratio <= PAM_EXEC_TARGET)}) |",
        f"| pamtester through `pam_exec` + `pam-auth` | {timer.cells('pam-exec')} | "
        f"{ms(exec_overhead)} beyond the KDF | |",
    ])
    bench.report.run_count(15, f"{options.runs} per PAM path and KDF")
