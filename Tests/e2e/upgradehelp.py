"""What the rolling-upgrade tests share: the previous release (Scripts/build-previous builds it
from its commit; Scripts/test passes its path in ACCOUNTS_PREVIOUS_BIN), a store it made on the
shared cluster, and its PAM paths (`pam-auth` as pam_exec runs it, `pam-helper` speaking the
module's line protocol on a pipe)."""

import os
import subprocess
from urllib.parse import quote

from conftest import PASSWORD, REPO, USERNAME, Result
from constants import POOLED, program_server

PREVIOUS_BIN = os.environ.get("ACCOUNTS_PREVIOUS_BIN") or str(
    REPO / ".build" / "previous" / "debug" / "accounts")
PREVIOUS_RELEASE = "1.1.0"
RELEASE = "1.2.0"
PAM = {"PAM_USER": USERNAME, "PAM_SERVICE": "sshd", "PAM_RHOST": "203.0.113.9",
       "PAM_TTY": "ssh"}


def previous(client, *args, input=None) -> Result:
    """`accounts ARGS` of the previous release, run by `client` (its files, its store)."""
    assert os.access(PREVIOUS_BIN, os.X_OK), \
        f"the previous release is missing: run Scripts/build-previous ({PREVIOUS_BIN})"
    return client.run(*args, input=input, binary=PREVIOUS_BIN)


def program_uri(pg, database: str, user: str) -> str:
    """The URI the program is given for `database` as `user`: through the pooler in a pooled
    run (pgfleet), as a fleet's hosts reach the server."""
    host, port = program_server(str(pg.socket), str(pg.port))
    uri = f"postgresql://{user}@/{database}?host={host}&port={port}"
    # Behind the pooler every role has a password, in the passfile Scripts/pgbouncer made (the
    # PAM paths start from an empty environment: the URI names it).
    return uri + f"&passfile={quote(os.environ['PGPASSFILE'], safe='')}" if POOLED else uri


def pam_auth(binary, client, database, password=PASSWORD) -> Result:
    """`pam-auth --database URI` with pam_exec's environment, the password on standard input."""
    proc = subprocess.run([binary, "pam-auth", "--database", database],
                          input=password.encode(), capture_output=True,
                          env=dict(PAM, PAM_TYPE="auth"), cwd=str(client.root), timeout=60)
    return Result(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def pam_helper(binary, client, stage, database, answers=()) -> Result:
    """`pam-helper STAGE --database URI` with the module's environment; its questions are
    answered, in order, by `answers` (the replies of the line protocol, given on its standard
    input before it asks: it reads each reply after its question)."""
    proc = subprocess.run([binary, "pam-helper", stage, "--database", database],
                          input="".join(f"{a}\n" for a in answers).encode(),
                          capture_output=True, env=dict(PAM), cwd=str(client.root), timeout=60)
    return Result(proc.returncode, proc.stdout.decode(), proc.stderr.decode())
