"""`store health` and the syncs that could not reach the server: a host keeps them (how many,
the first and the last, the last reason) in `unreached-syncs` beside its login cache, and the
next sync that reaches the server reports them with its report (migration v23) and forgets
them; `store health` tells them while the report is recent (exit 1, --unreached-hours).

The host is this machine under another host name, its login cache's folder in the test's own
(ACCOUNTS_LOGIN_CACHE); the server is away for its syncs through a store URI whose socket folder
holds nothing. Oracles: the host's file and the store's row, read apart from the program, and the
exact lines, keys and exit codes."""

import json

import pytest

from cachehelp import away_uri
from pgcluster import cannot_connect
from stores import store_execute
from test_store_health import HOST, facts, host_row, report, unique_base

UNREACHED = ["unreached", "unreached_first", "unreached_last", "unreached_reason",
             "unreached_reported_at"]
REASON_LENGTH = 200


class Host:
    """`HOST` on `device`: its login cache's folder (and so its unreached syncs) in the test's
    folder."""

    def __init__(self, device, tmp_path):
        self.device = device
        self.folder = tmp_path / "var"
        self.file = self.folder / "unreached-syncs"
        self.away = away_uri(tmp_path / "no-server")

    def run(self, *args, database=None):
        env = self.device.env(ACCOUNTS_HOST_NAME=HOST,
                              ACCOUNTS_LOGIN_CACHE=str(self.folder / "login-cache.sqlite3"))
        if database:
            env["ACCOUNTS_DATABASE"] = database
        return self.device.run(*args, env=env)

    def sync(self):
        result = self.run("userdb", "sync")
        assert (result.code, result.stderr) == (0, ""), result
        return result

    def sync_away(self) -> str:
        """A sync whose server is away: exit 3, one sentence; returns it."""
        result = self.run("userdb", "sync", database=self.away)
        port = self.device.env().get("PGPORT") or "5432"
        sentence = cannot_connect(f"on the socket {self.away.split('host=')[1]} (port {port})",
                                  self.away, "No such file or directory (is the server running?)")
        assert (result.code, result.stdout, result.stderr) == (3, "", sentence + "\n"), result
        return sentence

    def kept(self) -> dict:
        """The host's file, as a dict (the header checked)."""
        lines = self.file.read_text().splitlines()
        assert lines[0] == "accounts unreached syncs 1", lines
        assert self.file.stat().st_mode & 0o777 == 0o600
        return dict(line.split(" ", 1) for line in lines[1:])


def bounded(sentence: str) -> str:
    return sentence if len(sentence) <= REASON_LENGTH else sentence[:REASON_LENGTH - 1] + "…"


def with_records(host):
    folder = host.folder.parent / f"{HOST}-userdb"
    base = unique_base()
    enabled = host.run("userdb", "enable", "--folder", str(folder), "--uids",
                       f"{base}-{base + 99}")
    assert (enabled.code, enabled.stderr) == (0, ""), enabled
    host.sync()


def unreached_problem(count, first, last, reason) -> str:
    reason = reason[:-1] if reason.endswith(".") else reason
    return (f"{HOST} could not reach the server {count} times between {first} and {last}, "
            f"last: {reason}.")


@pytest.mark.every_postgresql_run
def test_unreached_syncs_are_reported_by_the_next_sync(activated, tmp_path):
    """Three syncs while the server is away: each exit 3 in one sentence, counted on the host
    (first, last, the last reason); the next sync that reaches the server reports them and
    forgets them; store health tells them in text and JSON and exits 1, until
    --unreached-hours 0."""
    host = Host(activated, tmp_path)
    with_records(host)
    sentences = [host.sync_away() for _ in range(3)]
    kept = host.kept()
    reason = bounded(sentences[-1])
    assert (kept["host"], kept["count"], kept["reason"]) == (HOST, "3", reason), kept
    assert kept["first"] <= kept["last"], kept
    assert all(report(activated)[column] is None for column in UNREACHED)

    host.sync()
    assert not host.file.exists()
    seen = report(activated)
    assert (seen["unreached"], seen["unreached_first"], seen["unreached_last"],
            seen["unreached_reason"]) == (3, kept["first"], kept["last"], reason), seen
    assert seen["unreached_reported_at"] >= seen["contact_at"], seen

    problem = unreached_problem(3, kept["first"], kept["last"], reason)
    result = activated.run("store", "health")
    assert (result.code, result.stderr) == (1, ""), result
    assert result.out_lines == ["Store health: degraded (1 problem).", problem] + facts(
        activated) + [host_row(activated)], result

    result = activated.run("store", "health", "--json")
    assert (result.code, result.stderr) == (1, ""), result
    body = json.loads(result.stdout)
    assert (body["healthy"], body["problems"]) == (False, [problem]), body
    entry = body["hosts"][0]
    assert {k: entry[k] for k in ("unreached", "unreachedFirst", "unreachedLast",
                                  "unreachedReason", "unreachedReportedAt", "problems")} == {
        "unreached": 3, "unreachedFirst": kept["first"], "unreachedLast": kept["last"],
        "unreachedReason": reason, "unreachedReportedAt": seen["unreached_reported_at"],
        "problems": [problem]}, entry

    # Reported more than --unreached-hours ago: no longer a problem, still in the JSON.
    result = activated.run("store", "health", "--unreached-hours", "0", "--json")
    assert result.code == 0, result
    assert json.loads(result.stdout)["hosts"][0]["unreached"] == 3, result

    # A later sync that reaches the server reports nothing more: the host kept nothing.
    host.sync()
    assert report(activated)["unreached_reported_at"] == seen["unreached_reported_at"]


@pytest.mark.every_postgresql_run
def test_a_report_that_fails_keeps_the_count(activated, tmp_path):
    """A sync that works but whose report cannot be written (the store refuses the row): exit
    0, the host keeps its count; once the report can be written, the next sync reports it."""
    host = Host(activated, tmp_path)
    with_records(host)
    sentence = host.sync_away()
    kept = host.kept()
    assert kept["count"] == "1", kept
    store_execute(activated.db, "ALTER TABLE accounts.host_report ADD CONSTRAINT "
                  "unreached_refused CHECK (unreached IS NULL)")
    try:
        host.sync()
        assert host.kept() == kept
        assert report(activated)["unreached"] is None
    finally:
        store_execute(activated.db, "ALTER TABLE accounts.host_report DROP CONSTRAINT "
                      "unreached_refused")
    host.sync()
    assert not host.file.exists()
    seen = report(activated)
    assert (seen["unreached"], seen["unreached_reason"]) == (1, bounded(sentence)), seen
    result = activated.run("store", "health")
    assert (result.code, result.out_lines[:2]) == (1, [
        "Store health: degraded (1 problem).",
        f"{HOST} could not reach the server once, at {kept['first']}, last: "
        f"{bounded(sentence).rstrip('.')}."]), result
