"""With a store of 1,000,000 accounts (`--accounts`; made once per run by million.py: the real
`activate` and one `user add`, the rest inserted with Python's sqlite3 and checked with
`PRAGMA integrity_check`):

  login   of one account there vs `login` in a store of 1 account, same PBKDF2 cost. Target:
          ≤ 1.05×.
  user list --json vs `sqlite3 -json DB 'SELECT …'` (the same rows and columns), output to
          /dev/null. Target: ≤ 2×. And the peak RSS of `user list --json` (os.wait4's
          ru_maxrss, in a small reaper process of its own). Target: ≤ 64 MiB.
  user add (a new name each run) vs `activate` with the same flags and password on a copy of a
          Public store made once, same iterations. Target: ≤ 1.05×. And, for scale, the same
          `user add` in the store of a few accounts."""

from __future__ import annotations

import json
import time

from . import million
from .timing import (PASSWORD, PASSWORD_LINE, Reaper, fail, fresh_copy, ratio_line, say,
                     verdict)

# The columns and order of `user list --json`, from the rows the program reads.
LIST_KEYS = ["username", "fullName", "email", "owner", "disabled", "locked", "lockedUntil",
             "mustChangePassword", "failures", "createdAt", "lastLogin", "expiresAt", "expired",
             "groups", "uid", "home", "shell"]
LIST_SQL = (
    "SELECT a.username AS username, a.full_name AS fullName, a.email AS email,"
    " a.id IS act.owner_id AS owner, a.disabled_at IS NOT NULL AS disabled,"
    " coalesce(t.locked_until > strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 0) AS locked,"
    " CASE WHEN t.locked_until > strftime('%Y-%m-%dT%H:%M:%fZ', 'now') THEN t.locked_until END"
    " AS lockedUntil, a.must_change_password AS mustChangePassword,"
    " coalesce(t.failures, 0) AS failures, a.created_at AS createdAt,"
    " a.last_login_at AS lastLogin, a.expires_at AS expiresAt,"
    " coalesce(a.expires_at <= strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 0) AS expired,"
    " (SELECT json_group_array(name) FROM (SELECT g.name FROM group_member AS m"
    "  JOIN account_group AS g ON g.id = m.group_id WHERE m.account_id = a.id ORDER BY g.name))"
    " AS groups, a.uid AS uid, coalesce(a.home, '/home/' || a.username) AS home,"
    " coalesce(a.shell, '/bin/bash') AS shell"
    " FROM account AS a JOIN activation AS act ON act.id = 1"
    " LEFT JOIN login_throttle AS t ON t.username_key = a.username_key"
    " ORDER BY a.username_key")
LOGIN_TARGET = 1.05
LIST_TARGET = 2
RSS_TARGET_MIB = 64
ADD_TARGET = 1.05


