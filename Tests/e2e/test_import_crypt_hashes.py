"""`accounts user import` of crypt(3) hashes: Apache's `htpasswd` files and /etc/shadow files
made with `mkpasswd` (libxcrypt). The schemes kept (and rehashed at the first login), the ones
refused by name, the cost ceilings, hashes of a bad length, and what a wrong password costs on an
imported hash."""

import statistics
import subprocess

import pytest

from conftest import BOB, BOB_PASSWORD, TIMING_BIN, USERNAME, WRONG_PASSWORD, cpu_seconds

# The helpers' asserts report their values as the tests' own do.
pytest.register_assert_rewrite("importing")
from importing import (CAROL, CAROL_PASSWORD, DAVE, DAVE_PASSWORD, DOMAIN,  # noqa: E402
                       ERIN, ERIN_PASSWORD, FRANK, FRANK_PASSWORD, htpasswd, import_, logs_in,
                       mkpasswd, names, nothing_imported, refused_login, shadow_line, starts,
                       tool, unchanged, write)


SHADOW_NEEDS_DOMAIN = ("shadow files hold no e-mail addresses: give --email-domain DOMAIN "
                       "(alice becomes alice@DOMAIN).")
SKIPPED_ENTRIES = ["daemon:*:19000:0:99999:7:::", "nobody:!:19000:0:99999:7:::",
                   "sync:!!:19000:0:99999:7:::", "games:!*:19000:0:99999:7:::",
                   "empty::19000:0:99999:7:::"]


# htpasswd

def test_htpasswd_bcrypt_logs_in_and_is_rehashed(activated):
    """`htpasswd -B` lines import with --email-domain (full name = user name, e-mail
    name@DOMAIN); each logs in with its password, and after that first login the stored hash is
    PBKDF2 and still works."""
    path = activated.root / "site.htpasswd"
    tool("htpasswd", "-B", "-b", "-c", str(path), BOB, BOB_PASSWORD)
    tool("htpasswd", "-B", "-b", str(path), CAROL, CAROL_PASSWORD)
    result = import_(activated, "site.htpasswd", "--email-domain", DOMAIN)
    assert (result.code, result.stdout, result.stderr) == (
        0, "Imported 2 accounts from site.htpasswd.\n", ""), result
    bob = activated.account(BOB)
    assert (bob["fullName"], bob["email"], bob["owner"]) == (BOB, f"{BOB}@{DOMAIN}", False)
    assert activated.stored_hash(BOB).startswith("$2y$")
    refused_login(activated, BOB, WRONG_PASSWORD)
    assert activated.stored_hash(BOB).startswith("$2y$")
    logs_in(activated, BOB, BOB_PASSWORD)
    assert activated.stored_hash(BOB).startswith("pbkdf2_sha256$")
    logs_in(activated, BOB, BOB_PASSWORD)
    logs_in(activated, CAROL, CAROL_PASSWORD)
    assert activated.stored_hash(CAROL).startswith("pbkdf2_sha256$")


def test_htpasswd_one_account(activated):
    """One line: `Imported 1 account from one.htpasswd.`"""
    write(activated, "one.htpasswd", htpasswd("-B", BOB, BOB_PASSWORD) + "\n")
    result = import_(activated, "one.htpasswd", "--email-domain", DOMAIN)
    assert (result.code, result.stdout, result.stderr) == (
        0, "Imported 1 account from one.htpasswd.\n", ""), result
    logs_in(activated, BOB, BOB_PASSWORD)


@pytest.mark.parametrize("option, prefix, name", [
    ("-m", "$apr1$", "Apache MD5"),
    ("-s", "{SHA}", "SHA-1"),
    ("-d", "", "DES"),
])
def test_htpasswd_weak_schemes_are_refused_by_name(activated, option, prefix, name):
    """`htpasswd -m` ($apr1$), `-s` ({SHA}) and `-d` (DES crypt) lines are refused naming the
    scheme, on their line; the good bcrypt line before them is not imported either."""
    weak = htpasswd(option, CAROL, CAROL_PASSWORD)
    assert weak.split(":", 1)[1].startswith(prefix)
    if option == "-d":
        assert len(weak.split(":", 1)[1]) == 13
    write(activated, "site.htpasswd", htpasswd("-B", BOB, BOB_PASSWORD) + "\n" + weak + "\n")
    before, events = activated.accounts(), activated.events()
    nothing_imported(import_(activated, "site.htpasswd", "--email-domain", DOMAIN),
                     starts("line 2 (carol): ", name))
    unchanged(activated, before, events)


