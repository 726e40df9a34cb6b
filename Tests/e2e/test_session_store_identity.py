"""A session belongs to its store, not to the name it was reached by: another URI of the same
PostgreSQL store (another path to the same SQLite file) keeps it, and the file then records the
name used; a different store is not sent the token, even one that holds a live session with its
hash. In a postgresql run the session file records the store's identity (`store <id>`)."""

import json

from conftest import USERNAME
from sessionhelp import (assert_not_logged_in, logged_in, other_database, read_session_lines,
                         token_hash, whoami)
from stores import PostgresStore, store_execute, store_query


def another_name(device, store) -> str:
    """Another name of `store`: for PostgreSQL the URI with its socket folder, port and role
    written in it (the device's is `postgresql:///name`), for SQLite the path through a link
    to its folder."""
    if isinstance(store, PostgresStore):
        return store.explicit_uri
    link = device.root / ("link-" + store.parent.name)
    if not link.exists():
        link.symlink_to(store.parent, target_is_directory=True)
    return str(link / store.name)


def store_id(store):
    """The identity the store keeps (`userdb_setting.store_id`)."""
    return store_query(store, "SELECT store_id FROM userdb_setting WHERE id = 1")[0][0]


def whoami_json(device, env=None) -> dict:
    result = whoami(device, "--json", env=env)
    assert (result.code, result.stderr) == (0, ""), result
    return json.loads(result.stdout)


def test_another_name_of_the_same_store_keeps_the_session(activated):
    """Logged in through the store's usual URI, then `whoami` through another URI of it: the
    same session, and the file now names that URI (and the same store); back through the first
    URI, still the same session."""
    row = logged_in(activated)
    database, recorded_id, token = read_session_lines(activated.session_file)
    assert database == str(activated.db)
    if activated.postgresql:
        assert recorded_id == store_id(activated.db)
    name = another_name(activated, activated.db)
    env = activated.env(ACCOUNTS_DATABASE=name)

    found = whoami_json(activated, env=env)

    assert (found["username"], found["session"]) == (USERNAME, row["id"])
    if activated.postgresql:
        assert read_session_lines(activated.session_file) == (name, recorded_id, token)
    found = whoami_json(activated)
    assert (found["username"], found["session"]) == (USERNAME, row["id"])
    assert read_session_lines(activated.session_file) == (database, recorded_id, token)


def test_another_name_of_the_same_store_ends_the_session_at_logout(activated):
    """`logout` through another URI of the store ends the session the first one started."""
    row = logged_in(activated)
    env = activated.env(ACCOUNTS_DATABASE=another_name(activated, activated.db))

    result = activated.run("logout", env=env)

    assert (result.code, result.stdout, result.stderr) == (0, "Logged out.\n", ""), result
    assert not activated.session_file.exists()
    assert store_query(activated.db, "SELECT id FROM session WHERE id = ?", row["id"]) == []


def test_another_store_is_not_sent_the_token(activated):
    """A different store reached by a URI of the same shape, holding a live session whose hash
    is the token's: not logged in, the file left as it is (the store was never asked)."""
    logged_in(activated)
    before = activated.session_file.read_bytes()
    _, _, token = read_session_lines(activated.session_file)
    other, env = other_database(activated)
    assert activated.login(env=env).code == 0
    assert store_execute(other, "UPDATE session SET token_hash = ?", token_hash(token)) == 1
    activated.session_file.write_bytes(before)
    env = activated.env(ACCOUNTS_DATABASE=another_name(activated, other))

    assert_not_logged_in(whoami(activated, env=env))

    assert activated.session_file.read_bytes() == before
    assert whoami(activated).code == 0
