"""A fleet's user records under least privilege (`accounts store roles`): three hosts run
`userdb enable`, `sync`, `status` and `disable` as the host role; the administrator adds an
account from a machine that keeps no records, and its uid, given by that command, reaches every
host at its next sync. An account made before the store gave numbers is said, in one sentence,
to be the administrator's to number; `status` does not advise a sync that cannot. The host
role's own SQL can write neither another host's entry nor a number.

The hosts are this machine under other host names (`unshare --uts`), each folder outside NSS's
(the records read as files). Oracles: psql (as the owner, and as the host role), the files."""

import json

import pytest

from conftest import BOB, BOB_EMAIL, BOB_FULL_NAME, BOB_PASSWORD, USERNAME
from pgcluster import as_role
from pgcluster import client, pg, pgdb, roles  # noqa: F401
from userdbhelp import on_host

pytestmark = pytest.mark.postgresql_only

HOSTS = ("host-1", "host-2", "host-3")
RANGE = "20000-29999"
UNNUMBERED = [f"No user record for {USERNAME}: it has no uid yet.",
              "1 account or group has no number yet, and this host's role may not give one: the "
              "administrator's accounts userdb sync gives them theirs."]


def synced(folder, users, groups, written, removed=0) -> str:
    return (f"User records in {folder} (uids {RANGE}): {users} "
            f"{'user' if users == 1 else 'users'}, {groups} {'group' if groups == 1 else 'groups'}"
            f"; {written} {'file' if written == 1 else 'files'} written, {removed} removed.\n")


def lines(result) -> tuple:
    return result.code, result.stdout, result.err_lines


def test_an_account_added_where_no_records_are_kept_reaches_every_host(pg, pgdb, tmp_path,
                                                                        roles):
    admin, host = roles
    fleet = as_role(pg, pgdb, tmp_path, host, "fleet")
    office = as_role(pg, pgdb, tmp_path, admin, "office")
    folders = {name: tmp_path / f"{name}-userdb" for name in HOSTS}

    # Every host turns its records on with the host role. The owner, made before any host kept
    # records, has no number, which the host role may not give: said once, nothing failed.
    for name in HOSTS:
        enabled = on_host(fleet, name, "userdb", "enable", "--folder", str(folders[name]))
        assert lines(enabled) == (0, synced(folders[name], 0, 0, 0), UNNUMBERED), enabled
    status = on_host(fleet, "host-1", "userdb", "status")
    assert status.code == 0 and status.stderr == "", status
    assert "Behind: no" in status.out_lines and status.out_lines[-2:] == UNNUMBERED, status
    assert pg.psql("SELECT host FROM accounts.userdb_host ORDER BY 1", pgdb).split() == list(
        HOSTS)

    # The administrator adds an account from a machine that keeps no records: its uid and
    # home are given there, in that command.
    added = office.run("user", "add", "--username", BOB, "--full-name", BOB_FULL_NAME,
                       "--email", BOB_EMAIL, "--password-stdin", input=BOB_PASSWORD + "\n")
    assert lines(added) == (0, f"Account added: {BOB}.\n", []), added
    uid, home = pg.psql(f"SELECT uid, home FROM accounts.account WHERE username = '{BOB}'",
                        pgdb).strip().split("|")
    assert pg.psql("SELECT number, kind, name FROM accounts.posix_id", pgdb).split() == [
        f"{uid}|user|{BOB}"]
    assert home == f"/home/{BOB}" and 20000 <= int(uid) <= 29999

    # Each host's sync, as the host role, writes its records with that uid. It reads only what
    # changed (bob), so it names no other account, but still counts those left unnumbered.
    for name in HOSTS:
        result = on_host(fleet, name, "userdb", "sync")
        assert lines(result) == (0, synced(folders[name], 1, 1, 4), UNNUMBERED[1:]), result
        record = json.loads((folders[name] / f"{BOB}.user").read_text())
        assert (record["uid"], record["homeDirectory"]) == (int(uid), home)

    # The administrator's sync numbers the owner; then the hosts' syncs have nothing to say.
    numbered = on_host(office, "host-1", "userdb", "sync")
    assert lines(numbered) == (0, synced(folders["host-1"], 2, 2, 4), []), numbered
    for name in HOSTS[1:]:
        result = on_host(fleet, name, "userdb", "sync")
        assert lines(result) == (0, synced(folders[name], 2, 2, 4), []), result
    status = on_host(fleet, "host-3", "userdb", "status")
    assert status.code == 0 and "Behind: no" in status.out_lines, status
    assert status.out_lines[-1].startswith("SSH keys command: "), status

    # A host turns its records off with the host role: its entry goes, the others' stay.
    disabled = on_host(fleet, "host-3", "userdb", "disable")
    assert lines(disabled) == (
        0, f"User records turned off: 8 files, the manifest and the folder {folders['host-3']} "
        "removed.\n",
        []), disabled
    assert pg.psql("SELECT host FROM accounts.userdb_host ORDER BY 1", pgdb).split() == list(
        HOSTS[:2])
    assert pg.psql("SELECT kind, host, detail FROM accounts.audit_event WHERE kind LIKE "
                   "'userdb_%' ORDER BY id", pgdb).splitlines() == [
        *(f"userdb_enabled|{name}|{folders[name]}: 0 written, 0 removed" for name in HOSTS),
        *(f"userdb_synced|{name}|{folders[name]}: 4 written, 0 removed" for name in HOSTS),
        f"userdb_synced|host-1|{folders['host-1']}: 4 written, 0 removed",
        *(f"userdb_synced|{name}|{folders[name]}: 4 written, 0 removed" for name in HOSTS[1:]),
        f"userdb_disabled|host-3|{folders['host-3']}: 8 removed, folder removed"]