def test_htpasswd_plain_text_is_refused(activated):
    """An `htpasswd -p` (plain text) line is a problem on its line; nothing imported."""
    write(activated, "site.htpasswd", htpasswd("-B", BOB, BOB_PASSWORD) + "\n"
          + htpasswd("-p", CAROL, CAROL_PASSWORD) + "\n")
    nothing_imported(import_(activated, "site.htpasswd", "--email-domain", DOMAIN),
                     starts("line 2 (carol): "))
    assert names(activated) == [USERNAME]


def test_htpasswd_needs_email_domain(activated):
    """htpasswd without --email-domain is a usage error (exit 2) asking for it; nothing written."""
    write(activated, "site.htpasswd", htpasswd("-B", BOB, BOB_PASSWORD) + "\n")
    events = activated.events()
    result = import_(activated, "site.htpasswd")
    assert (result.code, result.stdout) == (2, ""), result
    assert "give --email-domain DOMAIN" in result.stderr, result.stderr
    assert names(activated) == [USERNAME]
    assert activated.events() == events


# shadow

def test_shadow_imports_and_skips_entries_without_a_password(activated):
    """An /etc/shadow file: yescrypt and SHA-512 entries import and log in; `*`, `!`, `!!`, `!*`,
    empty and `!`-locked entries are skipped and named in the summary; one accounts_imported
    event `2 accounts (shadow)`."""
    locked = shadow_line("locked", "!" + mkpasswd("sha-512", "locked password here"))
    lines = (SKIPPED_ENTRIES[:2]
             + [shadow_line(BOB, mkpasswd("yescrypt", BOB_PASSWORD))]
             + SKIPPED_ENTRIES[2:] + [locked]
             + [shadow_line(CAROL, mkpasswd("sha-512", CAROL_PASSWORD))])
    write(activated, "shadow", "\n".join(lines) + "\n")
    result = import_(activated, "shadow", "--email-domain", DOMAIN)
    assert (result.code, result.stderr) == (0, ""), result
    assert result.out_lines == [
        "Imported 2 accounts from shadow.",
        "Skipped 6 entries without a password: daemon, nobody, sync, games, empty, locked."]
    assert names(activated) == [USERNAME, BOB, CAROL]
    assert activated.account(CAROL)["email"] == f"{CAROL}@{DOMAIN}"
    assert [(e["event"], e["detail"]) for e in activated.events()][1:] == [
        ("accounts_imported", "2 accounts (shadow)")]
    assert activated.stored_hash(BOB).startswith("$y$")
    logs_in(activated, BOB, BOB_PASSWORD)
    logs_in(activated, CAROL, CAROL_PASSWORD)


def test_every_kept_crypt_scheme_logs_in_and_is_rehashed(activated):
    """yescrypt, SHA-512, SHA-256, bcrypt $2b$ and $2a$ hashes from mkpasswd are kept as they
    are, log in with their passwords (a wrong one is refused) and become PBKDF2 at that login."""
    made = {BOB: ("yescrypt", BOB_PASSWORD, "$y$"), CAROL: ("sha-512", CAROL_PASSWORD, "$6$"),
            DAVE: ("sha-256", DAVE_PASSWORD, "$5$"), ERIN: ("bcrypt", ERIN_PASSWORD, "$2b$"),
            FRANK: ("bcrypt-a", FRANK_PASSWORD, "$2a$")}
    hashes = {name: mkpasswd(method, password) for name, (method, password, _) in made.items()}
    write(activated, "shadow", "".join(shadow_line(n, h) + "\n" for n, h in hashes.items()))
    result = import_(activated, "shadow", "--email-domain", DOMAIN)
    assert (result.code, result.stdout, result.stderr) == (
        0, "Imported 5 accounts from shadow.\n", ""), result
    for name, (_, password, prefix) in made.items():
        assert hashes[name].startswith(prefix)
        assert activated.stored_hash(name) == hashes[name]
        refused_login(activated, name, WRONG_PASSWORD)
        logs_in(activated, name, password)
        assert activated.stored_hash(name).startswith("pbkdf2_sha256$"), name
        logs_in(activated, name, password)


