"""docs/fleet.md as a test reads it: its `sh` blocks (each command typed into a root shell, as
test_readme.py types README's) and its configuration blocks (a `text` block whose first line
names the file, `# /etc/…`), with the example's names turned into the test's own (`Fleet.own`):
`db.example.org` is `localhost`, the addresses `127.0.0.1/32`, the ports and folders free ones
of the test, `sudo -u postgres` is `runuser -u postgres --`, and the lines that install or
restart a service are done the test's way (`Fleet.service`)."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess

import pexpect

from constants import BIN, FULL_NAME, PASSWORD
from docblocks import commands, fenced
from pgserver import Server, bindir
from sshd import free_port

PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "fleet.md"
PROMPT = re.compile(r"__rc=(\d+)__# ")
OWNER = "alice"
HOST_ROLE = "accounts_host_kiosk-1"


def blocks() -> list:
    """(fence language, body lines) of each fenced block of the page, in order."""
    return [(language, body) for language, _, body in fenced(PAGE.read_text().splitlines())]


def passwords(path: pathlib.Path) -> dict:
    """The role → password lines of a libpq password file."""
    if not path.exists():
        return {}
    return {fields[3]: fields[4] for fields in
            (line.split(":") for line in path.read_text().splitlines()) if len(fields) == 5}


class Fleet:
    """The test's server (a cluster of Scripts/postgres whose settings the page's blocks
    replace), its folders standing in for the page's, and the root shell the page is typed
    into."""

    def __init__(self, tmp: pathlib.Path):
        self.server = Server.start(prefix="accounts-fleet-")
        self.tmp = tmp
        # The folders stand in for the page's: the server reads some (the postgres user), so
        # every one of them is open to traversal.
        self.home, self.tls, self.etc, self.bouncer, self.bin = (
            tmp / name for name in ("home", "tls", "etc", "pgbouncer", "bin"))
        for folder in (self.home, self.bin, self.bouncer):
            folder.mkdir(mode=0o755)
        os.chmod(tmp, 0o755)
        subprocess.run(["chown", "postgres:", str(self.bouncer)], check=True)
        (self.bin / "accounts").symlink_to(BIN)
        self.pooler_port = free_port()
        self.printed = []

    def own(self, text: str) -> str:
        text = text.replace("db.example.org", "localhost")
        text = re.sub(r"192\.0\.2\.\d+/\d+", "127.0.0.1/32", text)
        text = re.sub(r"\b5432\b", str(self.server.port), text)
        text = re.sub(r"\b6432\b", str(self.pooler_port), text)
        text = text.replace("listen_addresses = '*'", "listen_addresses = '127.0.0.1'")
        text = text.replace("listen_addr = *", "listen_addr = 127.0.0.1")
        text = text.replace("/etc/postgresql/tls", str(self.tls))
        text = text.replace("/etc/accounts", str(self.etc))
        text = text.replace("/etc/pgbouncer", str(self.bouncer))
        text = text.replace("/var/run/postgresql", str(self.server.socket))
        text = text.replace("/var/log/postgresql", str(self.server.dir))
        return text.replace("sudo -u postgres ", "runuser -u postgres -- ")

    def service(self, command: str) -> str:
        """The test's way to do what `systemctl` does on the page."""
        as_postgres = "runuser -u postgres -- "
        if command == "systemctl restart postgresql":
            return (f"{as_postgres}{bindir() / 'pg_ctl'} -D {self.server.dir / 'data'} -l "
                    f"{self.server.dir / 'server.log'} -w -t 60 restart >/dev/null")
        if command == "systemctl restart pgbouncer":
            # Ready once its port answers (pgbouncer -d returns when it has daemonised).
            return (f"{as_postgres}pgbouncer -d {self.bouncer / 'pgbouncer.ini'} && for _ in "
                    f"$(seq 200); do (: <>/dev/tcp/127.0.0.1/{self.pooler_port}) 2>/dev/null "
                    "&& break; sleep 0.05; done")
        return command

    def configure(self, lines: list) -> None:
        """A configuration block written where the test's server and pooler read it: the
        server's settings after Scripts/postgres's (the later line wins), its pg_hba.conf and
        PgBouncer's file replaced."""
        target, text = lines[0].removeprefix("# "), self.own("\n".join(lines[1:]) + "\n")
        data = self.server.dir / "data"
        if target.endswith("/conf.d/accounts.conf"):
            with open(data / "postgresql.conf", "a") as conf:
                conf.write(text)
        elif target.endswith("/pg_hba.conf"):
            (data / "pg_hba.conf").write_text(text)
        elif target == "/etc/pgbouncer/pgbouncer.ini":
            (self.bouncer / "pgbouncer.ini").write_text(text)
        else:
            raise AssertionError(f"docs/fleet.md: a block for {target}, which the test "
                                 "does not know")

    def shell(self) -> pexpect.spawn:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("ACCOUNTS_", "PG"))}
        env.update(HOME=str(self.home), PATH=f"{self.bin}:{env['PATH']}", TERM="dumb",
                   LC_ALL="C.UTF-8", PGHOST=str(self.server.socket),
                   PGPORT=str(self.server.port), ACCOUNTS_PBKDF2_ITERATIONS="1000")
        shell = pexpect.spawn("bash", ["--noprofile", "--norc", "--noediting"],
                              cwd=str(self.tmp), env=env, encoding="utf-8", timeout=120,
                              dimensions=(60, 400))
        shell.sendline("PS1='__rc=$?__# '; PS2=''")
        shell.expect(PROMPT)
        return shell

    def answers(self, command: str) -> list:
        """The (prompt, answer) pairs a person types for `command`."""
        if command.endswith(" activate"):
            return [("User name: ", OWNER), ("Full name: ", FULL_NAME),
                    ("E-mail address: ", "alice@example.org"), ("Password: ", PASSWORD),
                    ("Password again: ", PASSWORD)]
        typed = re.search(r"\\password \"?([\w-]+)", command)
        if typed:
            role = typed.group(1)
            secret = {**passwords(self.home / ".pgpass"), **self.host_passwords()}[role]
            return [(f'Enter new password for user "{role}": ', secret),
                    ("Enter it again: ", secret)]
        return []

    def host_passwords(self) -> dict:
        return passwords(self.etc / "pgpass")

    def typed(self, shell: pexpect.spawn, command: str) -> str:
        """`command` typed with its answers; what it printed (exit 0 asserted)."""
        shell.sendline(command)
        printed = ""
        for question, answer in self.answers(command):
            shell.expect_exact(question)
            printed += shell.before + shell.after
            shell.sendline(answer)
        shell.expect(PROMPT)
        printed += shell.before
        assert shell.match.group(1) == "0", f"{command!r} failed:\n{printed}"
        return printed

    def follow_page(self) -> None:
        """Every block of the page in order: `sh` commands typed, configuration written."""
        shell = self.shell()
        try:
            for language, lines in blocks():
                if language == "sh":
                    for command in commands(lines):
                        typed = self.service(self.own(command))
                        self.printed.append((command, self.typed(shell, typed)))
                elif lines and lines[0].startswith("# /etc/"):
                    self.configure(lines)
        finally:
            shell.sendline("exit")
            shell.expect(pexpect.EOF)

    def host_uri(self, port: int, **changes: str) -> str:
        """The host's URI as the page writes it (to the server's port or the pooler's), with
        `changes` to its parameters."""
        params = {"sslmode": "verify-full", "sslrootcert": str(self.etc / "ca.crt"),
                  "passfile": str(self.etc / "pgpass"), **changes}
        query = "&".join(f"{key}={value}" for key, value in params.items())
        return f"postgresql://{HOST_ROLE}@localhost:{port}/accounts?{query}"

    def stop_server(self) -> None:
        """The server stopped (fast: its clients, PgBouncer's connections, are ended)."""
        subprocess.run(["runuser", "-u", "postgres", "--", str(bindir() / "pg_ctl"), "-D",
                        str(self.server.dir / "data"), "-m", "fast", "-w", "stop"],
                       check=True, capture_output=True)

    def remove(self) -> None:
        pid = self.server.socket / "pgbouncer.pid"
        if pid.exists():
            subprocess.run(["kill", pid.read_text().strip()], check=False)
        self.server.remove()
