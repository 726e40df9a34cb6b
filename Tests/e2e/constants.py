"""What the end-to-end tests share as plain values: the binary under test and the store it is
given (ACCOUNTS_BIN, ACCOUNTS_TEST_BACKEND), the sample accounts, the sentences the program
prints, and the OS user `nobody` for the cases root's permissions would not stop."""

from __future__ import annotations

import os
import pathlib
import shutil
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("ACCOUNTS_BIN") or str(REPO / ".build" / "release" / "accounts")

BACKEND = os.environ.get("ACCOUNTS_TEST_BACKEND", "sqlite")
assert BACKEND in ("sqlite", "postgresql", "pgbouncer", "pgroles", "pgfleet"), \
    "ACCOUNTS_TEST_BACKEND must be sqlite, postgresql, pgbouncer, pgroles or pgfleet, " \
    f"not {BACKEND!r}"
# `pgbouncer`: the postgresql run's tests, with the program reaching the cluster through
# PgBouncer in transaction pooling mode (Scripts/pgbouncer; ACCOUNTS_TEST_POOLER_HOST and _PORT
# name its socket), while the tests' own look at the database (psycopg) goes to the cluster.
# `pgroles`: the postgresql run's tests, with the program connecting as the roles
# `accounts store roles` makes for a fleet: the commands a host may run as the host role, the
# other commands as the administrator role, and the owner only where the schema is made or
# upgraded (stores.py, device.py).
# `pgfleet`: both at once, as a fleet runs: the roles' commands (and the owner's) reach the
# cluster through PgBouncer, which must let the roles in (Scripts/pgbouncer start DIR PGDIR
# accounts_e2e_admin accounts_e2e_host: each role, the owner too, a password of its own in the
# passfile PGPASSFILE names, as docs/fleet.md's pooler checks). Scripts/test runs this one pass
# for the two.
POSTGRESQL = BACKEND in ("postgresql", "pgbouncer", "pgroles", "pgfleet")
POOLED = BACKEND in ("pgbouncer", "pgfleet")
ROLES = BACKEND in ("pgroles", "pgfleet")
POOLER = (os.environ.get("ACCOUNTS_TEST_POOLER_HOST", ""),
          os.environ.get("ACCOUNTS_TEST_POOLER_PORT", ""))
assert not POOLED or all(POOLER), \
    f"ACCOUNTS_TEST_BACKEND={BACKEND} needs ACCOUNTS_TEST_POOLER_HOST and _PORT " \
    "(Scripts/pgbouncer env)"


def program_server(host: str, port: str) -> tuple[str, str]:
    """The socket folder and port the program is given for the cluster at `host`:`port`: the
    pooler's in a pooled run."""
    return POOLER if POOLED else (host, port)

FAST_ITERATIONS = "1000"
DEFAULT_ITERATIONS = 1_200_000

USERNAME = "alice"
FULL_NAME = "Alice Liddell"
EMAIL = "alice@example.org"
PASSWORD = "correct horse battery staple"
WRONG_PASSWORD = "incorrect donkey battery staple"

INVALID = "Invalid user name or password!"
TOO_MANY = "Too many failed attempts"
NOT_ACTIVATED = "This device is not activated yet. Run `accounts activate` to activate it."
INPUT_ENDED = "Input ended before all fields were given; nothing was stored."

# A second account, and the sentences of the form every account command shares.
BOB = "bob"
BOB_FULL_NAME = "Bob Builder"
BOB_EMAIL = "bob@example.org"
BOB_PASSWORD = "can we fix it yes we can"
NEW_PASSWORD = "tangerine submarine orchestra 93"
FILL = "Please fill all fields!"
MATCH = "Passwords must match!"
SHORT = "Password must be at least 15 characters!"
PERSONAL = "Password must not be your user name, full name or e-mail address!"
USERNAME_RULE = "User name must be 1 to 64 letters, digits, '.', '_' or '-'!"
EMAIL_RULE = "E-mail address must look like name@example.org, with no spaces!"


AS_ROOT = os.geteuid() == 0
# A second OS user: as root, permissions do not stop root, so such cases run as `nobody`.
NOBODY_UID = 65534
NOBODY = ["setpriv", f"--reuid={NOBODY_UID}", f"--regid={NOBODY_UID}", "--clear-groups"] \
    if AS_ROOT else []
_NOBODY_BIN = []


def nobody_binary():
    """A copy of the binary that `nobody` can run, whatever the checkout's permissions."""
    if not _NOBODY_BIN:
        folder = tempfile.mkdtemp(prefix="accounts-bin-", dir="/tmp")
        os.chmod(folder, 0o755)
        copy = os.path.join(folder, "accounts")
        shutil.copy2(BIN, copy)
        os.chmod(copy, 0o755)
        _NOBODY_BIN.append(copy)
    return _NOBODY_BIN[0]