def test_imported_crypt_account_locks_like_any(activated):
    """Wrong passwords on an imported bcrypt account are counted and lock it (exit 4 at the
    fifth) like any account's; locked, its right password is refused too and the hash stays."""
    write(activated, "site.htpasswd", htpasswd("-B", BOB, BOB_PASSWORD) + "\n")
    assert import_(activated, "site.htpasswd", "--email-domain", DOMAIN).code == 0
    codes = [activated.run("login", "--no-session", "--username", BOB, "--password-stdin",
                           input=WRONG_PASSWORD + "\n").code for _ in range(5)]
    assert codes == [1, 1, 1, 1, 4]
    assert [e["event"] for e in activated.events()][2:] == ["login_failure"] * 5 + ["lockout"]
    locked = activated.run("login", "--no-session", "--username", BOB, "--password-stdin",
                           input=BOB_PASSWORD + "\n")
    assert (locked.code, locked.stdout) == (4, "")
    assert activated.account(BOB)["locked"] is True
    assert activated.stored_hash(BOB).startswith("$2y$")


def test_shadow_md5crypt_is_refused_by_name(activated):
    """An MD5-crypt entry on line 4: `line 4 (carol): MD5-crypt ($1$) hashes are too weak to
    keep.` exit 1; nothing imported, no event."""
    lines = SKIPPED_ENTRIES[:2] + [shadow_line(BOB, mkpasswd("sha-512", BOB_PASSWORD)),
                                   shadow_line(CAROL, mkpasswd("md5crypt", CAROL_PASSWORD))]
    write(activated, "shadow", "\n".join(lines) + "\n")
    before, events = activated.accounts(), activated.events()
    nothing_imported(import_(activated, "shadow", "--email-domain", DOMAIN),
                     "line 4 (carol): MD5-crypt ($1$) hashes are too weak to keep.")
    unchanged(activated, before, events)


# Cost ceilings: made once by the tools (Tests/AccountsCryptoTests/CryptHashTests.swift says
# how), with CEILING_PASSWORD; each takes seconds or a gigabyte to make again.
CEILING_PASSWORD = "correct horse battery staple"
BCRYPT_17 = "$2y$17$34UbECdb56WohxmEu7hk.uLWnNrnRHD8hIDutvz0sWy9OpI8MttXG"
BCRYPT_18 = "$2b$18$2JfQ5CrQD4bcgFBPWtXVheMJGeOyaesm9YWJwSKe/hutoIROUbVae"
SHA512_10M = ("$6$rounds=10000000$DSF6O0Z0KOatQf6d$7r0u/Sm/31uyYlTt1Vn9R2m6bYCcG7XRtklJGMhBW."
              "IWeSPM5MCIfjmh2E.yNT7LSPxh5bwYMfIDcTtBjjDP/1")
SHA256_10M = "$5$rounds=10000000$yspvEwjT.30Y.vlz$QxmTVeuAtGetpLNaLZejIOat/K2RX0rCwXcRdH3LlMB"
YESCRYPT_2GIB = "$y$jGT$gD9VinzuIG2QM95bOgIMF.$PhZf4QCdnbvAQSvfwjCe5hKAIuqKvjx1tQLB2V5KoK7"
YESCRYPT_P2 = "$y$j9T..$gD9VinzuIG2QM95bOgIMF.$l.LV7XM4rzXNY8LKIIKJ1dFgkO69i0SOWN7L0KY9Kq9"
OVER_CEILING = "so each login against it would take too long."


