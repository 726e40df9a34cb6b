"""What the login cache's tests share: a host whose cache is on (`CacheHost`, over a device of
the postgresql run, its cache file in the test's folder), the entry read back by sqlite3, and the
verifier and sealing key computed here as the program should (PBKDF2-SHA256, then HKDF-Expand
under two labels), the oracle the entries are checked against."""

import hashlib
import hmac
import pathlib
import sqlite3

from conftest import PASSWORD, USERNAME

ENTRY_COLUMNS = ["account_id", "username", "username_key", "full_name", "uid", "groups",
                 "disabled", "expires_at", "must_change", "iterations", "salt", "verifier",
                 "sealed_secret", "last_step", "refreshed_at"]


def derived(password: str, salt: bytes, iterations: int, label: bytes) -> bytes:
    master = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, iterations)
    return hmac.new(master, label + b"\x01", hashlib.sha256).digest()


def verifier(password: str, salt: bytes, iterations: int) -> bytes:
    return derived(password, salt, iterations, b"accounts offline verifier")


def sealing_key(password: str, salt: bytes, iterations: int) -> bytes:
    return derived(password, salt, iterations, b"accounts offline sealing key")


class CacheHost:
    """A device whose commands name its login cache (ACCOUNTS_LOGIN_CACHE; pam-auth's
    --login-cache)."""

    def __init__(self, device):
        self.device = device
        self.path = pathlib.Path(device.root) / "cache" / "login-cache.sqlite3"

    def env(self, **extra) -> dict:
        return self.device.env(ACCOUNTS_LOGIN_CACHE=str(self.path), **extra)

    def run(self, *args, **kwargs):
        kwargs.setdefault("env", self.env())
        return self.device.run(*args, **kwargs)

    def away(self, **extra) -> dict:
        """The environment of a command whose server is away (the socket folder empty)."""
        return self.env(ACCOUNTS_DATABASE=self.away_uri, **extra)

    @property
    def away_uri(self) -> str:
        return away_uri(pathlib.Path(self.device.root) / "no-server")

    def enable(self, *args):
        result = self.run("store", "cache", "enable", *args)
        assert (result.code, result.stderr) == (0, ""), result
        return result

    def login(self, username=USERNAME, password=PASSWORD, code=None, env=None):
        lines = [username, password] + ([code] if code is not None else [])
        return self.run("login", input="".join(line + "\n" for line in lines),
                        env=env or self.env())

    def offline_login(self, username=USERNAME, password=PASSWORD, code=None):
        return self.login(username, password, code, env=self.away())

    def thirty_seconds_later(self):
        """Moves the cache's "server away" mark into the past, as 30 seconds passing would: the
        next login tries the server again."""
        with sqlite3.connect(self.path) as db:
            db.execute("UPDATE cache_setting SET unreachable_until = '2000-01-01T00:00:00.000Z'")

    def queued(self) -> list:
        """The queued events' (kind, user name, detail), oldest first."""
        with sqlite3.connect(self.path) as db:
            return db.execute("SELECT kind, username, detail FROM queued_event "
                              "ORDER BY at, rowid").fetchall()

    def entry(self, username=USERNAME):
        """The entry of `username` as a dict, or None."""
        with sqlite3.connect(self.path) as db:
            row = db.execute(f"SELECT {', '.join(ENTRY_COLUMNS)} FROM cached_login "
                             "WHERE username_key = ?", (username.lower(),)).fetchone()
            if row is None:
                return None
            entry = dict(zip(ENTRY_COLUMNS, row))
            entry["codes"] = [r[0] for r in db.execute(
                "SELECT hash FROM cached_recovery_code WHERE username_key = ?",
                (username.lower(),))]
            return entry

    def file_bytes(self) -> bytes:
        """The cache file and any companion SQLite left beside it."""
        return b"".join(p.read_bytes() for p in self.path.parent.iterdir() if p.is_file())


def away_uri(folder: pathlib.Path) -> str:
    """A store URI whose socket folder has nothing listening: a server that is away."""
    folder.mkdir(exist_ok=True)
    return f"postgresql:///accounts?host={folder}"


def server_away(location: str) -> str:
    return (f"The server of {location} cannot be reached, and this host cannot log you in "
            "without it; try again when it is back.")
