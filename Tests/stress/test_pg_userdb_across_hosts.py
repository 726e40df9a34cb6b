"""Hosts sharing a PostgreSQL store, each keeping user records in a folder of its own: 12
`user add` released at once from 3 hosts (4 each) all succeed with 12 different uids; after
`userdb sync` on every host, the 3 folders hold the same records (the owner and the 12, each
with its per-user group and links), every uid is one the store handed out, and none repeats.
Then one more account, added on one host, reaches the others at their next sync as its four
files alone (the store's change counter against each folder's), and a sync with nothing behind
writes nothing.

The hosts are those of hosts.py (own host name, network namespace, HOME); each host's folder is
in its HOME, where NSS does not look: the records are read as files. Run directly and through
PgBouncer (conftest's `pg`).
"""

from __future__ import annotations

import json
import pathlib

from hosts import HostProc
from pg_store import PgContext, new_database, pg_setup, query
from runner import PASSWORD, Gate, released_at_once, user_add_args


def records(folder: pathlib.Path) -> dict[str, dict]:
    """The folder's record files by name (links left out), each read as JSON."""
    return {p.name: json.loads(p.read_text()) for p in sorted(folder.iterdir())
            if p.suffix in (".user", ".group", ".membership") and not p.is_symlink()}


def test_users_added_on_several_hosts_reach_every_host(pg: PgContext):
    server, hosts = pg.server, pg.hosts
    db, uri = new_database(server, "u_userdb")
    admin = hosts.host("host-00")
    pg_setup(pg, uri, admin, "u", [])
    three = [hosts.host(f"host-{i}") for i in (1, 2, 3)]
    for host in three:
        enabled = hosts.run(host, ["userdb", "enable", "--folder", str(host.home / "userdb"),
                                   "--uids", "24000-24099"], uri)
        assert enabled.code == 0, f"userdb enable on {host.name}: {enabled.brief()}"

    names = [f"ua{k:02d}" for k in range(12)]
    gate = Gate()
    procs = [HostProc(hosts, three[k % 3], user_add_args(name), uri, stdin_pipe=True, gate=gate)
             for k, name in enumerate(names)]
    results, how = released_at_once(gate, procs, [PASSWORD] * len(procs))
    assert all(r.code == 0 for r in results), (
        f"12 user add from 3 hosts at once ({how}) all succeed: "
        f"{[r.brief() for r in results if r.code != 0][:3]}")

    synced = [hosts.run(host, ["userdb", "sync"], uri) for host in three]
    assert all(r.code == 0 for r in synced), f"userdb sync: {[r.brief() for r in synced]}"
    folders = [records(host.home / "userdb") for host in three]
    users = {name: record for name, record in folders[0].items() if name.endswith(".user")}
    assert sorted(users) == sorted(f"{n}.user" for n in ["owner", *names]), (
        f"host-1 holds a record for the owner and each added account: {sorted(users)}")
    differing = sorted({n for f in folders for n in f
                        if any(other.get(n) != f[n] for other in folders)})
    assert not differing, f"after sync the three hosts' folders hold the same records: {differing}"
    uids = [record["uid"] for record in users.values()]
    handed = {int(v) for v in query(server, db, "SELECT number FROM accounts.posix_id").split()}
    assert len(set(uids)) == len(uids) and set(uids) <= handed and all(
        24000 <= uid <= 24099 for uid in uids), (
        f"13 different uids in the range, each one the store handed out: {sorted(uids)}")
    for host in three:
        for record in users.values():
            link = host.home / "userdb" / f"{record['uid']}.user"
            assert link.is_symlink() and link.resolve().name == f"{record['userName']}.user", (
                f"{host.name}: {link.name} links to {record['userName']}.user")

    late = hosts.run(three[0], user_add_args("ulate"), uri, stdin=PASSWORD + "\n")
    assert late.code == 0, f"user add ulate on {three[0].name}: {late.brief()}"
    for host in three[1:]:
        synced = hosts.run(host, ["userdb", "sync"], uri)
        assert synced.stdout.endswith("; 4 files written, 0 removed.\n"), (
            f"{host.name}: the account added elsewhere is its four files: {synced.brief()}")
        idle = hosts.run(host, ["userdb", "sync"], uri)
        assert idle.stdout.endswith("; 0 files written, 0 removed.\n"), (
            f"{host.name}: nothing behind, nothing written: {idle.brief()}")
        assert (host.home / "userdb" / "ulate.user").exists()
        # What the folder applied is the store's change counter: the next sync reads that alone.
        (manifest,) = (host.home / "userdb").glob(".accounts-*.manifest.d")
        applied = json.loads((manifest / "head").read_text())["generation"]
        counter = query(server, db, "SELECT generation FROM accounts.userdb_generation")
        assert str(applied) == counter.strip(), (
            f"{host.name}: the folder applied {applied}, the store counts {counter}")