def test_hashes_over_the_cost_ceiling_are_refused_on_their_lines(activated):
    """A shadow file whose hashes cost more than their scheme's ceiling (bcrypt cost 18 and 31,
    SHA-512 crypt at 10,000,000 and 999,999,999 rounds, SHA-256 crypt at 10,000,000, yescrypt
    needing 2 GiB or two lanes) beside ones at the ceiling (bcrypt 17 from htpasswd -C 17) and
    the tools' defaults: each over is refused on its line with its cost and the ceiling; exit 1,
    nothing imported, no event."""
    bcrypt_31 = "$2y$31$" + BCRYPT_17[7:]
    sha512_huge = SHA512_10M.replace("rounds=10000000$", "rounds=999999999$")
    lines = [shadow_line("b17", BCRYPT_17), shadow_line("b18", BCRYPT_18),
             shadow_line("b31", bcrypt_31), shadow_line("s10m", SHA512_10M),
             shadow_line("s999m", sha512_huge), shadow_line("t10m", SHA256_10M),
             shadow_line("y2g", YESCRYPT_2GIB), shadow_line("ytwo", YESCRYPT_P2),
             shadow_line(BOB, mkpasswd("yescrypt", BOB_PASSWORD))]
    write(activated, "shadow", "\n".join(lines) + "\n")
    before, events = activated.accounts(), activated.events()
    nothing_imported(
        import_(activated, "shadow", "--email-domain", DOMAIN),
        f"line 2 (b18): the bcrypt hash with cost 18 is above the ceiling of cost 17, "
        f"{OVER_CEILING}",
        f"line 3 (b31): the bcrypt hash with cost 31 is above the ceiling of cost 17, "
        f"{OVER_CEILING}",
        f"line 4 (s10m): the sha512-crypt hash with 10,000,000 rounds is above the ceiling of "
        f"9,999,999 rounds, {OVER_CEILING}",
        f"line 5 (s999m): the sha512-crypt hash with 999,999,999 rounds is above the ceiling "
        f"of 9,999,999 rounds, {OVER_CEILING}",
        f"line 6 (t10m): the sha256-crypt hash with 10,000,000 rounds is above the ceiling of "
        f"9,999,999 rounds, {OVER_CEILING}",
        f"line 7 (y2g): the yescrypt hash with 2,048 MiB of memory is above the ceiling of "
        f"1,024 MiB of memory, {OVER_CEILING}",
        f"line 8 (ytwo): the yescrypt hash with p=2 is above the ceiling of p=1, "
        f"{OVER_CEILING}")
    unchanged(activated, before, events)


def test_htpasswd_bcrypt_over_the_ceiling_is_refused(activated):
    """An htpasswd line at bcrypt's highest cost, `$2y$31$…`, is refused on its line; the same
    file at cost 17 (what `htpasswd -B -C 17` makes, its highest) imports."""
    bcrypt_31 = "$2y$31$" + BCRYPT_17[7:]
    write(activated, "site.htpasswd", f"{BOB}:{bcrypt_31}\n")
    nothing_imported(import_(activated, "site.htpasswd", "--email-domain", DOMAIN),
                     f"line 1 (bob): the bcrypt hash with cost 31 is above the ceiling of "
                     f"cost 17, {OVER_CEILING}")
    write(activated, "site.htpasswd", f"{BOB}:{BCRYPT_17}\n")
    result = import_(activated, "site.htpasswd", "--email-domain", DOMAIN)
    assert (result.code, result.stdout, result.stderr) == (
        0, "Imported 1 account from site.htpasswd.\n", ""), result


