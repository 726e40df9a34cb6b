"""pam_accounts.so on a PostgreSQL store: the module's options name the URI and the key file
(the helper reads no PG* variable and no HOME of the caller), a login with the second factor
through pamtester, and the server stopped: PAM_AUTHINFO_UNAVAIL at once, no password asked;
started again, the code used before the stop is refused as replayed: what was
acknowledged survived."""

import time

import pyotp
import pytest

from conftest import PASSWORD
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


def test_a_login_on_postgresql_and_the_server_stopped(own, tmp_path):
    own.ensure_running()
    database = own.create_database("pam")
    client = Client(tmp_path / "c", own.uri(database))
    activate(client)
    enrollment = enable(client)
    assert enrollment.result.code == 0, enrollment.result
    # The step after the one that turned the factor on (within the window a code is taken in).
    code = pyotp.TOTP(enrollment.key).at(time.time() + 30)
    lines = [f"auth required {module()} database={own.uri(database)} "
             f"key_file={client.pg_key_file} timeout=300",
             f"account required {module()} database={own.uri(database)} timeout=300"]
    try:
        with scratch_service(lines) as name:
            right = pamtester(name, operations=("authenticate", "acct_mgmt"),
                              answers=[(PASSWORD_PROMPT, PASSWORD), (CODE_PROMPT, code)])
            own.stop_server()
            stopped = pamtester(name)
            own.ensure_running()
            replayed = pamtester(name, answers=[(PASSWORD_PROMPT, PASSWORD), (CODE_PROMPT, code)])
    finally:
        own.ensure_running()
        own.drop_database(database)
    assert succeeded(right) and succeeded(right, "acct_mgmt"), right
    assert failure_line(PAM_CODES["PAM_AUTHINFO_UNAVAIL"]) in stopped.output, stopped
    assert PASSWORD_PROMPT not in stopped.output, stopped
    assert replayed.code == 1, replayed
    assert failure_line(PAM_CODES["PAM_AUTH_ERR"]) in replayed.output, replayed
