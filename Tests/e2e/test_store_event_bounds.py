"""An event's text is bounded whoever writes it (PostgreSQL migration v22). A host role writes
events through its steps with the user name and detail it sends; a host taken over could send a
gigabyte with each. The store keeps at most 4,096 characters of detail and 256 of user name, the
rest cut and marked `…`, whatever step or statement inserts the row.

Oracles: psql as the host role (a step called with what a program never sends) and as the
owner (a row inserted by hand), the rows psql reads back, and `accounts log --json`."""

import json

import pytest

from pgcluster import activate
from pgcluster import client, pg, pgdb, roles  # noqa: F401

pytestmark = pytest.mark.postgresql_only


def test_a_host_roles_step_keeps_the_first_4096_characters_of_a_detail(pg, pgdb, client, roles):
    """pam_session_event as the host role with 100,000 characters of detail: one event, its
    detail the first 4,095 and `…`; `log --json` shows that."""
    _, host = roles
    sent = "ab" * 50_000
    called = f"SELECT accounts.pam_session_event('alice', 1, true, now(), 100, '{sent}', 'kiosk')"
    assert pg.psql(called, pgdb, user=host).strip() == "t"
    rows = pg.json_rows("SELECT char_length(detail) AS n, detail FROM accounts.audit_event "
                        "WHERE kind = 'pam_session_opened'", pgdb)
    assert rows == [{"n": 4096, "detail": sent[:4095] + "…"}]
    logged = client.run("log", "--event", "pam_session_opened", "--json")
    assert [json.loads(line)["detail"] for line in logged.out_lines] == [sent[:4095] + "…"]


def test_a_row_inserted_by_hand_is_bounded_too(pg, pgdb, client):
    """The owner's own INSERT of a 300-character user name and key and a 5,000-character detail:
    256 of each name, 4,096 of detail, each cut marked; a row within the bounds is kept as
    written, to the character."""
    activate(client)
    name, detail = "n" * 300, "é" * 5000
    pg.psql("INSERT INTO accounts.audit_event (occurred_at, kind, username, username_key, detail) "
            f"VALUES (now(), 'account_edited', '{name}', '{name}', '{detail}'), "
            f"(now(), 'account_edited', '{name[:256]}', 'x', '{detail[:4096]}')", pgdb)
    rows = pg.json_rows("SELECT username, username_key, detail FROM accounts.audit_event "
                        "WHERE kind = 'account_edited' ORDER BY id", pgdb)
    assert rows == [
        {"username": name[:255] + "…", "username_key": name[:255] + "…",
         "detail": detail[:4095] + "…"},
        {"username": name[:256], "username_key": "x", "detail": detail[:4096]}]
