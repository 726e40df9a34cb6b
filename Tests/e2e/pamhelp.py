"""What the pam-auth tests share: pam_exec's environment and items, one direct run of
`accounts pam-auth --database PATH` the way pam_exec runs it (PAM_* in the environment, the
password on standard input), and what the store says after it.

pam_exec passes no HOME, PATH or ACCOUNTS_* to the program: only PAM_USER, PAM_SERVICE,
PAM_RHOST, PAM_TTY, PAM_TYPE (those set), so the direct runs use exactly that environment, plus
whatever setting a test shows is ignored."""

import subprocess

import pyotp

from conftest import BIN, PASSWORD, USERNAME, Result, changed_env

SERVICE, RHOST, TTY = "sshd", "203.0.113.9", "ssh"
PAM_ENV = {"PAM_USER": USERNAME, "PAM_SERVICE": SERVICE, "PAM_RHOST": RHOST, "PAM_TTY": TTY,
           "PAM_TYPE": "auth"}
WHERE = f"pam service={SERVICE} rhost={RHOST} tty={TTY}"
INVALID_DETAIL = "invalid user name or password"
GUESS = "not the password, but long enough"


# Direct runs, the way pam_exec runs the program.

def pam_env(user=USERNAME, **changes) -> dict:
    """The environment pam_exec gives the program, with `changes` (None removes a variable)."""
    return changed_env(dict(PAM_ENV, PAM_USER=user), changes)


def pam_auth(device, password=PASSWORD, user=USERNAME, ending=b"", env=None, args=None,
             stdin=None, timeout=60) -> Result:
    """`accounts pam-auth --database DB` with pam_exec's environment and the password (then
    `ending`) on standard input; `stdin` (bytes) replaces the whole input when given."""
    data = stdin if stdin is not None else password.encode("utf-8") + ending
    args = ["pam-auth", *device.pam_args()] if args is None else args
    proc = subprocess.run([BIN, *args], input=data, capture_output=True,
                          env=env if env is not None else pam_env(user), cwd=str(device.root),
                          timeout=timeout)
    return Result(proc.returncode, proc.stdout.decode("utf-8", "replace"),
                  proc.stderr.decode("utf-8", "replace"))


def silent(result) -> int:
    """The exit code, after checking that nothing was printed on stdout or stderr."""
    assert (result.stdout, result.stderr) == ("", ""), result
    return result.code


def events(device) -> list:
    return [(e["event"], e["user"], e["detail"]) for e in device.events()]


def failures(device, name=USERNAME) -> int:
    return device.account(name)["failures"]


def iterations(stored_hash: str) -> int:
    algorithm, count, _salt, _key = stored_hash.split("$")
    assert algorithm == "pbkdf2_sha256", stored_hash
    return int(count)


def sessions(device) -> int:
    return device.query("SELECT count(*) FROM session")[0][0]


def totp(enrollment) -> str:
    return pyotp.TOTP(enrollment.key).now()
