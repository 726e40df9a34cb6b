"""What the tests of pam_accounts.so with the real program share: the module built for the
release program, service files for a device's store, and the answers a person types.

- `module() -> Path`: pam_accounts.so whose helper is the program under test (`BIN`).
- `options(device, *extra, timeout=300) -> list[str]`: the module's options for the device's
  store (`database=`, for PostgreSQL `key_file=`), a timeout no busy machine reaches (the tests
  of the limit set theirs), and `extra`.
- `lines(device, auth=(), account=(), password=(), session=(), timeout=300) -> list[str]`: one
  line per group whose options are given (a tuple of extra options, or None for none of that
  group), the module `required`.
- `service(device, **groups)`: `scratch_service(lines(device, **groups))`.
- `shared_stack(device, module_options=None) -> list[str]`: /etc/pam.d/accounts-stack of
  docs/pam.md for the device's store (`options(device)`), or with the module's options
  `module_options` (a list) instead: pam_unix first for the system's own users, then the module
  (auth with use_first_pass).
- `sshd_service(device, module_options=None) -> context manager yielding the service name`:
  docs/pam.md's sshd service, a scratch stack file (`shared_stack`) and a scratch service that
  makes the home directory (pam_mkhomedir) and includes the stack.
- `su_stack(device) -> context manager`: /etc/pam.d/su-l as docs/pam.md shows it for the device's
  store (pam_rootok, then `shared_stack`), put back after (`pammodule.replaced_service`).
- `su(name, prefix=()) -> pexpect.spawn`: `su - NAME -c 'echo "I am $(id -un)"'` run by nobody
  at a pseudo-terminal, `prefix` (e.g. a prlimit command) before it; the shell says who it runs
  as (`I am NAME`).
- `events(device) -> list[(event, user, detail)]`.
- `typed(*pairs)`: the (prompt, answer) pairs, for `pammodule.pamtester(answers=...)`.
"""

import contextlib
import io
import os

import pexpect

from conftest import BIN, NOBODY_UID
from pammodule import build_module, replaced_service, scratch_service

PASSWORD_PROMPT = "Password: "
CODE_PROMPT = "Verification code: "
ITEMS = {"rhost": "198.51.100.7", "tty": "pts/3"}


def module():
    return build_module(os.path.abspath(BIN))


def options(device, *extra, timeout=300) -> list:
    store = device.pam_store_args()
    found = [f"database={store[1]}"]
    if "--key-file" in store:
        found.append(f"key_file={store[store.index('--key-file') + 1]}")
    return [*found, f"timeout={timeout}", *extra]


def lines(device, auth=(), account=None, password=None, session=None, timeout=300) -> list:
    groups = {"auth": auth, "account": account, "password": password, "session": session}
    return [" ".join([group, "required", str(module()), *options(device, *extra,
                                                                  timeout=timeout)])
            for group, extra in groups.items() if extra is not None]


def service(device, **groups):
    return scratch_service(lines(device, **groups))


def shared_stack(device, module_options=None) -> list:
    if module_options is None:
        module_options = options(device)
    module_options = " ".join([str(module()), *module_options])
    return [
        "auth     [success=done default=ignore]                  pam_unix.so nullok",
        f"auth     required                                       {module_options} use_first_pass",
        f"account  [success=ok user_unknown=ignore default=bad]   {module_options}",
        "account  required                                       pam_unix.so",
        f"password [success=done user_unknown=ignore default=die] {module_options}",
        "password required                                       pam_unix.so obscure yescrypt",
        "session  required                                       pam_unix.so",
        f"session  optional                                       {module_options}",
    ]


@contextlib.contextmanager
def sshd_service(device, module_options=None):
    with scratch_service(shared_stack(device, module_options)) as stack:
        with scratch_service(["session  required  pam_mkhomedir.so skel=/etc/skel umask=0077",
                              f"@include {stack}"]) as name:
            yield name


def su_stack(device):
    return replaced_service("su-l", ["auth     sufficient pam_rootok.so", *shared_stack(device)])


def su(name, prefix=()) -> pexpect.spawn:
    command = [*prefix, "setpriv", f"--reuid={NOBODY_UID}", f"--regid={NOBODY_UID}",
               "--clear-groups", "su", "-", name, "-c", 'echo "I am $(id -un)"']
    child = pexpect.spawn(command[0], command[1:], encoding="utf-8", timeout=60,
                          env={"PATH": os.environ["PATH"], "TERM": "dumb"}, cwd="/")
    child.logfile_read = io.StringIO()
    return child


def events(device) -> list:
    return [(e["event"], e["user"], e["detail"]) for e in device.events()]


def where(service_name) -> str:
    return f"pam service={service_name} rhost={ITEMS['rhost']} tty={ITEMS['tty']}"