class BigStore:
    """The measurements with a big store: login there vs in a 1-account store, `user list
    --json` vs sqlite3, `user add` vs `activate`."""

    def __init__(self, bench) -> None:
        self.options = bench.options
        self.count = bench.options.accounts
        self.work = bench.work
        self.binary = bench.binary
        self.timer = bench.timer
        self.small_env = bench.env  # the store of one account (alice), as the other modules
        folder = self.work / "many"
        folder.mkdir(mode=0o700)
        self.big = str(folder / "accounts.sqlite3")
        self.big_env = dict(bench.env, ACCOUNTS_DATABASE=self.big)
        self.reaper = Reaper(self.work, self.timer, self.big_env)
        public = self.work / "public"
        public.mkdir(mode=0o700)
        self.pristine = public / "accounts.sqlite3"
        self.fresh = self.work / "fresh"  # a copy of the pristine Public store for each activate
        self.fresh_env = dict(bench.env, ACCOUNTS_DATABASE=str(self.fresh / "accounts.sqlite3"))
        self.target = million.name_of(self.count // 2)
        self.made = ""
        self.added = 0

    def add_argv(self, name: str) -> list[str]:
        return [self.binary, "user", "add", "--username", name, "--full-name", "Bench Added",
                "--email", f"{name}@example.org", "--password-stdin"]

    def activate_argv(self, name: str) -> list[str]:
        return [self.binary, "activate", "--username", name, "--full-name", "Bench Added",
                "--email", f"{name}@example.org", "--password-stdin"]

    def next_name(self) -> str:
        self.added += 1
        return f"bench_add_{self.added:04d}"

    def login_argv(self, username: str) -> list[str]:
        return [self.binary, "login", "--username", username, "--password-stdin"]

    # Before the measurements

    def prepare(self) -> None:
        began = time.perf_counter()
        try:
            stats = million.make_store(self.binary, self.big, self.big_env, self.count, PASSWORD,
                                       log=say)
        except million.StoreError as error:
            fail(f"making the store of {self.count:,} accounts: {error}")
        self.made = (f"{self.count:,} accounts, {stats['bytes'] / 2**20:.0f} MiB, made in "
                     f"{time.perf_counter() - began:.0f} s ({stats['insert_seconds']:.0f} s "
                     f"inserting, {stats['check_seconds']:.0f} s integrity_check and "
                     f"foreign_key_check)")
        say(f"store of {self.made}")

        # A Public store, made once by the program: activated, then reset.
        public_env = dict(self.small_env, ACCOUNTS_DATABASE=str(self.pristine))
        self.timer.run("setup", self.activate_argv("bench_public"), PASSWORD_LINE,
                       record=False, env=public_env)
        self.timer.run("setup", [self.binary, "reset", "--yes"], record=False, env=public_env)

        # Each command does what it should before it is timed.
        for env, username in ((self.big_env, self.target), (self.small_env, "alice")):
            out = self.timer.run("check", self.login_argv(username), PASSWORD_LINE,
                                 record=False, env=env)
            if b"Welcome back" not in out:
                fail(f"login as {username} did not say Welcome back")
        self.check_list()
        self.reaper.floor()

    def check_list(self) -> None:
        """`user list --json` and the sqlite3 query print the same rows (booleans as 0/1 on
        sqlite3's side)."""
        ours = self.work / "list.json"
        theirs = self.work / "sqlite3.json"
        self.reaper.run("check", [self.binary, "user", "list", "--json"], output=str(ours),
                        record=False)
        self.reaper.run("check", ["sqlite3", "-json", self.big, LIST_SQL], output=str(theirs),
                        record=False)
        rows = differing = 0
        first: str | None = None
        wrong_keys: str | None = None
        with open(ours, encoding="utf-8") as a, open(theirs, encoding="utf-8") as b:
            for line in a:
                other = b.readline().strip().lstrip("[").rstrip(",]")
                rows += 1
                pairs = json.loads(line, object_pairs_hook=list)
                if [k for k, _ in pairs] != LIST_KEYS and wrong_keys is None:
                    wrong_keys = f"keys {[k for k, _ in pairs]}"
                mine = dict(pairs)
                expected = json.loads(other) if other else {}
                # sqlite3 -json gives the groups' JSON array as text.
                if isinstance(expected.get("groups"), str):
                    expected["groups"] = json.loads(expected["groups"])
                fields = [k for k in LIST_KEYS if mine.get(k, "<missing>") != expected.get(k)
                          or isinstance(mine.get(k), bool) != (k in (
                              "owner", "disabled", "locked", "mustChangePassword", "expired"))]
                if fields:
                    differing += 1
                    if first is None:
                        first = (f"row {rows} ({mine.get('username')}): "
                                 + ", ".join(f"{k} {mine.get(k, '<missing>')!r} vs "
                                             f"{expected.get(k)!r}" for k in fields))
            extra = sum(1 for line in b if line.strip().lstrip("[").rstrip(",]"))
        ours.unlink()
        theirs.unlink()
        if rows != self.count or extra:
            fail(f"user list --json printed {rows:,} lines, sqlite3 {rows + extra:,} rows; "
                 f"the store holds {self.count:,} accounts")
        if wrong_keys:
            fail(f"user list --json: {wrong_keys}, not {LIST_KEYS}")
        if differing:
            fail(f"user list --json differs from the rows in {differing:,} of {rows:,} lines; "
                 f"first: {first}")

    # The measurements, alternated

    def measure(self) -> None:
        for _ in range(self.options.million_runs):
            self.timer.run("login-many", self.login_argv(self.target), PASSWORD_LINE,
                           env=self.big_env)
            self.timer.run("login-one", self.login_argv("alice"), PASSWORD_LINE,
                           env=self.small_env)
        for _ in range(self.options.list_runs):
            self.reaper.run("list", [self.binary, "user", "list", "--json"])
            self.reaper.run("list-sqlite3", ["sqlite3", "-json", self.big, LIST_SQL])
        # Adding comes last: the logins and the lists above see exactly `count` accounts.
        fresh_copy(self.pristine, self.fresh)
        name = self.next_name()
        out = self.timer.run("check", self.activate_argv(name), PASSWORD_LINE,
                             record=False, env=self.fresh_env)
        if not out.startswith(f"Device activated for {name}.".encode()):
            fail(f"activate said {out[:200]!r}")
        for env in (self.big_env, self.small_env):
            out = self.timer.run("check", self.add_argv(name), PASSWORD_LINE,
                                 record=False, env=env)
            if out != f"Account added: {name}.\n".encode():
                fail(f"user add said {out[:200]!r}, not 'Account added: {name}.'")
        for _ in range(self.options.add_runs):
            name = self.next_name()
            self.timer.run("add-many", self.add_argv(name), PASSWORD_LINE, env=self.big_env)
            fresh_copy(self.pristine, self.fresh)
            self.timer.run("activate", self.activate_argv(name), PASSWORD_LINE,
                           env=self.fresh_env)
            self.timer.run("add-few", self.add_argv(name), PASSWORD_LINE,
                           env=self.small_env)

    # The figures

    def report(self, report) -> None:
        t, peak_mib = self.timer, self.reaper.peak_mib
        n = f"{self.count:,}"
        login_ratio, login_min = t.ratios("login-many", "login-one")
        list_ratio, list_min = t.ratios("list", "list-sqlite3")
        add_ratio, add_min = t.ratios("add-many", "activate")
        peak = peak_mib("list")
        report.section(50, [
            f"A store of {self.made}:",
            t.row(f"accounts login, store of {n} accounts", "login-many"),
            t.row("accounts login, store of 1 account", "login-one"),
            ratio_line(f"{n}/1", login_ratio, login_min, LOGIN_TARGET, 3)
            + f"   (CPU time {t.cpu_ratio('login-many', 'login-one'):.3f})",
            t.row("accounts user list --json > /dev/null", "list"),
            t.row("sqlite3 -json DB 'SELECT … FROM account …'", "list-sqlite3"),
            ratio_line("list/sqlite3", list_ratio, list_min, LIST_TARGET),
            f"  peak RSS of user list --json: {peak:.1f} MiB (highest of "
            f"{len(self.reaper.rss['list'])} runs; sqlite3 {peak_mib('list-sqlite3'):.1f} MiB; "
            f"/bin/true {peak_mib('floor'):.1f} MiB, the reaper's own mark, which a "
            f"child starts from)"
            f"   target ≤ {RSS_TARGET_MIB} MiB: {verdict(peak <= RSS_TARGET_MIB)}",
            t.row(f"accounts user add, store of {n}", "add-many"),
            t.row("accounts activate, copy of a Public store", "activate"),
            ratio_line("user add/activate", add_ratio, add_min, ADD_TARGET, 3)
            + f"   (CPU time {t.cpu_ratio('add-many', 'activate'):.3f})",
            t.row("accounts user add, store of a few accounts", "add-few"),
        ])
        report.markdown(50, [
            f"| `accounts login`, store of {n} accounts | {t.cells('login-many')} "
            f"| {login_ratio:.3f}× 1 account | ≤ {LOGIN_TARGET}× |",
            f"| `accounts login`, store of 1 account (same PBKDF2 cost) | {t.cells('login-one')} "
            f"| 1 | |",
            f"| `accounts user list --json`, {n} accounts, to /dev/null | {t.cells('list')} "
            f"| {list_ratio:.2f}× sqlite3 | ≤ {LIST_TARGET}× |",
            f"| `sqlite3 -json DB 'SELECT …'` (same rows and columns) "
            f"| {t.cells('list-sqlite3')} | 1 | |",
            f"| peak RSS of `accounts user list --json`, {n} accounts "
            f"| {peak:.1f} MiB | | sqlite3 {peak_mib('list-sqlite3'):.1f} MiB "
            f"| ≤ {RSS_TARGET_MIB} MiB |",
            f"| `accounts user add`, store of {n} accounts | {t.cells('add-many')} "
            f"| {add_ratio:.3f}× activate | ≤ {ADD_TARGET}× |",
            f"| `accounts activate` (same flags and password, copy of a Public store) "
            f"| {t.cells('activate')} | 1 | |",
            f"| `accounts user add`, store of a few accounts | {t.cells('add-few')} "
            f"| {t.ratios('add-few', 'activate')[0]:.3f}× activate | |",
        ])
        o = self.options
        report.run_count(50, f"{o.million_runs} per login of the {n}-account pair, "
                             f"{o.list_runs} per list command and {o.add_runs} per add command")


def test_a_store_of_many_accounts(bench, alice):
    store = BigStore(bench)
    store.prepare()
    store.measure()
    store.report(bench.report)
