"""What an authenticator app's entry is called: `accounts:NAME@DOMAIN`. On a shared
(PostgreSQL) store DOMAIN is its database's name as the server calls it, the same whichever host
the person enrolled on and whichever URI or pooler that host reaches the store through; on a
device's own store it is the device (its host name, `ACCOUNTS_HOST_NAME` when set)."""

import socket
import urllib.parse

import pytest

from secondfactor import enable

pytestmark = pytest.mark.front_end


def label(uri: str) -> str:
    return urllib.parse.unquote(uri.split("?")[0].removeprefix("otpauth://totp/"))


@pytest.mark.parametrize("host", ["ft-a", "ft-b"])
def test_the_entry_names_the_store_on_a_fleet_and_the_device_alone(activated, host):
    enrollment = enable(activated, env={**activated.env(), "ACCOUNTS_HOST_NAME": host})
    assert enrollment.result.code == 0, enrollment.result
    uri = next(line[len("URI: "):] for line in enrollment.result.out_lines
               if line.startswith("URI: "))
    domain = activated.db.name if activated.postgresql else host
    assert label(uri) == f"accounts:alice@{domain}"
    if activated.postgresql:
        assert host not in label(uri) and socket.gethostname() not in label(uri)