# What the host role's own SQL may not do: another host's entry, the range, a number.
DENIED = [
    "UPDATE accounts.userdb_host SET folder = '/tmp/elsewhere' WHERE host = 'host-2'",
    "DELETE FROM accounts.userdb_host WHERE host = 'host-2'",
    "INSERT INTO accounts.userdb_host (host, folder, enabled_at) VALUES ('host-9', '/x', now())",
    "UPDATE accounts.userdb_setting SET first_uid = 1000",
    "INSERT INTO accounts.posix_id (number, kind, name, given_at) VALUES (20000, 'user', 'x', "
    "now())",
    f"UPDATE accounts.account SET uid = NULL WHERE username = '{USERNAME}'",
]


@pytest.mark.parametrize("sql", DENIED, ids=lambda s: s[:40])
def test_the_host_roles_own_sql_writes_no_hosts_entry_nor_number(pg, pgdb, tmp_path, roles, sql):
    _, host = roles
    fleet = as_role(pg, pgdb, tmp_path, host, "fleet")
    folder = tmp_path / "host-2-userdb"
    assert on_host(fleet, "host-2", "userdb", "enable", "--folder", str(folder)).code == 0
    before = pg.psql("SELECT host, folder FROM accounts.userdb_host", pgdb)
    table = sql.split("accounts.")[1].split()[0]
    proc = pg.psql(sql, pgdb, user=host, check=False)
    assert (proc.returncode, proc.stderr) == (
        1, f"ERROR:  permission denied for table {table}\n"), proc
    assert pg.psql("SELECT host, folder FROM accounts.userdb_host", pgdb) == before
    assert pg.psql("SELECT count(*) FROM accounts.posix_id", pgdb).strip() == "0"


def test_the_range_stays_the_administrators(pg, pgdb, tmp_path, roles):
    """`userdb enable --uids` as the host role is refused (one sentence, nothing written)."""
    _, host = roles
    fleet = as_role(pg, pgdb, tmp_path, host, "fleet")
    folder = tmp_path / "host-1-userdb"
    result = on_host(fleet, "host-1", "userdb", "enable", "--folder", str(folder), "--uids",
                     "24000-24099")
    assert (result.code, result.stdout) == (3, ""), result
    assert result.stderr.startswith(f"Cannot write the database {fleet.database}: the role has "
                                    "no permission (permission denied for table activation)"), \
        result
    assert pg.psql("SELECT first_uid, last_uid FROM accounts.userdb_setting", pgdb).strip() == \
        "20000|29999"
    assert pg.psql("SELECT count(*) FROM accounts.userdb_host", pgdb).strip() == "0"
