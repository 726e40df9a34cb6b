"""pam_accounts.so with `login_cache=PATH` on a PostgreSQL store: an online authentication
refreshes the cache, and with the server stopped pamtester's authenticate and acct_mgmt pass from
it for a cached person with the password (and the code); a wrong password is PAM_AUTH_ERR, a
person the cache cannot answer for is PAM_AUTHINFO_UNAVAIL, as without a cache, the password
never called wrong.

Oracles: pamtester's lines and exit codes (libpam's own strings), sqlite3 reading the cache."""

import sqlite3
import time

import pyotp
import pytest

from conftest import PASSWORD, USERNAME, WRONG_PASSWORD
from pammodule import PAM_CODES, failure_line, pamtester, scratch_service, succeeded
from pamstack import CODE_PROMPT, PASSWORD_PROMPT, module
from pgcluster import Client, Cluster, activate
from secondfactor import enable

pytestmark = [pytest.mark.front_end, pytest.mark.postgresql_only]


@pytest.fixture(scope="module")
def own(request):
    """A private cluster that the test stops, removed after."""
    cluster = Cluster.start(durable=True)
    request.addfinalizer(cluster.remove)
    return cluster


def test_the_module_logs_in_from_the_cache_while_the_server_is_stopped(own, tmp_path):
    own.ensure_running()
    database = own.create_database("pamcache")
    cache = tmp_path / "cache" / "login-cache.sqlite3"
    client = Client(tmp_path / "c", own.uri(database))
    client.settings["ACCOUNTS_LOGIN_CACHE"] = str(cache)
    activate(client)
    assert client.run("store", "cache", "enable").code == 0
    options = (f"database={own.uri(database)} key_file={client.pg_key_file} "
               f"login_cache={cache} timeout=300")
    lines = [f"auth required {module()} {options}", f"account required {module()} {options}"]
    both = ("authenticate", "acct_mgmt")
    try:
        with scratch_service(lines) as name:
            online = pamtester(name, operations=both, answers=[(PASSWORD_PROMPT, PASSWORD)])
            with sqlite3.connect(cache) as db:
                cached = db.execute("SELECT username FROM cached_login").fetchall()
            own.stop_server()
            offline = pamtester(name, operations=both, answers=[(PASSWORD_PROMPT, PASSWORD)])
            wrong = pamtester(name, answers=[(PASSWORD_PROMPT, WRONG_PASSWORD)])
            stranger = pamtester(name, user="nobody-here",
                                 answers=[(PASSWORD_PROMPT, PASSWORD)])
    finally:
        own.ensure_running()
        own.drop_database(database)
    assert succeeded(online) and succeeded(online, "acct_mgmt"), online
    assert cached == [(USERNAME,)]
    assert succeeded(offline) and succeeded(offline, "acct_mgmt"), offline
    assert wrong.code == 1 and failure_line(PAM_CODES["PAM_AUTH_ERR"]) in wrong.output, wrong
    assert failure_line(PAM_CODES["PAM_AUTHINFO_UNAVAIL"]) in stranger.output, stranger


def test_the_code_is_still_asked_from_the_cache(own, tmp_path):
    own.ensure_running()
    database = own.create_database("pamcode")
    cache = tmp_path / "cache" / "login-cache.sqlite3"
    client = Client(tmp_path / "c", own.uri(database))
    client.settings["ACCOUNTS_LOGIN_CACHE"] = str(cache)
    activate(client)
    enrollment = enable(client)
    assert enrollment.result.code == 0, enrollment.result
    assert client.run("store", "cache", "enable").code == 0
    totp = pyotp.TOTP(enrollment.key)
    lines = [f"auth required {module()} database={own.uri(database)} "
             f"key_file={client.pg_key_file} login_cache={cache} timeout=300"]
    try:
        with scratch_service(lines) as name:
            online = pamtester(name, answers=[(PASSWORD_PROMPT, PASSWORD),
                                              (CODE_PROMPT, totp.at(time.time() + 30))])
            own.stop_server()
            # The entry's last step moved back, as if the online login was minutes ago.
            with sqlite3.connect(cache) as db:
                db.execute("UPDATE cached_login SET last_step = last_step - 10")
            code = totp.now()
            offline = pamtester(name, answers=[(PASSWORD_PROMPT, PASSWORD), (CODE_PROMPT, code)])
            replayed = pamtester(name, answers=[(PASSWORD_PROMPT, PASSWORD), (CODE_PROMPT, code)])
    finally:
        own.ensure_running()
        own.drop_database(database)
    assert succeeded(online), online
    assert succeeded(offline), offline
    assert replayed.code == 1, replayed
    assert failure_line(PAM_CODES["PAM_AUTH_ERR"]) in replayed.output, replayed
