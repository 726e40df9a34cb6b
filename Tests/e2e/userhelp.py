"""What the `accounts user ...` tests share: the exit code for an unknown account, bob's
welcome, the log's event kinds, a device made Public again, and locking an account."""

from conftest import BOB_FULL_NAME, WRONG_PASSWORD


NO_SUCH = 5
BOB_WELCOME = f"Welcome back {BOB_FULL_NAME}!\n"


def kinds(device):
    return [e["event"] for e in device.events()]


def public_again(device):
    """An activated device reset to Public: the database exists and holds no account."""
    device.activate()
    assert device.run("reset", "--yes").code == 0
    return device


def lock(device, name, password=WRONG_PASSWORD):
    results = [device.login(name, password) for _ in range(5)]
    assert [r.code for r in results] == [1, 1, 1, 1, 4]
