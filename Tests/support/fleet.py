"""A fleet's two roles as the suites use them (`accounts store roles`, docs/postgresql.md):
which commands a host may run, so that a test run can give those the host role and every other
command the administrator role, and how the roles are made."""

from __future__ import annotations

# What a fleet host may run: logging people in, their own sessions, password and second factor,
# the PAM paths, the SSH keys sshd asks for, and its own user records (`userdb enable` without
# --uids, which sets the store's range: the administrator's). A bare `accounts` is a host's on an
# activated store (it logs in) and the administrator's on a Public one (it activates): the
# caller decides.
HOST_COMMANDS = frozenset({
    ("status",), ("login",), ("verify",), ("whoami",), ("logout",), ("passwd",), ("2fa",),
    ("pam-auth",), ("pam-helper",), ("userdb", "ssh-authorized-keys"), ("userdb", "enable"),
    ("userdb", "sync"), ("userdb", "status"), ("userdb", "disable")})


def role_sql(role: str) -> str:
    """SQL that makes the login role `role` unless it exists (the suites' workers may race to
    make it: the loser's error says it exists, and is taken as that)."""
    return (f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{role}') "
            f'THEN CREATE ROLE "{role}" LOGIN; END IF; '
            "EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;")


def host_may_run(args) -> bool:
    """Whether the command `args` (without the program's name) is one a host role may run."""
    words = [str(a) for a in args]
    if words[:2] == ["userdb", "enable"] and any(w.startswith("--uids") for w in words):
        return False
    return tuple(words[:1]) in HOST_COMMANDS or tuple(words[:2]) in HOST_COMMANDS