@pytest.mark.parametrize("planted, said", [
    (BCRYPT_18, "a bcrypt hash with cost 18; the ceiling is cost 17"),
    (SHA512_10M, "a sha512-crypt hash with 10,000,000 rounds; the ceiling is 9,999,999 rounds"),
    (YESCRYPT_2GIB, "a yescrypt hash with 2,048 MiB of memory; the ceiling is 1,024 MiB of "
                    "memory"),
])
def test_stored_hash_over_the_ceiling_is_damaged_at_login(activated, planted, said):
    """A hash over its ceiling planted in the store (as an earlier import could leave it) is
    treated as damaged: its right password gets the one generic refusal at once (libxcrypt,
    which would say yes after seconds or a gigabyte, is not asked), the failure is counted, and
    the audit line names the cost."""
    activated.add_user()
    activated.set_stored_hash(planted, BOB)
    refused_login(activated, BOB, CEILING_PASSWORD)
    last = activated.events()[-1]
    assert (last["event"], last["user"], last["detail"]) == (
        "login_failure", BOB,
        f"the stored password hash is over the cost ceiling ({said}), so it was not checked")
    assert activated.account(BOB)["failures"] == 1
    assert activated.stored_hash(BOB) == planted


def test_shadow_needs_email_domain(activated):
    """A shadow file without --email-domain: exit 2 with the contract's sentence; nothing
    written."""
    write(activated, "shadow", shadow_line(BOB, mkpasswd("sha-512", BOB_PASSWORD)) + "\n")
    events = activated.events()
    result = import_(activated, "shadow")
    assert (result.code, result.stdout, result.stderr) == (2, "", SHADOW_NEEDS_DOMAIN + "\n")
    assert names(activated) == [USERNAME]
    assert activated.events() == events


def test_hashes_of_a_bad_length_are_problems_on_their_lines(activated):
    """A SHA-512 hash cut short (too short for the store), one a character too long, a bcrypt
    hash cut short and a yescrypt hash with a character too many, in shadow and htpasswd files:
    each is a problem on its line (exit 1 like every bad line, not a storage error), and
    nothing is stored."""
    sha = mkpasswd("sha-512", BOB_PASSWORD)
    yes = mkpasswd("yescrypt", CAROL_PASSWORD)
    write(activated, "shadow", "".join(shadow_line(n, h) + "\n" for n, h in [
        (BOB, "$6$abc"), (CAROL, sha + "A"), (DAVE, sha), (ERIN, yes + "x")]))
    before, events = activated.accounts(), activated.events()
    damaged = "the password hash is damaged."
    nothing_imported(import_(activated, "shadow", "--email-domain", DOMAIN),
                     f"line 1 (bob): {damaged}", f"line 2 (carol): {damaged}",
                     f"line 4 (erin): {damaged}")
    bcrypt = htpasswd("-B", FRANK, FRANK_PASSWORD)
    write(activated, "site.htpasswd", bcrypt + "\n" + bcrypt.replace(FRANK, BOB)[:-5] + "\n")
    nothing_imported(import_(activated, "site.htpasswd", "--email-domain", DOMAIN),
                     f"line 2 (bob): {damaged}")
    unchanged(activated, before, events)


# The cost of a wrong password on an imported crypt(3) hash

def login_cpu(device, username, password):
    """CPU seconds of one refused `login` at the real iteration count."""
    return cpu_seconds(["login", "--no-session", "--username", username, "--password-stdin"],
                       password + "\n", device.env(fast=False))


def test_wrong_password_on_yescrypt_costs_an_unknown_name(device):
    """At the real iteration count, a wrong password for an imported yescrypt account costs at
    least about what an unknown name costs (CPU medians of 3 alternated runs: ratio > 0.5)."""
    device.activate(fast=False)
    write(device, "shadow", shadow_line(BOB, mkpasswd("yescrypt", BOB_PASSWORD)) + "\n")
    result = subprocess.run([TIMING_BIN, "user", "import", "shadow", "--email-domain", DOMAIN],
                            env=device.env(fast=False), cwd=str(device.root),
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    wrong, unknown = [], []
    for turn in range(3):
        wrong.append(login_cpu(device, BOB, WRONG_PASSWORD))
        unknown.append(login_cpu(device, f"nobody{turn}", WRONG_PASSWORD))
    wrong_median, unknown_median = statistics.median(wrong), statistics.median(unknown)
    assert unknown_median > 0.02, unknown
    assert wrong_median / unknown_median > 0.5, (wrong, unknown)
    assert device.stored_hash(BOB).startswith("$y$")
