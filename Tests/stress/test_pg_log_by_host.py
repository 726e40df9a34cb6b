"""The host in the audit log, across hosts sharing one PostgreSQL store: 12 logins at once from
two hosts (6 each, right and wrong passwords mixed) are each logged with the host they ran on
(its node name, host-1 or host-2: hosts.py gives every client its own UTS namespace), and
`log --host` on a third host tells them apart exactly, as `session list` does the sessions.

The store is PostgreSQL, shared by many hosts (see hosts.py). The database is read with psql,
one statement per snapshot, as the oracle; `log --json` is what the program says.
"""

from __future__ import annotations

import json

from hosts import HostProc
from pg_store import PgContext, new_database, pg_last_event, pg_setup, query
from runner import PASSWORD, WRONG_PASSWORD, Gate, login_args, released_at_once


def test_log_by_host_tells_two_hosts_apart(pg: PgContext):
    server, hosts = pg.server, pg.hosts
    assert hosts.uts, f"the hosts need host names of their own: {hosts.mode}"
    db, uri = new_database(server, "l_host")
    admin = hosts.host("host-0")
    names = [f"h{i}" for i in range(6)]
    pg_setup(pg, uri, admin, "h", names)
    two = [hosts.host("host-1"), hosts.host("host-2")]
    before = pg_last_event(server, db)

    # Each host logs every name in once; even names with the right password, odd ones wrong.
    gate = Gate()
    plan = [(two[k % 2], names[k // 2]) for k in range(12)]
    procs = [HostProc(hosts, host, login_args(name), uri, stdin_pipe=True, gate=gate)
             for host, name in plan]
    secrets = [PASSWORD if int(name[1:]) % 2 == 0 else WRONG_PASSWORD for _, name in plan]
    results, how = released_at_once(gate, procs, secrets)
    codes = [r.code for r in results]
    wanted = [0 if s == PASSWORD else 1 for s in secrets]
    assert codes == wanted, f"12 logins at once from 2 hosts ({how}): exits {codes}, not {wanted}"

    # The oracle: every event since, with its host, as stored.
    rows = query(server, db, "SELECT json_agg(json_build_object('kind', kind, 'key', username_key,"
                 f" 'host', host) ORDER BY id) FROM accounts.audit_event WHERE id > {before}")
    stored = json.loads(rows)
    expected = sorted((("login_success" if s == PASSWORD else "login_failure"), name, host.name)
                      for (host, name), s in zip(plan, secrets))
    assert sorted((e["kind"], e["key"], e["host"]) for e in stored) == expected, stored

    reader = hosts.host("host-3")
    for host in two:
        shown = hosts.run(reader, ["log", "--json", "--host", host.name], uri)
        assert (shown.code, shown.stderr) == (0, ""), shown.brief()
        events = [json.loads(line) for line in shown.stdout.splitlines()]
        mine = sorted((("login_success" if s == PASSWORD else "login_failure"), name)
                      for (h, name), s in zip(plan, secrets) if h is host)
        assert sorted((e["event"], e["user"]) for e in events) == mine, (host.name, events)
        assert {e["host"] for e in events} == {host.name}, events
        # Combined with the other filters: the host's failures only.
        failed = hosts.run(reader, ["log", "--json", "--host", host.name, "--event",
                                    "login_failure"], uri)
        assert sorted(json.loads(line)["user"] for line in failed.stdout.splitlines()) == sorted(
            name for kind, name in mine if kind == "login_failure"), failed.brief()
    # The administrator's events came from host-0; no event names the reader.
    admin_events = hosts.run(reader, ["log", "--json", "--host", "host-0"], uri)
    assert [json.loads(line)["event"] for line in admin_events.stdout.splitlines()] == (
        ["activation"] + ["account_added"] * 6), admin_events.brief()
    nothing = hosts.run(reader, ["log", "--host", "host-3"], uri)
    assert (nothing.code, nothing.stdout, nothing.stderr) == (0, "", ""), nothing.brief()

    # The sessions of the right logins, each with the host it was started on. A host's logins
    # share its session file, and a login ends the session the file held when it read it: of
    # logins racing on one host, those that found another's session replaced it. So each
    # host keeps at least one (the last to write its file), and every session kept is one of
    # that host's right logins.
    listed = hosts.run(reader, ["session", "list", "--json"], uri)
    sessions = {(s["username"], s["host"]) for s in map(json.loads, listed.stdout.splitlines())}
    started = {(name, host.name) for (host, name), s in zip(plan, secrets) if s == PASSWORD}
    assert sessions <= started and {h for _, h in sessions} == {h for _, h in started}, \
        listed.brief()
